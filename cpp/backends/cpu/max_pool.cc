// The direct NHWC max-pooling loops (see max_pool.h for why they exist), in float32 or in
// bfloat16, never through a staged copy of the tensor: the forward and the disjoint backward
// only select, so they read bf16 bits directly; the scattering backward sums rows widened with
// bf16_convert.h and rounds once.
// Each loop is written once, as an always-inline body, and instantiated per ISA inside a
// function with that ISA's target attribute, where the compiler vectorizes it for that ISA. The
// OpenMP regions stay in plain x86-64 code and hand each thread its share of rows.
#include "backends/cpu/max_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/onednn_context.h"
#include "core/cpu_info.h"
#include "core/errors.h"

#if defined(__x86_64__) || defined(__i386__)
#define GPUACCEL_MAX_POOL_X86 1
#else
#define GPUACCEL_MAX_POOL_X86 0
#endif

namespace gpuaccel::cpu {

using onednn::F32Copy;
using onednn::f32_like;
using onednn::store_from_f32;
using onednn::to_f32;

namespace {

// -1: no forced path (the widest supported one runs).
std::atomic<int> forced_isa{-1};

MaxPoolIsa best_isa() {
  static const MaxPoolIsa best = [] {
    if (max_pool_isa_supported(MaxPoolIsa::kAvx512)) return MaxPoolIsa::kAvx512;
    if (max_pool_isa_supported(MaxPoolIsa::kAvx2)) return MaxPoolIsa::kAvx2;
    return MaxPoolIsa::kBaseline;
  }();
  return best;
}

struct Dims {
  int64_t n, h, w, c, oh, ow;
};

Dims dims_of(const TensorView& x, const TensorView& y) {
  return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1], y.shape[2]};
}

// Worth a parallel region only when there is enough work to split.
bool parallel_worth_it(int64_t elements) {
  return elements >= kParallelMinElements && omp_get_max_threads() > 1;
}

// The calling thread's part [begin, end) of `count` items split evenly over the team (the split
// of schedule(static)), so each thread enters the ISA's loop once.
struct Share {
  int64_t begin, end;
};
Share this_thread_share(int64_t count) {
  const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  return {count * t / threads, count * (t + 1) / threads};
}

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

// ---- the loops, each a struct whose static run() is inlined into every ISA's instantiation ----

// A stored element as a float and back, inside the loops. The forward's result is always one
// of its inputs, so bfloat16 needs no rounding: widening is a shift and narrowing a truncation,
// with NaNs quieted as bf16_convert.h does (the same bits as its round trip).
[[gnu::always_inline]] inline float widen(float v) { return v; }
[[gnu::always_inline]] inline float widen(BFloat16 v) {
  const uint32_t bits = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
[[gnu::always_inline]] inline float narrow_exact(float v, float) { return v; }
[[gnu::always_inline]] inline BFloat16 narrow_exact(float v, BFloat16) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const auto high = static_cast<uint16_t>(bits >> 16);
  return BFloat16{static_cast<uint16_t>((high & 0x7fff) > 0x7f80 ? high | 0x0040 : high)};
}

// The maximum over `count` input runs of `channels` elements, in registers: one pass over the
// channels, reading each run once and writing out and the argmax once (a running maximum kept
// in `out` instead made GCC emit masked stores whose reloads stall store forwarding, measured
// slower on AVX2 than the SSE build). Strictly greater: ties keep the first position in scan
// order. A NaN is taken and then kept (a number never compares greater than it): pooling
// propagates NaN. kCount > 0 is a window size known at compile time (unrolled); 0 means `count`.
template <int kCount, typename S>
[[gnu::always_inline]] inline void max_of_runs(const S* const* runs, const float* k_of, int count,
                                               int64_t channels, S* __restrict out,
                                               float* __restrict kb) {
  const int n = kCount > 0 ? kCount : count;
  const S* r[kCount > 0 ? kCount : 1];
  if constexpr (kCount > 0) {
#pragma GCC unroll 16
    for (int j = 0; j < kCount; ++j) r[j] = runs[j];
  }
  for (int64_t c = 0; c < channels; ++c) {
    float best = widen(runs[0][c]), k = k_of[0];
#pragma GCC unroll 16
    for (int j = 1; j < n; ++j) {
      const float v = widen(kCount > 0 ? r[j][c] : runs[j][c]);
      const bool take = (v > best) | (v != v);
      best = take ? v : best;
      k = take ? k_of[j] : k;
    }
    out[c] = narrow_exact(best, S{});
    kb[c] = k;
  }
}

