// Which dtype an op computes in when its operands differ: PyTorch's type promotion, the one
// owner of that rule. Every binary op frontend asks result_type; Python numbers and NumPy
// scalars reach the ops as 0-d tensors made by scalar_operand, which applies PyTorch's rule for
// "wrapped numbers" (a Python float turns an integer tensor into float32, but leaves a float16
// tensor float16) and refuses a value the result dtype cannot hold instead of wrapping it.
//
//   categories: bool < integer < floating.
//   tensor with tensor: the higher category wins; within a category the wider dtype
//     (uint8 < int32 < int64; float16, bfloat16 < float32; float16 with bfloat16 is float32),
//     except that a 0-d tensor only decides the dtype when it is of a higher category than
//     every dimensioned operand (torch.result_type).
//   tensor with a Python number: the tensor's dtype unless the number is of a higher category;
//     then the number's default dtype (bool, int64, float32).
#pragma once

#include <cstdint>
#include <string_view>

#include "backends/op_kinds.h"
#include "core/dtype.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// torch.promote_types over gpuaccel's dtypes.
DType promote_types(DType a, DType b);
// torch.result_type(a, b) for two tensors (0-d tensors rank below dimensioned ones).
DType result_type(const Tensor& a, const Tensor& b);

// A Python number as the ops see it: its category and its exact value. An int beyond int64
// keeps its value only as `real` (`fits_int64` false) and can only become a float.
struct Scalar {
  enum class Kind { kBool, kInt, kFloat };
  Kind kind = Kind::kFloat;
  int64_t integer = 0;  // kBool, kInt (when fits_int64)
  double real = 0.0;    // every kind
  bool fits_int64 = true;
  std::string describe() const;  // "2.5", "True", "1267650600228229401496703205376"
};

// torch.result_type(tensor, number).
DType result_type(DType tensor_dtype, Scalar::Kind kind);
// The dtype `op` computes in given its operands' result type: the result type, except that true
// division of integers or bools computes (and returns) float32, as torch's `/`.
DType compute_dtype(BinaryOp op, DType result);

// A 0-d tensor holding `value` in `dtype` on `device`. InvalidArgumentError naming `op` when
// the dtype cannot hold the value (an int out of range, NaN or infinity for an integer dtype):
// NumPy 2 refuses these too, where a cast would wrap or saturate silently.
Tensor scalar_tensor(const Scalar& value, DType dtype, const LogicalDevice& device,
                     std::string_view op);
// The operand `value` becomes in binary op `kind` with `like`: scalar_tensor in
// compute_dtype(kind, result_type(like.dtype(), value.kind)), on like's device.
Tensor scalar_operand(const Scalar& value, const Tensor& like, BinaryOp kind, std::string_view op);

}  // namespace gpuaccel
