// See gradient_all_reduce.h.
#include "distribute/gradient_all_reduce.h"

#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"
#include "profiler/profiler.h"

namespace gpuaccel::distribute {

void all_reduce_gradients(Collective& collective, std::vector<Tensor>& grads,
                          const std::vector<Tensor>& params, double weight) {
  grads.resize(params.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) {
      grads[i] = zeros(params[i].shape(), params[i].dtype(), params[i].device());
    } else if (weight != 1.0) {
      grads[i] = mul(grads[i], scalar_like(weight, grads[i]));  // a new, contiguous tensor
    } else if (!grads[i].is_contiguous()) {
      grads[i] = contiguous(grads[i]);
    }
  }
  profiler::TraceScope scope(profiler::EventKind::kCollective, "AllReduce");
  collective.all_reduce_sum(grads);
  for (const Tensor& g : grads) g.bump_version();  // written in place
}

}  // namespace gpuaccel::distribute