// Forward over output rows [begin, end) (row = one (n, oh, ow) position, all channels).
// `best_k` (per thread, `channels` floats) holds the argmax as floats, so the compare-and-select
// loop stays in 32-bit lanes and vectorizes; it becomes bytes once per output row.
template <typename S>
struct ForwardRows {
  [[gnu::always_inline]] static inline void run(const S* src, S* dst, uint8_t* workspace,
                                                const Dims& d, const Pool2dParams& p,
                                                Share rows, float* best_k) {
    const int64_t channels = d.c;
    const S* runs[256];
    float k_of[256];
    // A window inside the image (every one but those at a padded edge) reads its positions at
    // fixed offsets from its corner, in scan order, with argmax index = position.
    const int window = static_cast<int>(p.window_h * p.window_w);
    int64_t offset_of[256];
    for (int j = 0; j < window; ++j) offset_of[j] = ((j / p.window_w) * d.w + j % p.window_w) * channels;
    // (n, oh, ow) of row r, advanced with r instead of divided out of it per row.
    int64_t n = rows.begin / (d.oh * d.ow), oh = (rows.begin / d.ow) % d.oh, ow = rows.begin % d.ow;
    for (int64_t r = rows.begin; r < rows.end; ++r) {
      S* out = dst + r * channels;
      const int64_t ih0 = oh * p.stride_h - p.pad_top, iw0 = ow * p.stride_w - p.pad_left;
      int count = 0;
      if (ih0 >= 0 && iw0 >= 0 && ih0 + p.window_h <= d.h && iw0 + p.window_w <= d.w) {
        const S* corner = src + ((n * d.h + ih0) * d.w + iw0) * channels;
        for (int j = 0; j < window; ++j) {
          runs[j] = corner + offset_of[j];
          k_of[j] = static_cast<float>(j);
        }
        count = window;
      } else {
        // The window's positions inside the image, in scan order.
        for (int64_t kh = 0; kh < p.window_h; ++kh) {
          const int64_t ih = ih0 + kh;
          if (ih < 0 || ih >= d.h) continue;
          for (int64_t kw = 0; kw < p.window_w; ++kw) {
            const int64_t iw = iw0 + kw;
            if (iw < 0 || iw >= d.w) continue;
            runs[count] = src + ((n * d.h + ih) * d.w + iw) * channels;
            k_of[count] = static_cast<float>(kh * p.window_w + kw);
            ++count;
          }
        }
      }
      if (++ow == d.ow) {
        ow = 0;
        if (++oh == d.oh) {
          oh = 0;
          ++n;
        }
      }
      if (count == 4) {
        max_of_runs<4>(runs, k_of, count, channels, out, best_k);
      } else if (count == 9) {
        max_of_runs<9>(runs, k_of, count, channels, out, best_k);
      } else if (count > 0) {
        max_of_runs<0>(runs, k_of, count, channels, out, best_k);
      } else {  // a window entirely in the padding (only with unusual padding): -inf, as TF
        std::fill(out, out + channels, narrow_exact(-INFINITY, S{}));
        std::fill(best_k, best_k + channels, 0.0f);
      }
      if (workspace != nullptr) {
        uint8_t* __restrict arg = workspace + r * channels;
        const float* __restrict kb = best_k;
        for (int64_t c = 0; c < channels; ++c) arg[c] = static_cast<uint8_t>(kb[c]);
      }
    }
  }
};

