// Element functors for every UnaryOp (backends/op_kinds.h), forward and gradient, written once
// for the CPU loops (where they are tested) and the CUDA kernels (compiled only). Each functor is
// a template over the compute type: float for float32/float16/bfloat16 storage, double in tests
// against std:: references, and the integer type itself for kNeg/kAbs/kSquare on integers.
//
//   forward:  y  = F{}(x)
//   gradient: dx = F{}.backward(x, y, dy)   (y = F{}(x), passed in because it is often cheaper)
//
// Also here: the small math layer (kernels::math) the other functor headers use, so that the
// same name calls std:: on the host and the CUDA device function (expf, erff, ...) on the GPU.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"

namespace gpuaccel::kernels {

namespace math {

// One overload per floating type, host and device. The device side uses the C names (expf for
// float) because those are what CUDA provides as __device__ functions in every version.
#if defined(__CUDA_ARCH__)
#define GA_DEFINE_MATH1(name)                                                      \
  GA_HOST_DEVICE GA_INLINE float name(float x) { return ::name##f(x); }           \
  GA_HOST_DEVICE GA_INLINE double name(double x) { return ::name(x); }
#define GA_DEFINE_MATH2(name)                                                      \
  GA_HOST_DEVICE GA_INLINE float name(float x, float y) { return ::name##f(x, y); } \
  GA_HOST_DEVICE GA_INLINE double name(double x, double y) { return ::name(x, y); }
#else
#define GA_DEFINE_MATH1(name)                                                      \
  GA_HOST_DEVICE GA_INLINE float name(float x) { return std::name(x); }            \
  GA_HOST_DEVICE GA_INLINE double name(double x) { return std::name(x); }
#define GA_DEFINE_MATH2(name)                                                      \
  GA_HOST_DEVICE GA_INLINE float name(float x, float y) { return std::name(x, y); } \
  GA_HOST_DEVICE GA_INLINE double name(double x, double y) { return std::name(x, y); }
#endif

GA_DEFINE_MATH1(exp)
GA_DEFINE_MATH1(log)
GA_DEFINE_MATH1(sqrt)
GA_DEFINE_MATH1(tanh)
GA_DEFINE_MATH1(erf)
GA_DEFINE_MATH1(fabs)
GA_DEFINE_MATH1(sin)
GA_DEFINE_MATH1(cos)
GA_DEFINE_MATH1(tan)
GA_DEFINE_MATH1(asin)
GA_DEFINE_MATH1(acos)
GA_DEFINE_MATH1(atan)
GA_DEFINE_MATH1(sinh)
GA_DEFINE_MATH1(cosh)
GA_DEFINE_MATH1(asinh)
GA_DEFINE_MATH1(acosh)
GA_DEFINE_MATH1(atanh)
GA_DEFINE_MATH2(pow)
GA_DEFINE_MATH2(atan2)

#undef GA_DEFINE_MATH1
#undef GA_DEFINE_MATH2

// x != x is true only for NaN (and never for integers); no <cmath> overload set needed.
template <typename T>
GA_HOST_DEVICE GA_INLINE bool is_nan(T x) {
  return x != x;
}

}  // namespace math

// ---- the ops ----

struct NegFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return -x; }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T /*y*/, T dy) const { return -dy; }
};

struct ExpFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::exp(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy * y; }
};

struct LogFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::log(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy / x; }
};

struct SqrtFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::sqrt(x); }
  // d sqrt(x) = 1 / (2 sqrt(x)) = 0.5 / y.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy * T(0.5) / y; }
};

struct RsqrtFunctor {
  // 1 / sqrt(x), correctly rounded sqrt then a division (CUDA's rsqrtf is approximate, so it is
  // not used: CPU and GPU then agree).
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return T(1) / math::sqrt(x); }
  // d x^(-1/2) = -0.5 x^(-3/2) = -0.5 y^3.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const {
    return dy * (T(-0.5) * y * y * y);
  }
};

