// The direct NHWC max-pooling loops (see max_pool.h for why they exist), in float32 or in
// bfloat16 (rows widened and narrowed with bf16_convert.h, never a staged copy of the tensor).
#include "backends/cpu/max_pool.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>
#include <algorithm>
#include <type_traits>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/onednn_context.h"

namespace gpuaccel::cpu {

using onednn::F32Copy;
using onednn::f32_like;
using onednn::store_from_f32;
using onednn::to_f32;

namespace {

struct Dims {
  int64_t n, h, w, c, oh, ow;
};

Dims dims_of(const TensorView& x, const TensorView& y) {
  return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2]};
}

// Worth a parallel region only when there is enough work to split.
bool parallel_worth_it(int64_t elements) { return elements >= (1 << 15) && omp_get_max_threads() > 1; }

}  // namespace

bool direct_max_pool_applies(const Pool2dParams& p) {
  return p.kind == PoolKind::kMax && p.window_h > 0 && p.window_w > 0 &&
         p.window_h * p.window_w <= 255;
}

int64_t direct_max_pool_workspace_bytes(const TensorView& y) { return y.numel(); }

namespace {

// Storage types the loops run in directly; float16 is staged through contiguous float32.
bool native(const TensorView& v) {
  return (v.dtype == DType::kFloat32 || v.dtype == DType::kBFloat16) && v.is_contiguous();
}

// A run of values as floats: the run itself for float32, widened into `buffer` for bfloat16
// (exact, so comparisons and sums see the same numbers as a staged float32 copy would).
inline const float* as_f32(const float* run, float*, int64_t) { return run; }
inline const float* as_f32(const BFloat16* run, float* buffer, int64_t n) {
  bf16_to_f32(run, buffer, n);
  return buffer;
}
// Writes floats computed in `values` to `run` (float32: they are already there).
inline void store_run(const float*, float*, int64_t) {}
inline void store_run(const float* values, BFloat16* run, int64_t n) { f32_to_bf16(values, run, n); }

template <typename S>
void max_pool_forward_typed(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                            uint8_t* workspace) {
  constexpr bool kWide = std::is_same_v<S, float>;
  const Dims d = dims_of(x, y);
  const int64_t channels = d.c;
  const S* src = static_cast<const S*>(x.data);
  S* dst = static_cast<S*>(y.data);
  const int64_t rows = d.n * d.oh * d.ow;
#pragma omp parallel if (parallel_worth_it(rows * channels))
  {
    // The running argmax as floats, so the compare-and-select loop stays in 32-bit lanes and
    // vectorizes; it becomes bytes once per output row. bf16 rows are compared as floats.
    std::vector<float> best_k(static_cast<size_t>(channels));
    std::vector<float> widened(kWide ? 0 : static_cast<size_t>(channels));
    std::vector<float> best_v(kWide ? 0 : static_cast<size_t>(channels));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / (d.oh * d.ow), oh = (r / d.ow) % d.oh, ow = r % d.ow;
      float* __restrict out;
      if constexpr (kWide) {
        out = dst + r * channels;
      } else {
        out = best_v.data();
      }
      float* __restrict kb = best_k.data();
      bool first = true;
      for (int64_t kh = 0; kh < p.window_h; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh;
        if (ih < 0 || ih >= d.h) continue;
        for (int64_t kw = 0; kw < p.window_w; ++kw) {
          const int64_t iw = ow * p.stride_w - p.pad_left + kw;
          if (iw < 0 || iw >= d.w) continue;
          const float* __restrict in =
              as_f32(src + ((n * d.h + ih) * d.w + iw) * channels, widened.data(), channels);
          const float k = static_cast<float>(kh * p.window_w + kw);
          if (first) {
            std::memcpy(out, in, static_cast<size_t>(channels) * sizeof(float));
            std::fill(kb, kb + channels, k);
            first = false;
            continue;
          }
          // Strictly greater: ties keep the first position in scan order. A NaN is taken and
          // then kept (a number never compares greater than it): pooling propagates NaN.
          for (int64_t c = 0; c < channels; ++c) {
            const float v = in[c], o = out[c];
            const bool take = (v > o) | (v != v);
            out[c] = take ? v : o;
            kb[c] = take ? k : kb[c];
          }
        }
      }
      if (first) {  // a window entirely in the padding (only with unusual padding): -inf, as TF
        std::fill(out, out + channels, -INFINITY);
        std::fill(kb, kb + channels, 0.0f);
      }
      store_run(out, dst + r * channels, channels);
      if (workspace != nullptr) {
        uint8_t* arg = workspace + r * channels;
        for (int64_t c = 0; c < channels; ++c) arg[c] = static_cast<uint8_t>(kb[c]);
      }
    }
  }
}

