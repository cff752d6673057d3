// Names, sizes and parsing of DType, and the OpenMP loops that apply the half/bfloat16 cast
// functors to whole arrays (see dtype.h).
#include "core/dtype.h"

#include <cstddef>

#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel {

std::string valid_dtype_names() {
  std::string names;
  for (DType d : kAllDTypes) {
    if (!names.empty()) names += ", ";
    names += dtype_name(d);
  }
  return names;
}

DType parse_dtype(const std::string& name) {
  for (DType d : kAllDTypes) {
    if (name == dtype_name(d)) return d;
  }
  struct Alias {
    const char* name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {{"float", DType::kFloat32}, {"f32", DType::kFloat32},
                                       {"half", DType::kFloat16},  {"f16", DType::kFloat16},
                                       {"bf16", DType::kBFloat16}, {"double", DType::kFloat64},
                                       {"f64", DType::kFloat64},   {"short", DType::kInt16}};
  for (const Alias& a : kAliases) {
    if (name == a.name) return a.dtype;
  }
  throw_value_error("", "Invalid dtype '" + name + "'. Valid dtypes: " + valid_dtype_names() +
                             " (aliases: float, f32, half, f16, bf16, double, f64, short)");
}

namespace {

// Below this many elements a parallel region costs more than the conversion itself.
constexpr size_t kParallelThreshold = size_t{1} << 16;

template <typename Src, typename Dst, typename Functor>
void convert_all(const Src* src, Dst* dst, size_t n, Functor f) {
  const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (n >= kParallelThreshold)
  for (std::ptrdiff_t i = 0; i < count; ++i) dst[i] = f(src[i]);
}

}  // namespace

void convert_f32_to_f16(const float* src, uint16_t* dst, size_t n) {
  convert_all(src, dst, n, FloatToHalf{});
}
void convert_f16_to_f32(const uint16_t* src, float* dst, size_t n) {
  convert_all(src, dst, n, HalfToFloat{});
}
void convert_f32_to_bf16(const float* src, uint16_t* dst, size_t n) {
  convert_all(src, dst, n, FloatToBFloat16{});
}
void convert_bf16_to_f32(const uint16_t* src, float* dst, size_t n) {
  convert_all(src, dst, n, BFloat16ToFloat{});
}

}  // namespace gpuaccel
