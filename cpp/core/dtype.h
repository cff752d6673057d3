// The element types a tensor can hold, named as NumPy and TensorFlow name them, and the bulk
// f32 <-> f16/bf16 conversions every cast, mixed-precision step and NumPy hand-off goes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuaccel {

// The later additions (kFloat64, kInt8, kInt16) come last so the older values keep their numbers.
enum class DType {
  kFloat32, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool, kFloat64, kInt8, kInt16
};

// Every DType, in declaration order.
constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                DType::kInt32,   DType::kInt64,   DType::kUInt8,
                                DType::kBool,    DType::kFloat64, DType::kInt8,
                                DType::kInt16};
constexpr size_t kNumDTypes = sizeof(kAllDTypes) / sizeof(kAllDTypes[0]);

// Inline, so the CUDA backend library (which links none of the core) uses these same ones.
// "float32", "float16", "bfloat16", "int32", "int64", "uint8", "bool", "float64", "int8",
// "int16".
constexpr const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
    case DType::kFloat64: return "float64";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
  }
  return "unknown";
}

// Bytes per element.
constexpr size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
    case DType::kBool: return 1;
    case DType::kFloat64: return 8;
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
  }
  return 0;
}

constexpr bool is_floating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16 ||
         dtype == DType::kFloat64;
}

// Accepts every dtype_name() plus the aliases "float" (float32), "half" (float16), "double"
// (float64), "short" (int16), "f32", "f16", "bf16", "f64". Anything else throws a ValueError
// quoting `name` and listing the valid names.
DType parse_dtype(const std::string& name);

// "float32, float16, bfloat16, int32, int64, uint8, bool, float64, int8, int16", for messages.
std::string valid_dtype_names();

// Bulk conversions with the exact rounding of kernels/half_conversions.h. Large arrays are
// split across OpenMP threads. `src` and `dst` must not overlap.
void convert_f32_to_f16(const float* src, uint16_t* dst, size_t n);
void convert_f16_to_f32(const uint16_t* src, float* dst, size_t n);
void convert_f32_to_bf16(const float* src, uint16_t* dst, size_t n);
void convert_bf16_to_f32(const uint16_t* src, float* dst, size_t n);

}  // namespace gpuaccel