template <typename S>
void max_pool_backward_typed(const TensorView& dy, const Pool2dParams& p,
                             const uint8_t* workspace, const TensorView& dx) {
  constexpr bool kWide = std::is_same_v<S, float>;
  const Dims d = dims_of(dx, dy);
  const S* grad = static_cast<const S*>(dy.data);
  S* out = static_cast<S*>(dx.data);
  const int64_t image_size = d.h * d.w * d.c;
  // Window index -> (kh, kw), so the scatter does no integer division per element.
  int16_t row_of[256], col_of[256];
  for (int k = 0; k < 256; ++k) {
    row_of[k] = static_cast<int16_t>(k / p.window_w);
    col_of[k] = static_cast<int16_t>(k % p.window_w);
  }
  // One image per iteration: windows of different images never touch the same dx element, so
  // the scatter-add needs no atomics. bf16 images are summed in float32 and rounded once.
#pragma omp parallel if (parallel_worth_it(d.n * image_size))
  {
    std::vector<float> sums(kWide ? 0 : static_cast<size_t>(image_size));
    std::vector<float> widened(kWide ? 0 : static_cast<size_t>(d.c));
#pragma omp for schedule(static)
    for (int64_t n = 0; n < d.n; ++n) {
      float* image;
      if constexpr (kWide) {
        image = out + n * image_size;
      } else {
        image = sums.data();
      }
      std::memset(image, 0, static_cast<size_t>(image_size) * sizeof(float));
      for (int64_t oh = 0; oh < d.oh; ++oh) {
        for (int64_t ow = 0; ow < d.ow; ++ow) {
          const int64_t r = (n * d.oh + oh) * d.ow + ow;
          const float* g = as_f32(grad + r * d.c, widened.data(), d.c);
          const uint8_t* arg = workspace + r * d.c;
          for (int64_t c = 0; c < d.c; ++c) {
            const int64_t kh = row_of[arg[c]], kw = col_of[arg[c]];
            const int64_t ih = oh * p.stride_h - p.pad_top + kh;
            const int64_t iw = ow * p.stride_w - p.pad_left + kw;
            if (ih < 0 || ih >= d.h || iw < 0 || iw >= d.w) continue;  // all-padding window
            image[(ih * d.w + iw) * d.c + c] += g[c];
          }
        }
      }
      store_run(image, out + n * image_size, image_size);
    }
  }
}

// Windows that never overlap and start at the image's corner (stride >= window, no top or left
// padding: Keras's default 2x2 pooling): every dx element receives at most one gradient, so it
// is written exactly once (the window's gradient where the argmax points, else 0) instead of
// zero-filling the image and scattering into it. No sum is formed, so bfloat16 gradients are
// selected as raw bits.
bool disjoint_windows(const Pool2dParams& p) {
  return p.stride_h >= p.window_h && p.stride_w >= p.window_w && p.pad_top == 0 && p.pad_left == 0;
}

template <typename S>
void max_pool_backward_disjoint(const TensorView& dy, const Pool2dParams& p,
                                const uint8_t* workspace, const TensorView& dx) {
  using Bits = std::conditional_t<sizeof(S) == 4, uint32_t, uint16_t>;
  const Dims d = dims_of(dx, dy);
  const Bits* grad = static_cast<const Bits*>(dy.data);
  Bits* out = static_cast<Bits*>(dx.data);
  const int64_t rows = d.n * d.h;  // input rows (n, ih)
#pragma omp parallel for schedule(static) if (parallel_worth_it(rows * d.w * d.c))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / d.h, ih = r % d.h;
    const int64_t oh = ih / p.stride_h, kh = ih % p.stride_h;
    Bits* row = out + r * d.w * d.c;
    if (oh >= d.oh || kh >= p.window_h) {  // a row no window covers
      std::memset(row, 0, static_cast<size_t>(d.w * d.c) * sizeof(Bits));
      continue;
    }
    const Bits* g_row = grad + (n * d.oh + oh) * d.ow * d.c;
    const uint8_t* arg_row = workspace + (n * d.oh + oh) * d.ow * d.c;
    // (ow, kw) advance with iw, no division per position.
    for (int64_t iw = 0, ow = 0, kw = 0; iw < d.w; ++iw) {
      Bits* __restrict dst = row + iw * d.c;
      if (ow >= d.ow || kw >= p.window_w) {  // a column no window covers
        std::memset(dst, 0, static_cast<size_t>(d.c) * sizeof(Bits));
      } else {
        const Bits* __restrict g = g_row + ow * d.c;
        const uint8_t* __restrict arg = arg_row + ow * d.c;
        const uint8_t k = static_cast<uint8_t>(kh * p.window_w + kw);
        // A mask, not a branch: which position holds the maximum is data, and a branch on it
        // mispredicts (measured: 4x slower than the scatter it replaces); this vectorizes.
        for (int64_t c = 0; c < d.c; ++c) {
          dst[c] = g[c] & static_cast<Bits>(Bits(0) - static_cast<Bits>(arg[c] == k));
        }
      }
      if (++kw == p.stride_w) {
        kw = 0;
        ++ow;
      }
    }
  }
}

}  // namespace

void direct_max_pool_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                             uint8_t* workspace) {
  if (native(x) && native(y) && x.dtype == y.dtype) {
    if (x.dtype == DType::kFloat32) return max_pool_forward_typed<float>(x, p, y, workspace);
    return max_pool_forward_typed<BFloat16>(x, p, y, workspace);
  }
  const F32Copy x_copy = to_f32(x);
  F32Copy y_copy = f32_like(y);
  max_pool_forward_typed<float>(x_copy.view, p, y_copy.view, workspace);
  store_from_f32(y_copy.data.data(), y);
}

void direct_max_pool_backward(const TensorView& dy, const Pool2dParams& p,
                              const uint8_t* workspace, const TensorView& dx) {
  if (native(dy) && native(dx) && dy.dtype == dx.dtype) {
    if (disjoint_windows(p)) {
      if (dx.dtype == DType::kFloat32) return max_pool_backward_disjoint<float>(dy, p, workspace, dx);
      return max_pool_backward_disjoint<BFloat16>(dy, p, workspace, dx);
    }
    if (dx.dtype == DType::kFloat32) return max_pool_backward_typed<float>(dy, p, workspace, dx);
    return max_pool_backward_typed<BFloat16>(dy, p, workspace, dx);
  }
  const F32Copy dy_copy = to_f32(dy);
  F32Copy dx_copy = f32_like(dx);
  max_pool_backward_typed<float>(dy_copy.view, p, workspace, dx_copy.view);
  store_from_f32(dx_copy.data.data(), dx);
}

}  // namespace gpuaccel::cpu
