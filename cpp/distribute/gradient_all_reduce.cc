// See gradient_all_reduce.h.
#include "distribute/gradient_all_reduce.h"

#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"
#include "profiler/profiler.h"

namespace gpuaccel::distribute {

Tensor weighted_gradient(const Tensor& grad, const Tensor& param, double weight, bool fresh) {
  if (!grad.defined()) return zeros(param.shape(), param.dtype(), param.device());
  if (weight != 1.0) return mul(grad, scalar_like(weight, grad));  // a new, contiguous tensor
  if (fresh) return clone(grad);
  return grad.is_contiguous() ? grad : contiguous(grad);
}

void all_reduce_gradients(Collective& collective, std::vector<Tensor>& grads,
                          const std::vector<Tensor>& params, double weight) {
  grads.resize(params.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    grads[i] = weighted_gradient(grads[i], params[i], weight, /*fresh=*/false);
  }
  profiler::TraceScope scope(profiler::EventKind::kCollective, kAllReduceTraceName);
  collective.all_reduce_sum(grads);
  for (const Tensor& g : grads) g.bump_version();  // written in place
}

}  // namespace gpuaccel::distribute
