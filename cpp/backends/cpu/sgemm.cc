// oneDNN's dnnl_sgemm is row-major, which matches our tensors (see sgemm.h).
#include "backends/cpu/sgemm.h"

#include <oneapi/dnnl/dnnl.h>

#include <string>

#include "backends/cpu/onednn_context.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

void sgemm_row_major(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  onednn::apply_isa_ceiling_once();
  const dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  if (status != dnnl_success) {
    throw_error(ErrorCode::kInternal, "MatMul",
                "oneDNN dnnl_sgemm failed with status " + std::to_string(static_cast<int>(status)));
  }
}

}  // namespace gpuaccel::cpu
