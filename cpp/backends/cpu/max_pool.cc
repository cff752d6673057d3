// The direct NHWC max-pooling loops (see max_pool.h for why they exist).
#include "backends/cpu/max_pool.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>
#include <algorithm>

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
bool plain_f32(const TensorView& v) { return v.dtype == DType::kFloat32 && v.is_contiguous(); }
}  // namespace

void direct_max_pool_forward(const TensorView& x_in, const Pool2dParams& p, const TensorView& y_in,
                             uint8_t* workspace) {
  F32Copy x_copy, y_copy;
  if (!plain_f32(x_in)) x_copy = to_f32(x_in);
  if (!plain_f32(y_in)) y_copy = f32_like(y_in);
  const TensorView& x = plain_f32(x_in) ? x_in : x_copy.view;
  const TensorView& y = plain_f32(y_in) ? y_in : y_copy.view;
  const Dims d = dims_of(x, y);
  const int64_t channels = d.c;
  const float* src = static_cast<const float*>(x.data);
  float* dst = static_cast<float*>(y.data);
  const int64_t rows = d.n * d.oh * d.ow;
#pragma omp parallel if (parallel_worth_it(rows * channels))
  {
    // The running argmax as floats, so the compare-and-select loop stays in 32-bit lanes and
    // vectorizes; it becomes bytes once per output row.
    std::vector<float> best_k(static_cast<size_t>(channels));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / (d.oh * d.ow), oh = (r / d.ow) % d.oh, ow = r % d.ow;
      float* __restrict out = dst + r * channels;
      float* __restrict kb = best_k.data();
      bool first = true;
      for (int64_t kh = 0; kh < p.window_h; ++kh) {
        const int64_t ih = oh * p.stride_h - p.pad_top + kh;
        if (ih < 0 || ih >= d.h) continue;
        for (int64_t kw = 0; kw < p.window_w; ++kw) {
          const int64_t iw = ow * p.stride_w - p.pad_left + kw;
          if (iw < 0 || iw >= d.w) continue;
          const float* __restrict in = src + ((n * d.h + ih) * d.w + iw) * channels;
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
      if (workspace != nullptr) {
        uint8_t* arg = workspace + r * channels;
        for (int64_t c = 0; c < channels; ++c) arg[c] = static_cast<uint8_t>(kb[c]);
      }
    }
  }
  if (!plain_f32(y_in)) store_from_f32(y_copy.data.data(), y_in);
}

void direct_max_pool_backward(const TensorView& dy_in, const Pool2dParams& p,
                              const uint8_t* workspace, const TensorView& dx_in) {
  F32Copy dy_copy, dx_copy;
  if (!plain_f32(dy_in)) dy_copy = to_f32(dy_in);
  if (!plain_f32(dx_in)) dx_copy = f32_like(dx_in);
  const TensorView& dy = plain_f32(dy_in) ? dy_in : dy_copy.view;
  const TensorView& dx = plain_f32(dx_in) ? dx_in : dx_copy.view;
  const Dims d = dims_of(dx, dy);
  const float* grad = static_cast<const float*>(dy.data);
  float* out = static_cast<float*>(dx.data);
  // Window index -> (kh, kw), so the scatter does no integer division per element.
  int16_t row_of[256], col_of[256];
  for (int k = 0; k < 256; ++k) {
    row_of[k] = static_cast<int16_t>(k / p.window_w);
    col_of[k] = static_cast<int16_t>(k % p.window_w);
  }
  // One image per iteration: windows of different images never touch the same dx element, so
  // the scatter-add needs no atomics.
#pragma omp parallel for schedule(static) if (parallel_worth_it(d.n * d.h * d.w * d.c))
  for (int64_t n = 0; n < d.n; ++n) {
    float* image = out + n * d.h * d.w * d.c;
    std::memset(image, 0, static_cast<size_t>(d.h * d.w * d.c) * sizeof(float));
    for (int64_t oh = 0; oh < d.oh; ++oh) {
      for (int64_t ow = 0; ow < d.ow; ++ow) {
        const int64_t r = (n * d.oh + oh) * d.ow + ow;
        const float* g = grad + r * d.c;
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
  }
  if (!plain_f32(dx_in)) store_from_f32(dx_copy.data.data(), dx_in);
}

}  // namespace gpuaccel::cpu
