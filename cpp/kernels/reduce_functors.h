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

// Which end a max/min or argmax/argmin combiner keeps.
enum class Extreme { kMax, kMin };

// Whether x lies strictly beyond y towards `kKeep` (false for equal values and for NaNs).
template <Extreme kKeep, typename Acc>
GA_HOST_DEVICE GA_INLINE bool beyond(Acc x, Acc y) {
  return kKeep == Extreme::kMax ? y < x : x < y;
}

// max (kMax) or min (kMin); a NaN operand wins, a tie keeps `a`.
template <typename Acc, Extreme kKeep>
struct ExtremeCombiner {
  GA_HOST_DEVICE GA_INLINE static Acc identity() {
    return kKeep == Extreme::kMax ? Extremes<Acc>::lowest() : Extremes<Acc>::highest();
  }
  GA_HOST_DEVICE GA_INLINE Acc operator()(Acc a, Acc b) const {
    if (math::is_nan(a)) return a;
    if (math::is_nan(b)) return b;
    return beyond<kKeep>(b, a) ? b : a;
  }
};
template <typename Acc>
using MaxCombiner = ExtremeCombiner<Acc, Extreme::kMax>;
template <typename Acc>
using MinCombiner = ExtremeCombiner<Acc, Extreme::kMin>;

// A value with the index it came from (index -1: nothing seen yet).
template <typename Acc>
struct IndexedValue {
  Acc value;
  int64_t index;
};

// argmax (kMax) or argmin (kMin): the first NaN's index if any, else the first index of the
// extreme value.
template <typename Acc, Extreme kKeep>
struct ArgExtremeCombiner {
  GA_HOST_DEVICE GA_INLINE static IndexedValue<Acc> identity() {
    return IndexedValue<Acc>{ExtremeCombiner<Acc, kKeep>::identity(), -1};
  }
  GA_HOST_DEVICE GA_INLINE IndexedValue<Acc> operator()(IndexedValue<Acc> a,
                                                        IndexedValue<Acc> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = math::is_nan(a.value), b_nan = math::is_nan(b.value);
    if (a_nan != b_nan) return a_nan ? a : b;
    if (!a_nan) {
      if (beyond<kKeep>(a.value, b.value)) return a;
      if (beyond<kKeep>(b.value, a.value)) return b;
    }
    return b.index < a.index ? b : a;  // tie (or both NaN): the first index
  }
};
template <typename Acc>
using ArgMaxCombiner = ArgExtremeCombiner<Acc, Extreme::kMax>;
template <typename Acc>
using ArgMinCombiner = ArgExtremeCombiner<Acc, Extreme::kMin>;

}  // namespace gpuaccel::kernels
