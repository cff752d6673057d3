// Combiners for reductions (sum, max, min, argmax, argmin), shared by the CPU loops and the CUDA
// kernels. A combiner is associative and commutative, so partial results from threads or blocks
// can be merged in any order: argmax/argmin break ties by the lower index explicitly instead of
// relying on visiting order. NaN handling follows NumPy: max/min propagate NaN and argmax/argmin
// return the index of the first NaN.
//
//   acc = C::identity();  acc = C{}(acc, value) ...;  acc = C{}(acc_a, acc_b)
#pragma once

#include <cstdint>

#include "kernels/half_conversions.h"
#include "kernels/host_device.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::kernels {

// Lowest / highest values (infinities for floating types), written without std::numeric_limits
// so device code needs no relaxed-constexpr flag.
template <typename T>
struct Extremes;
template <>
struct Extremes<float> {
  GA_HOST_DEVICE GA_INLINE static float lowest() { return bits_to_float(0xff800000u); }
  GA_HOST_DEVICE GA_INLINE static float highest() { return bits_to_float(0x7f800000u); }
};
template <>
struct Extremes<double> {
  GA_HOST_DEVICE GA_INLINE static double lowest() { return static_cast<double>(Extremes<float>::lowest()); }
  GA_HOST_DEVICE GA_INLINE static double highest() { return static_cast<double>(Extremes<float>::highest()); }
};
template <>
struct Extremes<int32_t> {
  GA_HOST_DEVICE GA_INLINE static int32_t lowest() { return -2147483647 - 1; }
  GA_HOST_DEVICE GA_INLINE static int32_t highest() { return 2147483647; }
};
template <>
struct Extremes<int64_t> {
  GA_HOST_DEVICE GA_INLINE static int64_t lowest() { return -9223372036854775807LL - 1; }
  GA_HOST_DEVICE GA_INLINE static int64_t highest() { return 9223372036854775807LL; }
};

template <typename Acc>
struct SumCombiner {
  GA_HOST_DEVICE GA_INLINE static Acc identity() { return Acc(0); }
  GA_HOST_DEVICE GA_INLINE Acc operator()(Acc a, Acc b) const { return a + b; }
};

template <typename Acc>
struct MaxCombiner {
  GA_HOST_DEVICE GA_INLINE static Acc identity() { return Extremes<Acc>::lowest(); }
  GA_HOST_DEVICE GA_INLINE Acc operator()(Acc a, Acc b) const {
    if (math::is_nan(a)) return a;
    if (math::is_nan(b)) return b;
    return a < b ? b : a;
  }
};

template <typename Acc>
struct MinCombiner {
  GA_HOST_DEVICE GA_INLINE static Acc identity() { return Extremes<Acc>::highest(); }
  GA_HOST_DEVICE GA_INLINE Acc operator()(Acc a, Acc b) const {
    if (math::is_nan(a)) return a;
    if (math::is_nan(b)) return b;
    return b < a ? b : a;
  }
};

// A value with the index it came from (index -1: nothing seen yet).
template <typename Acc>
struct IndexedValue {
  Acc value;
  int64_t index;
};

template <typename Acc>
struct ArgMaxCombiner {
  GA_HOST_DEVICE GA_INLINE static IndexedValue<Acc> identity() {
    return IndexedValue<Acc>{Extremes<Acc>::lowest(), -1};
  }
  GA_HOST_DEVICE GA_INLINE IndexedValue<Acc> operator()(IndexedValue<Acc> a,
                                                        IndexedValue<Acc> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = math::is_nan(a.value), b_nan = math::is_nan(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan) {
      if (a.value > b.value) return a;
      if (b.value > a.value) return b;
    }
    return b.index < a.index ? b : a;  // tie (or both NaN): the first index
  }
};

template <typename Acc>
struct ArgMinCombiner {
  GA_HOST_DEVICE GA_INLINE static IndexedValue<Acc> identity() {
    return IndexedValue<Acc>{Extremes<Acc>::highest(), -1};
  }
  GA_HOST_DEVICE GA_INLINE IndexedValue<Acc> operator()(IndexedValue<Acc> a,
                                                        IndexedValue<Acc> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = math::is_nan(a.value), b_nan = math::is_nan(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan) {
      if (a.value < b.value) return a;
      if (b.value < a.value) return b;
    }
    return b.index < a.index ? b : a;
  }
};

}  // namespace gpuaccel::kernels
