// Element-wise, reduction, copy/cast, fill and random kernels on the CPU: OpenMP loops over
// the element functors of cpp/kernels (the same functors the CUDA backend launches). Views are
// validated by the op frontends: shapes already broadcast (stride 0 on broadcast dimensions),
// outputs contiguous unless stated, dtypes supported. float16/bfloat16 are loaded as float32,
// computed in float32 and stored rounded to nearest even.
#pragma once

#include <cstdint>

#include "backends/op_kinds.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// y = op(x). x may be strided/broadcast; y has x's shape. Floating dtypes; kNeg/kAbs/kSquare
// also int32/int64.
void unary(UnaryOp op, const TensorView& x, const TensorView& y);

// dx = dy * op'(x) (using y = op(x) where that is cheaper, e.g. sigmoid, tanh, exp, sqrt).
// All four views have the same shape.
void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                    const TensorView& dx);

// out = a op b, with a and b already broadcast to out's shape. Floating dtypes for all ops;
// int32/int64 for add/sub/mul/maximum/minimum and comparisons. a, b, out share a dtype, except
// comparisons, whose out may be bool.
void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out);

// out = a op b bit by bit, a and b already broadcast to out's shape, all three of one dtype:
// int32, int64, uint8, and bool for and/or/xor (backends/backend_ops.def).
void bitwise(BitwiseOp op, const TensorView& a, const TensorView& b, const TensorView& out);

// out = cond ? a : b: cond bool, a, b and out of one dtype (any), all of out's shape (broadcast
// views with stride 0); the value not chosen is never read into out, so its inf/NaN stays out.
void where(const TensorView& cond, const TensorView& a, const TensorView& b, const TensorView& out);

// dst = src converted to dst's dtype (any dtype to any dtype; float -> int truncates toward
// zero like NumPy's astype; -> bool is != 0). Any strides on both sides: this is also how
// contiguous() and strided assignment work.
void copy(const TensorView& src, const TensorView& dst);

// Every element of dst (any strides) = value converted to dst's dtype.
void fill(const TensorView& dst, double value);

// dst (contiguous) = start + i * step.
void arange(const TensorView& dst, double start, double step);

// Counter-based random numbers (Philox-4x32-10): element i of a contiguous dst gets the value
// of counter (offset + i) under `seed`, so results do not depend on threads or on the device.
void random(RandomDistribution distribution, uint64_t seed, uint64_t offset, const TensorView& dst);

// out = reduce over the dimensions whose bit is set in `axes_mask` (bit d = dimension d of x).
// out has x's ndim with 1 on reduced dimensions (the frontend squeezes for keepdims=False).
// kArgMax/kArgMin: exactly one axis; out is int64; ties pick the first index (NumPy).
// Sums accumulate in float64 for float inputs (float32 on huge inputs still loses nothing).
void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out);

// Inverted dropout: y = x * mask / (1 - rate) with mask ~ Bernoulli(1 - rate) from the same
// counter-based generator; `mask` (uint8, x's shape, contiguous) is written for the backward
// pass. rate in [0, 1).
void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
             const TensorView& y, const TensorView& mask);

}  // namespace gpuaccel::cpu
