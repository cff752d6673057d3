// The element-wise sums the CPU engines hand to their libraries as reduction functions (Gloo's
// AllreduceOptions::Func, MPI's user operations): plain `+` for the types the libraries add,
// and float16/bfloat16 summed in float32 and rounded once per pairwise step, as NCCL does.
#pragma once

#include <cstddef>

namespace gpuaccel::distribute {

template <typename T>
void sum_into(void* out, const void* a, const void* b, size_t n) {
  auto* c = static_cast<T*>(out);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) c[i] = x[i] + y[i];
}

// H is Half or BFloat16 (kernels/half_conversions.h): from_float/to_float.
template <typename H>
void sum_into_half(void* out, const void* a, const void* b, size_t n) {
  auto* c = static_cast<H*>(out);
  auto* x = static_cast<const H*>(a);
  auto* y = static_cast<const H*>(b);
  for (size_t i = 0; i < n; ++i) c[i] = H::from_float(x[i].to_float() + y[i].to_float());
}

}  // namespace gpuaccel::distribute
