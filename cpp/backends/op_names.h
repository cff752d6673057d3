// The profiler's names of ops whose kernel a parameter picks (backends/backend_ops.def): a
// unary op traces as "relu", a reduction as "reduce_sum". String literals, because a trace
// event keeps the name's pointer.
#pragma once

#include "backends/conv_params.h"
#include "backends/op_kinds.h"

namespace gpuaccel {

inline const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kLog: return "log";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kRsqrt: return "rsqrt";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kSquare: return "square";
    case UnaryOp::kReciprocal: return "reciprocal";
    case UnaryOp::kRelu: return "relu";
    case UnaryOp::kSigmoid: return "sigmoid";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kGelu: return "gelu";
    case UnaryOp::kSin: return "sin";
    case UnaryOp::kCos: return "cos";
    case UnaryOp::kTan: return "tan";
    case UnaryOp::kAsin: return "asin";
    case UnaryOp::kAcos: return "acos";
    case UnaryOp::kAtan: return "atan";
    case UnaryOp::kSinh: return "sinh";
    case UnaryOp::kCosh: return "cosh";
    case UnaryOp::kAsinh: return "asinh";
    case UnaryOp::kAcosh: return "acosh";
    case UnaryOp::kAtanh: return "atanh";
    case UnaryOp::kErf: return "erf";
  }
  return "unary";
}

inline const char* backward_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg_backward";
    case UnaryOp::kExp: return "exp_backward";
    case UnaryOp::kLog: return "log_backward";
    case UnaryOp::kSqrt: return "sqrt_backward";
    case UnaryOp::kRsqrt: return "rsqrt_backward";
    case UnaryOp::kAbs: return "abs_backward";
    case UnaryOp::kSquare: return "square_backward";
    case UnaryOp::kReciprocal: return "reciprocal_backward";
    case UnaryOp::kRelu: return "relu_backward";
    case UnaryOp::kSigmoid: return "sigmoid_backward";
    case UnaryOp::kTanh: return "tanh_backward";
    case UnaryOp::kGelu: return "gelu_backward";
    case UnaryOp::kSin: return "sin_backward";
    case UnaryOp::kCos: return "cos_backward";
    case UnaryOp::kTan: return "tan_backward";
    case UnaryOp::kAsin: return "asin_backward";
    case UnaryOp::kAcos: return "acos_backward";
    case UnaryOp::kAtan: return "atan_backward";
    case UnaryOp::kSinh: return "sinh_backward";
    case UnaryOp::kCosh: return "cosh_backward";
    case UnaryOp::kAsinh: return "asinh_backward";
    case UnaryOp::kAcosh: return "acosh_backward";
    case UnaryOp::kAtanh: return "atanh_backward";
    case UnaryOp::kErf: return "erf_backward";
  }
  return "unary_backward";
}

inline const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kPow: return "pow";
    case BinaryOp::kMaximum: return "maximum";
    case BinaryOp::kMinimum: return "minimum";
    case BinaryOp::kEqual: return "equal";
    case BinaryOp::kGreater: return "greater";
    case BinaryOp::kLess: return "less";
    case BinaryOp::kAtan2: return "atan2";
  }
  return "binary";
}

inline const char* op_name(BitwiseOp op) {
  switch (op) {
    case BitwiseOp::kAnd: return "bitwise_and";
    case BitwiseOp::kOr: return "bitwise_or";
    case BitwiseOp::kXor: return "bitwise_xor";
    case BitwiseOp::kShiftLeft: return "left_shift";
    case BitwiseOp::kShiftRight: return "right_shift";
  }
  return "bitwise";
}

inline const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "reduce_sum";
    case ReduceOp::kMean: return "reduce_mean";
    case ReduceOp::kMax: return "reduce_max";
    case ReduceOp::kMin: return "reduce_min";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
  }
  return "reduce";
}

inline const char* op_name(RowCombine combine) {
  switch (combine) {
    case RowCombine::kAdd: return "scatter_add_rows";
    case RowCombine::kMax: return "scatter_max_rows";
    case RowCombine::kMin: return "scatter_min_rows";
    case RowCombine::kMultiply: return "scatter_mul_rows";
  }
  return "scatter_rows";
}

inline const char* op_name(RandomDistribution distribution) {
  return distribution == RandomDistribution::kNormal ? "random_normal" : "random_uniform";
}

inline const char* pool_forward_name(PoolKind kind) {
  return kind == PoolKind::kMax ? "max_pool2d_forward" : "avg_pool2d_forward";
}

// The backward, or the backward fused with `activation`'s (pool2d_backward_activation).
inline const char* pool_backward_name(PoolKind kind, PostActivation activation) {
  const bool relu = activation == PostActivation::kRelu;
  if (kind == PoolKind::kMax) return relu ? "max_pool2d_backward+relu" : "max_pool2d_backward";
  return relu ? "avg_pool2d_backward+relu" : "avg_pool2d_backward";
}

}  // namespace gpuaccel
