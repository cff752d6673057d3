// Average pooling with asymmetric padding (Keras 'same' on odd totals) on the GPU. cuDNN pads
// symmetrically only, and a zero-padded copy would count the padding in the divisor; Keras (and
// the CPU backend's oneDNN pooling_avg_exclude_padding) divides by the number of window elements
// inside the input. So this is a direct NHWC kernel pair: forward, one thread per output element;
// backward, one thread per input element gathering dy / count from every window that covers it
// (no atomics, deterministic). Sums are f32; float16/bfloat16 are loaded as f32 and stored rounded.
#include <string>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"

namespace gpuaccel::cuda {

namespace {

struct PoolGeometry {
  int64_t n, h, w, c;  // input
  int64_t oh, ow;      // output
  int64_t kh, kw, sh, sw, pt, pl;
};

// Number of input elements in the window of output (oh, ow): the window clipped to the input.
__device__ __forceinline__ int64_t window_count(const PoolGeometry& g, int64_t oh, int64_t ow) {
  const int64_t h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
  const int64_t rows = min(h0 + g.kh, g.h) - max(h0, int64_t{0});
  const int64_t cols = min(w0 + g.kw, g.w) - max(w0, int64_t{0});
  return rows > 0 && cols > 0 ? rows * cols : 0;
}

template <typename T>
__global__ void avg_pool_forward_kernel(const T* x, T* y, PoolGeometry g, int64_t total) {
  using E = Elem<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    int64_t rest = i;
    const int64_t ch = rest % g.c; rest /= g.c;
    const int64_t ow = rest % g.ow; rest /= g.ow;
    const int64_t oh = rest % g.oh;
    const int64_t n = rest / g.oh;
    const int64_t h0 = oh * g.sh - g.pt, w0 = ow * g.sw - g.pl;
    const int64_t h_begin = max(h0, int64_t{0}), h_end = min(h0 + g.kh, g.h);
    const int64_t w_begin = max(w0, int64_t{0}), w_end = min(w0 + g.kw, g.w);
    float acc = 0.0f;
    for (int64_t ih = h_begin; ih < h_end; ++ih) {
      for (int64_t iw = w_begin; iw < w_end; ++iw) acc += E::load(x[((n * g.h + ih) * g.w + iw) * g.c + ch]);
    }
    const int64_t count = window_count(g, oh, ow);
    y[i] = E::store(count > 0 ? acc / static_cast<float>(count) : 0.0f);
  }
}

// First output index whose window (start o * s - p, length k) reaches input index `i`, and the
// last whose window starts at or before it, clipped to [0, extent).
__device__ __forceinline__ void covering(int64_t i, int64_t k, int64_t s, int64_t p, int64_t extent,
                                         int64_t& first, int64_t& last) {
  const int64_t lo = i + p - k + 1;  // o * s >= lo
  first = lo <= 0 ? 0 : (lo + s - 1) / s;
  last = min((i + p) / s, extent - 1);  // i + p >= 0 always
}

template <typename T>
__global__ void avg_pool_backward_kernel(const T* dy, T* dx, PoolGeometry g, int64_t total) {
  using E = Elem<T>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    int64_t rest = i;
    const int64_t ch = rest % g.c; rest /= g.c;
    const int64_t iw = rest % g.w; rest /= g.w;
    const int64_t ih = rest % g.h;
    const int64_t n = rest / g.h;
    int64_t oh0, oh1, ow0, ow1;
    covering(ih, g.kh, g.sh, g.pt, g.oh, oh0, oh1);
    covering(iw, g.kw, g.sw, g.pl, g.ow, ow0, ow1);
    float acc = 0.0f;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const int64_t count = window_count(g, oh, ow);
        if (count > 0) acc += E::load(dy[((n * g.oh + oh) * g.ow + ow) * g.c + ch]) / static_cast<float>(count);
      }
    }
    dx[i] = E::store(acc);
  }
}

PoolGeometry geometry(const TensorView& x, const Pool2dParams& p, const TensorView& y, const char* op) {
  GA_CUDA_REQUIRE(x.ndim == 4 && y.ndim == 4 && x.is_contiguous() && y.is_contiguous(),
                  std::string(op) + ": expected contiguous NHWC tensors");
  GA_CUDA_REQUIRE(x.shape[0] == y.shape[0] && x.shape[3] == y.shape[3], std::string(op) + ": N or C differ");
  GA_CUDA_REQUIRE(p.window_h > 0 && p.window_w > 0 && p.stride_h > 0 && p.stride_w > 0 && p.pad_top >= 0 &&
                      p.pad_left >= 0,
                  std::string(op) + ": invalid window, stride or padding");
  return PoolGeometry{x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2],
                      p.window_h, p.window_w, p.stride_h, p.stride_w, p.pad_top, p.pad_left};
}

}  // namespace

void avg_pool2d_forward_direct(int device, const TensorView& x, const Pool2dParams& p,
                               const TensorView& y) {
  const char* op = "pool2d_forward";
  const PoolGeometry g = geometry(x, p, y, op);
  const int64_t total = y.numel();
  if (total == 0) return;
  const cudaStream_t stream = device_stream(device);
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    avg_pool_forward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(x.data), static_cast<T*>(y.data), g, total);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

void avg_pool2d_backward_direct(int device, const TensorView& dy, const Pool2dParams& p,
                                const TensorView& dx) {
  const char* op = "pool2d_backward";
  const PoolGeometry g = geometry(dx, p, dy, op);
  const int64_t total = dx.numel();
  if (total == 0) return;
  const cudaStream_t stream = device_stream(device);
  dispatch_floating(dx.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const T*>(dy.data), static_cast<T*>(dx.data), g, total);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace gpuaccel::cuda
