// The CPU side of backends/cpu/optimizer_update.h: one pass over the parameter's elements,
// split into contiguous chunks across OpenMP threads; 16-bit gradients are widened to float32
// per element, so a mixed-precision step never materializes a float32 copy of the gradient.
#include "backends/cpu/optimizer_update.h"

#include <cstdint>

#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {
namespace {

inline float load_grad(float g) { return g; }
inline float load_grad(Half g) { return g.to_float(); }
inline float load_grad(BFloat16 g) { return g.to_float(); }

float* slot_data(const TensorView& v, int64_t n) {
  if (v.data == nullptr) return nullptr;
  if (v.dtype != DType::kFloat32 || !v.is_contiguous() || v.numel() != n) {
    throw_error(ErrorCode::kInternal, "optimizer_update",
                "slots must be contiguous float32 of the parameter's size");
  }
  return static_cast<float*>(v.data);
}

template <typename G, typename F>
void run(const F& f, int64_t n, float* p, const G* g, float* s0, float* s1, float* s2) {
  // Null slots stay null: the functor only touches the slots its flags use.
  auto body = [&](int64_t i) {
    f(load_grad(g[i]), p + i, s0 ? s0 + i : nullptr, s1 ? s1 + i : nullptr, s2 ? s2 + i : nullptr);
  };
  parallel_for_if(n >= kParallelMinElements, n, body);  // below a region's worth: serial
}

}  // namespace

void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                      const TensorView& slot0, const TensorView& slot1, const TensorView& slot2) {
  if (param.dtype != DType::kFloat32 || !param.is_contiguous() || !grad.is_contiguous() ||
      grad.numel() != param.numel()) {
    throw_error(ErrorCode::kInternal, "optimizer_update",
                "expected a contiguous float32 parameter and a contiguous gradient of its size");
  }
  const int64_t n = param.numel();
  float* p = static_cast<float*>(param.data);
  float* s0 = slot_data(slot0, n);
  float* s1 = slot_data(slot1, n);
  float* s2 = slot_data(slot2, n);
  const bool known = kernels::with_optimizer_functor(u, [&](const auto& f) {
    switch (grad.dtype) {
      case DType::kFloat32: return run(f, n, p, static_cast<const float*>(grad.data), s0, s1, s2);
      case DType::kFloat16: return run(f, n, p, static_cast<const Half*>(grad.data), s0, s1, s2);
      case DType::kBFloat16:
        return run(f, n, p, static_cast<const BFloat16*>(grad.data), s0, s1, s2);
      default:
        throw_error(ErrorCode::kInternal, "optimizer_update",
                    "gradients must be float32, float16 or bfloat16");
    }
  });
  if (!known) throw_error(ErrorCode::kInternal, "optimizer_update", "unknown optimizer kind");
}

}  // namespace gpuaccel::cpu
