// The names of element-wise and reduction ops shared by op frontends and every backend, so a
// frontend dispatches `UnaryOp::kExp` the same way to the CPU loop and to the CUDA launch.
#pragma once

namespace gpuaccel {

enum class UnaryOp {
  kNeg, kExp, kLog, kSqrt, kRsqrt, kAbs, kSquare, kReciprocal,
  kRelu, kSigmoid, kTanh, kGelu,  // gelu: Keras's default approximate=False (erf form)
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh, kErf,
};

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kPow, kMaximum, kMinimum,
  kEqual, kGreater, kLess,  // comparisons write 1/0 in the output dtype (or bool)
  kAtan2,                   // atan2(a, b): the angle of the point (b, a); floating only
};

// Bit-level ops on integer tensors (and/or/xor also on bool); shift counts outside [0, bits)
// shift every bit out (kernels/bitwise_functors.h).
enum class BitwiseOp { kAnd, kOr, kXor, kShiftLeft, kShiftRight };

// An activation a backend may fuse into the op that produces its input (a oneDNN eltwise
// post-op on the CPU): kNone leaves the output linear.
enum class PostActivation { kNone, kRelu };

enum class ReduceOp { kSum, kMean, kMax, kMin, kArgMax, kArgMin };

// How a row scatter (backends/backend_ops.def: scatter_rows) combines an incoming row with the
// table row it lands on: a sum, max or min (a NaN on either side winning), or a product.
enum class RowCombine { kAdd, kMax, kMin, kMultiply };

enum class RandomDistribution { kUniform /* [0, 1) */, kNormal /* mean 0, std 1 */ };

}  // namespace gpuaccel