struct AbsFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return x < T(0) ? T(-x) : x; }
  // sign(x) * dy, with 0 at x == 0 (TensorFlow and PyTorch agree on that subgradient).
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const {
    return x > T(0) ? dy : (x < T(0) ? T(-dy) : T(0));
  }
};

struct SquareFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return x * x; }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy * (T(2) * x); }
};

struct ReciprocalFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return T(1) / x; }
  // d (1/x) = -1/x^2 = -y^2.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return -dy * y * y; }
};

struct ReluFunctor {
  // NaN stays NaN (x > 0 is false for NaN, so test the other way round).
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return x < T(0) ? T(0) : x; }
  // Gradient 0 at x == 0, as TensorFlow and PyTorch.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return x > T(0) ? dy : T(0); }
};

struct SigmoidFunctor {
  // Never exponentiates a positive number, so neither branch overflows.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + math::exp(-x));
    const T e = math::exp(x);
    return e / (T(1) + e);
  }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy * y * (T(1) - y); }
};

struct TanhFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::tanh(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy * (T(1) - y * y); }
};

// gelu(x) = x * Phi(x) with Phi the standard normal CDF = 0.5 * (1 + erf(x / sqrt(2))): Keras's
// default (approximate=False) and PyTorch's default (approximate='none').
struct GeluFunctor {
  static constexpr double kSqrtHalf = 0.70710678118654752440;       // 1 / sqrt(2)
  static constexpr double kInvSqrt2Pi = 0.39894228040143267794;     // 1 / sqrt(2 pi)

  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const {
    return T(0.5) * x * (T(1) + math::erf(x * T(kSqrtHalf)));
  }
  // d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const {
    const T cdf = T(0.5) * (T(1) + math::erf(x * T(kSqrtHalf)));
    const T pdf = T(kInvSqrt2Pi) * math::exp(T(-0.5) * x * x);
    return dy * (cdf + x * pdf);
  }
};

// ---- trigonometric and hyperbolic functions, and erf ----
// The forward is the C library's (CUDA's device library on the GPU): correctly reduced at any
// |x|, NaN outside the domain (asin/acos beyond [-1, 1], acosh below 1, atanh beyond [-1, 1]),
// as NumPy, TensorFlow and PyTorch give. The gradients are TensorFlow's formulas (the same as
// PyTorch's): inf at the domain's edges (asin/acos at +-1, acosh at 1, atanh at +-1).

struct SinFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::sin(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy * math::cos(x); }
};

struct CosFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::cos(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return -dy * math::sin(x); }
};

struct TanFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::tan(x); }
  // d tan(x) = 1 + tan(x)^2.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy * (T(1) + y * y); }
};

struct AsinFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::asin(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const {
    return dy / math::sqrt(T(1) - x * x);
  }
};

struct AcosFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::acos(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const {
    return -dy / math::sqrt(T(1) - x * x);
  }
};

struct AtanFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::atan(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy / (T(1) + x * x); }
};

struct SinhFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::sinh(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy * math::cosh(x); }
};

struct CoshFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::cosh(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy * math::sinh(x); }
};

struct AsinhFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::asinh(x); }
  // 1 / sqrt(x^2 + 1) = 1 / cosh(asinh(x)): cosh(y) does not overflow where x^2 would.
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy / math::cosh(y); }
};

struct AcoshFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::acosh(x); }
  // 1 / sqrt(x^2 - 1) = 1 / sinh(acosh(x)).
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T /*x*/, T y, T dy) const { return dy / math::sinh(y); }
};

struct AtanhFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::atanh(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const { return dy / (T(1) - x * x); }
};

struct ErfFunctor {
  static constexpr double kTwoOverSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi)
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x) const { return math::erf(x); }
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T backward(T x, T /*y*/, T dy) const {
    return dy * T(kTwoOverSqrtPi) * math::exp(-x * x);
  }
};

// Adapter so a launch helper written for "f(x, y, dy)" can take any functor above.
template <typename Op>
struct UnaryBackwardFunctor {
  Op op;
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T x, T y, T dy) const { return op.backward(x, y, dy); }
};

}  // namespace gpuaccel::kernels
