// The order the sort kernels of both backends give, as one unsigned key per element: sorting
// the keys ascending (stably) is sorting the values. Written once for host and device, so the
// CPU's std::stable_sort and the CUDA kernel's merge sort agree on every rule:
//
//   * ascending puts NaN last (NumPy's np.sort, torch.sort); descending puts it first
//     (torch.sort(descending=True)): every NaN, whatever its sign or payload, gets the largest
//     key, and descending inverts every key;
//   * -0 ties with +0 (they compare equal), so a stable sort keeps their order;
//   * ties keep their order in the row both ways (descending inverts keys, not the order).
//
// Also here: the CUDA kernel's per-row merge sort of (key, index) pairs, tested on the CPU.
#pragma once

#include <cstdint>

#include "kernels/half_conversions.h"
#include "kernels/host_device.h"

namespace gpuaccel::kernels {

// The key type of each compute type: 64 bits for int64 and double, 32 for the rest.
template <typename T>
struct SortKeyOf {
  using type = uint32_t;
};
template <>
struct SortKeyOf<int64_t> {
  using type = uint64_t;
};
template <>
struct SortKeyOf<double> {
  using type = uint64_t;
};

GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(float v) {
  if (v != v) return 0xffffffffu;  // any NaN: after +inf (whose key is 0xff800000)
  if (v == 0.0f) v = 0.0f;         // -0 -> +0
  const uint32_t bits = float_to_bits(v);
  // Negative floats order by inverted bits, positive ones above every negative one.
  return (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
}
GA_HOST_DEVICE GA_INLINE uint64_t ascending_sort_key(double v) {
  if (v != v) return ~uint64_t{0};  // any NaN: after +inf
  if (v == 0.0) v = 0.0;            // -0 -> +0
  const uint64_t bits = double_to_bits(v);
  constexpr uint64_t kSign = uint64_t{1} << 63;
  return (bits & kSign) != 0 ? ~bits : (bits | kSign);
}
GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(int32_t v) {
  return static_cast<uint32_t>(v) ^ 0x80000000u;
}
GA_HOST_DEVICE GA_INLINE uint64_t ascending_sort_key(int64_t v) {
  return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
}
GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(Half v) {
  return ascending_sort_key(v.to_float());
}
GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(BFloat16 v) {
  return ascending_sort_key(v.to_float());
}
GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(uint8_t v) { return v; }
GA_HOST_DEVICE GA_INLINE uint32_t ascending_sort_key(bool v) { return v ? 1u : 0u; }

// The key of a stored value (any storage type: float, double, Half, BFloat16, int32, int64, uint8, bool).
template <typename T>
GA_HOST_DEVICE GA_INLINE typename SortKeyOf<T>::type sort_key(T v, bool descending) {
  const auto key = static_cast<typename SortKeyOf<T>::type>(ascending_sort_key(v));
  return descending ? static_cast<typename SortKeyOf<T>::type>(~key) : key;
}

// Stable bottom-up merge sort of n (key, index) pairs, from (keys_a, index_a) through the
// scratch pair (keys_b, index_b) of n each. Returns true when the sorted pairs ended in the
// b buffers, false when in the a buffers. O(n log n) steps on one thread: the CUDA kernel runs
// one row per thread with it.
template <typename K>
GA_HOST_DEVICE inline bool merge_sort_pairs(K* keys_a, int64_t* index_a, K* keys_b,
                                            int64_t* index_b, int64_t n) {
  bool in_b = false;
  for (int64_t width = 1; width < n; width *= 2) {
    const K* from_keys = in_b ? keys_b : keys_a;
    const int64_t* from_index = in_b ? index_b : index_a;
    K* to_keys = in_b ? keys_a : keys_b;
    int64_t* to_index = in_b ? index_a : index_b;
    for (int64_t low = 0; low < n; low += 2 * width) {
      const int64_t middle = low + width < n ? low + width : n;
      const int64_t high = low + 2 * width < n ? low + 2 * width : n;
      int64_t i = low, j = middle, out = low;
      while (i < middle && j < high) {
        // The left run wins ties: that is the stability.
        const bool take_right = from_keys[j] < from_keys[i];
        const int64_t k = take_right ? j++ : i++;
        to_keys[out] = from_keys[k];
        to_index[out++] = from_index[k];
      }
      for (; i < middle; ++i, ++out) {
        to_keys[out] = from_keys[i];
        to_index[out] = from_index[i];
      }
      for (; j < high; ++j, ++out) {
        to_keys[out] = from_keys[j];
        to_index[out] = from_index[j];
      }
    }
    in_b = !in_b;
  }
  return in_b;
}

}  // namespace gpuaccel::kernels
