// The CPU loop of backends/cpu/nonfinite_check.h: each tensor's raw bits through the shared
// NonFiniteFunctor, split across the OpenMP team when the tensor is large enough to pay for it.
#include "backends/cpu/nonfinite_check.h"

#include <cstdint>
#include <string>

#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"
#include "kernels/nonfinite_functor.h"

namespace gpuaccel::cpu {
namespace {

template <typename Bits>
bool any_in(const Bits* bits, int64_t n, kernels::NonFiniteFunctor f) {
  int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n >= kParallelMinElements)
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (sizeof(Bits) == 8) {
      bad += f.float64_element(bits[i]) ? 1 : 0;
    } else {
      bad += f(bits[i]) ? 1 : 0;
    }
  }
  return bad != 0;
}

bool any_in(const TensorView& v) {
  const int64_t n = v.numel();
  switch (v.dtype) {
    case DType::kFloat32:
      return any_in(static_cast<const uint32_t*>(v.data), n, kernels::NonFiniteFunctor::float32());
    case DType::kFloat16:
      return any_in(static_cast<const uint16_t*>(v.data), n, kernels::NonFiniteFunctor::float16());
    case DType::kBFloat16:
      return any_in(static_cast<const uint16_t*>(v.data), n, kernels::NonFiniteFunctor::bfloat16());
    case DType::kFloat64:
      return any_in(static_cast<const uint64_t*>(v.data), n, kernels::NonFiniteFunctor::float64());
    default:
      break;
  }
  throw_error(ErrorCode::kInternal, "any_nonfinite",
              std::string("expected float32, float16, bfloat16 or float64 tensors, got ") + dtype_name(v.dtype));
}

}  // namespace

void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) {
  if (flag.dtype != DType::kFloat32 || flag.numel() != 1) {
    throw_error(ErrorCode::kInternal, "any_nonfinite", "the flag must be one float32 element");
  }
  bool found = false;
  for (const TensorView& v : tensors) {
    if (v.numel() == 0) continue;
    if (!v.is_contiguous()) throw_error(ErrorCode::kInternal, "any_nonfinite", "tensors must be contiguous");
    if (any_in(v)) {
      found = true;
      break;
    }
  }
  *static_cast<float*>(flag.data) = found ? 1.0f : 0.0f;
}

}  // namespace gpuaccel::cpu