// Backward over images [begin, end) by scatter-add at the argmax: windows of different images
// never touch the same dx element, so no atomics. bf16 images are summed in float32 (`sums`,
// one image) and rounded once.
template <typename S>
struct BackwardScatterImages {
  [[gnu::always_inline]] static inline void run(const S* grad, S* out, const uint8_t* workspace,
                                                const Dims& d, const Pool2dParams& p,
                                                Share images, float* sums, float* widened,
                                                const int16_t* row_of, const int16_t* col_of) {
    constexpr bool kWide = std::is_same_v<S, float>;
    const int64_t image_size = d.h * d.w * d.c;
    for (int64_t n = images.begin; n < images.end; ++n) {
      float* image;
      if constexpr (kWide) {
        image = out + n * image_size;
      } else {
        image = sums;
      }
      std::memset(image, 0, static_cast<size_t>(image_size) * sizeof(float));
      for (int64_t oh = 0; oh < d.oh; ++oh) {
        for (int64_t ow = 0; ow < d.ow; ++ow) {
          const int64_t r = (n * d.oh + oh) * d.ow + ow;
          const float* g = as_f32(grad + r * d.c, widened, d.c);
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
};

// Windows that never overlap and start at the image's corner (stride >= window, no top or left
// padding: Keras's default 2x2 pooling): every dx element receives at most one gradient, so it
// is written exactly once (the window's gradient where the argmax points, else 0) instead of
// zero-filling the image and scattering into it. No sum is formed, so bfloat16 gradients are
// selected as raw bits. Runs over input rows (n, ih) [begin, end).
bool disjoint_windows(const Pool2dParams& p) {
  return p.stride_h >= p.window_h && p.stride_w >= p.window_w && p.pad_top == 0 && p.pad_left == 0;
}

// Whether a stored element, read as raw bits, is > 0 as a float: sign clear, not zero, not NaN
// (at most +inf). The relu mask of the fused backward, on bits.
template <typename Bits>
[[gnu::always_inline]] inline bool positive_bits(Bits x) {
  using Signed = std::make_signed_t<Bits>;
  constexpr Signed kInfinity = sizeof(Bits) == 4 ? Signed(0x7f800000) : Signed(0x7f80);
  const auto s = static_cast<Signed>(x);
  return s > 0 && s <= kInfinity;
}
// A gradient passed through relu's backward: bfloat16 NaNs come out quiet, as the element-wise
// relu backward gives them (its widen-and-round-back bits); float32 passes through unchanged.
[[gnu::always_inline]] inline uint32_t relu_passed(uint32_t g) { return g; }
[[gnu::always_inline]] inline uint16_t relu_passed(uint16_t g) {
  return (g & 0x7fff) > 0x7f80 ? static_cast<uint16_t>(g | 0x0040) : g;
}

// One dx run of `channels` elements: the gradient where the argmax byte is k, else 0 (and, with
// kReluMasked, 0 where x is not positive). A function so that the no-alias promise is on
// parameters, where GCC keeps it after inlining: on block-scope pointers it was dropped, and
// every position paid the vectorizer's run-time overlap checks.
template <bool kReluMasked, typename Bits>
[[gnu::always_inline]] inline void select_run(Bits* __restrict dst, const Bits* __restrict g,
                                              const uint8_t* __restrict arg,
                                              const Bits* __restrict x, uint8_t k,
                                              int64_t channels) {
  // A mask, not a branch: which position holds the maximum is data, and a branch on it
  // mispredicts (measured: 4x slower than the scatter it replaces); this vectorizes.
  for (int64_t c = 0; c < channels; ++c) {
    bool keep = arg[c] == k;
    Bits v = g[c];
    if constexpr (kReluMasked) {
      keep &= positive_bits(x[c]);
      v = relu_passed(v);
    }
    dst[c] = v & static_cast<Bits>(Bits(0) - static_cast<Bits>(keep));
  }
}

// kReluMasked: dx is also masked by the pooling input's sign (`x`, the activated output of a
// relu that feeds the pooling), giving relu's backward of the pooling's backward in one pass.
template <typename Bits, bool kReluMasked>
struct BackwardDisjointRows {
  [[gnu::always_inline]] static inline void run(const Bits* grad, Bits* out,
                                                const uint8_t* workspace, const Bits* x,
                                                const Dims& d, const Pool2dParams& p, Share rows) {
    for (int64_t r = rows.begin; r < rows.end; ++r) {
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
        Bits* dst = row + iw * d.c;
        if (ow >= d.ow || kw >= p.window_w) {  // a column no window covers
          std::memset(dst, 0, static_cast<size_t>(d.c) * sizeof(Bits));
        } else {
          const Bits* g = g_row + ow * d.c;
          const uint8_t* arg = arg_row + ow * d.c;
          const uint8_t k = static_cast<uint8_t>(kh * p.window_w + kw);
          select_run<kReluMasked>(dst, g, arg, kReluMasked ? x + r * d.w * d.c + iw * d.c : nullptr,
                                  k, d.c);
        }
        if (++kw == p.stride_w) {
          kw = 0;
          ++ow;
        }
      }
    }
  }
};

// ---- one instantiation of a loop per ISA ----

template <typename Loop, typename... Args>
void run_baseline(Args... args) {
  Loop::run(args...);
}

#if GPUACCEL_MAX_POOL_X86
template <typename Loop, typename... Args>
__attribute__((target("avx2,fma"))) void run_avx2(Args... args) {
  Loop::run(args...);
}

template <typename Loop, typename... Args>
__attribute__((target("avx512f"))) void run_avx512(Args... args) {
  Loop::run(args...);
}
#endif

// Runs Loop::run(args...) compiled for the current path.
template <typename Loop, typename... Args>
void run_loop(MaxPoolIsa isa, Args... args) {
#if GPUACCEL_MAX_POOL_X86
  switch (isa) {
    case MaxPoolIsa::kAvx512: return run_avx512<Loop>(args...);
    case MaxPoolIsa::kAvx2: return run_avx2<Loop>(args...);
    case MaxPoolIsa::kBaseline: break;
  }
#endif
  (void)isa;
  run_baseline<Loop>(args...);
}

// ---- the parallel drivers (plain x86-64 code) ----

template <typename S>
void max_pool_forward_typed(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                            uint8_t* workspace) {
  const MaxPoolIsa isa = max_pool_isa();
  const Dims d = dims_of(x, y);
  const int64_t rows = d.n * d.oh * d.ow;
  const auto* src = static_cast<const S*>(x.data);
  auto* dst = static_cast<S*>(y.data);
  run_on_team_if(parallel_worth_it(rows * d.c), [&] {
    std::vector<float> best_k(static_cast<size_t>(d.c));
    run_loop<ForwardRows<S>>(isa, src, dst, workspace, d, p, this_thread_share(rows),
                             best_k.data());
  });
}

template <typename S>
void max_pool_backward_typed(const TensorView& dy, const Pool2dParams& p,
                             const uint8_t* workspace, const TensorView& dx) {
  constexpr bool kWide = std::is_same_v<S, float>;
  const MaxPoolIsa isa = max_pool_isa();
  const Dims d = dims_of(dx, dy);
  const int64_t image_size = d.h * d.w * d.c;
  // Window index -> (kh, kw), so the scatter does no integer division per element.
  int16_t row_of[256], col_of[256];
  for (int k = 0; k < 256; ++k) {
    row_of[k] = static_cast<int16_t>(k / p.window_w);
    col_of[k] = static_cast<int16_t>(k % p.window_w);
  }
  const auto* grad = static_cast<const S*>(dy.data);
  auto* out = static_cast<S*>(dx.data);
  run_on_team_if(parallel_worth_it(d.n * image_size), [&] {
    std::vector<float> sums(kWide ? 0 : static_cast<size_t>(image_size));
    std::vector<float> widened(kWide ? 0 : static_cast<size_t>(d.c));
    run_loop<BackwardScatterImages<S>>(isa, grad, out, workspace, d, p, this_thread_share(d.n),
                                       sums.data(), widened.data(),
                                       static_cast<const int16_t*>(row_of),
                                       static_cast<const int16_t*>(col_of));
  });
}

// `relu_input` (the pooling's input, or null): also mask dx by its sign.
template <typename S>
void max_pool_backward_disjoint(const TensorView& dy, const Pool2dParams& p,
                                const uint8_t* workspace, const TensorView* relu_input,
                                const TensorView& dx) {
  using Bits = std::conditional_t<sizeof(S) == 4, uint32_t, uint16_t>;
  const MaxPoolIsa isa = max_pool_isa();
  const Dims d = dims_of(dx, dy);
  const int64_t rows = d.n * d.h;  // input rows (n, ih)
  const auto* grad = static_cast<const Bits*>(dy.data);
  auto* out = static_cast<Bits*>(dx.data);
  const Bits* x = relu_input != nullptr ? static_cast<const Bits*>(relu_input->data) : nullptr;
  run_on_team_if(parallel_worth_it(rows * d.w * d.c), [&] {
    if (x != nullptr) {
      run_loop<BackwardDisjointRows<Bits, true>>(isa, grad, out, workspace, x, d, p,
                                                 this_thread_share(rows));
    } else {
      run_loop<BackwardDisjointRows<Bits, false>>(isa, grad, out, workspace, x, d, p,
                                                  this_thread_share(rows));
    }
  });
}

}  // namespace

bool max_pool_isa_supported(MaxPoolIsa isa) {
  static const CpuInfo info = cpu_info();
  switch (isa) {
    case MaxPoolIsa::kBaseline: return true;
    case MaxPoolIsa::kAvx2: return GPUACCEL_MAX_POOL_X86 && info.avx2 && info.fma;
    case MaxPoolIsa::kAvx512: return GPUACCEL_MAX_POOL_X86 && info.avx512f;
  }
  return false;
}

const char* max_pool_isa_name(MaxPoolIsa isa) {
  switch (isa) {
    case MaxPoolIsa::kBaseline: return "baseline";
    case MaxPoolIsa::kAvx2: return "avx2";
    case MaxPoolIsa::kAvx512: return "avx512f";
  }
  return "unknown";
}

MaxPoolIsa max_pool_isa() {
  const int forced = forced_isa.load(std::memory_order_relaxed);
  return forced >= 0 ? static_cast<MaxPoolIsa>(forced) : best_isa();
}

ScopedMaxPoolIsa::ScopedMaxPoolIsa(MaxPoolIsa isa) {
  if (!max_pool_isa_supported(isa)) {
    throw_error(ErrorCode::kInvalidArgument, "max_pool",
                std::string("isa: this CPU cannot run the ") + max_pool_isa_name(isa) +
                    " path (supported: baseline" +
                    (max_pool_isa_supported(MaxPoolIsa::kAvx2) ? ", avx2" : "") +
                    (max_pool_isa_supported(MaxPoolIsa::kAvx512) ? ", avx512f" : "") + ")");
  }
  previous_ = forced_isa.exchange(static_cast<int>(isa));
}

ScopedMaxPoolIsa::~ScopedMaxPoolIsa() { forced_isa.store(previous_); }

bool direct_max_pool_applies(const Pool2dParams& p) {
  return p.kind == PoolKind::kMax && p.window_h > 0 && p.window_w > 0 &&
         p.window_h * p.window_w <= 255;
}

int64_t direct_max_pool_workspace_bytes(const TensorView& y) { return y.numel(); }

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
      if (dx.dtype == DType::kFloat32) {
        return max_pool_backward_disjoint<float>(dy, p, workspace, nullptr, dx);
      }
      return max_pool_backward_disjoint<BFloat16>(dy, p, workspace, nullptr, dx);
    }
    if (dx.dtype == DType::kFloat32) return max_pool_backward_typed<float>(dy, p, workspace, dx);
    return max_pool_backward_typed<BFloat16>(dy, p, workspace, dx);
  }
  const F32Copy dy_copy = to_f32(dy);
  F32Copy dx_copy = f32_like(dx);
  max_pool_backward_typed<float>(dy_copy.view, p, workspace, dx_copy.view);
  store_from_f32(dx_copy.data.data(), dx);
}

bool direct_max_pool_backward_relu(const TensorView& dy, const Pool2dParams& p,
                                   const uint8_t* workspace, const TensorView& x,
                                   const TensorView& dx) {
  if (!disjoint_windows(p) || !native(dy) || !native(dx) || !native(x) || dy.dtype != dx.dtype ||
      x.dtype != dx.dtype) {
    return false;
  }
  if (dx.dtype == DType::kFloat32) {
    max_pool_backward_disjoint<float>(dy, p, workspace, &x, dx);
  } else {
    max_pool_backward_disjoint<BFloat16>(dy, p, workspace, &x, dx);
  }
  return true;
}

}  // namespace gpuaccel::cpu
