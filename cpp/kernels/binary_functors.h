// Element functors for every BinaryOp (backends/op_kinds.h), shared by the CPU loops and the
// CUDA kernels. Templates over the compute type (float for every floating storage dtype, the
// integer type itself for integer tensors). Arithmetic functors return T; comparisons return
// bool and the loop stores 1/0 in the output dtype. Broadcasting is the loop's business (stride
// 0 views); a functor only ever sees two scalars.
#pragma once

#include "kernels/host_device.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::kernels {

struct AddFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return a + b; }
};

struct SubFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return a - b; }
};

struct MulFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return a * b; }
};

// Floating only (the frontend rejects integer division, or casts first).
struct DivFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return a / b; }
};

// Floating only: C pow semantics (pow(x, 0) == 1 even for NaN x, negative base with a
// non-integer exponent is NaN), which is also NumPy's and TensorFlow's.
struct PowFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return math::pow(a, b); }
};

// Floating only: the angle of the point (b, a) in [-pi, pi], C's atan2 (NumPy's arctan2, TF's
// atan2(y, x), torch.atan2(input, other) with a = y, b = x). Its gradients are composed by the
// frontend (ops/elementwise.cc).
struct Atan2Functor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return math::atan2(a, b); }
};

// NaN-propagating like np.maximum / tf.maximum / torch.maximum (not fmax).
struct MaximumFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const {
    if (math::is_nan(a)) return a;
    if (math::is_nan(b)) return b;
    return a < b ? b : a;
  }
};

struct MinimumFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const {
    if (math::is_nan(a)) return a;
    if (math::is_nan(b)) return b;
    return b < a ? b : a;
  }
};

struct EqualFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE bool operator()(T a, T b) const { return a == b; }
};

struct GreaterFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE bool operator()(T a, T b) const { return a > b; }
};

struct LessFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE bool operator()(T a, T b) const { return a < b; }
};

}  // namespace gpuaccel::kernels
