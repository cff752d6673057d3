// Does our oneDNN layer (cpu::onednn_matmul, cpu::conv2d_*) cost anything over calling oneDNN
// directly? In one process, interleaved round by round, it times:
//  - matmul 4096^3 in f32 and bf16: ours vs a raw oneDNN matmul primitive created once and
//    reused (plain row-major operands, as ours gets them), and for f32 also vs dnnl_sgemm;
//  - the course CNN's three convolutions (Keras Conv2D(32,3) -> MaxPool(2) -> Conv2D(64,3) ->
//    MaxPool(2) -> Conv2D(64,3), valid padding, 28x28x1 input) at batch 64, one training step's
//    worth: forward, backward-weights (with bias) for all three, backward-data for the second
//    and third (the first layer's input gradient is never needed). The raw peer uses the same
//    oneDNN primitives on the same NHWC activations but keeps the weights in oneDNN's blocked
//    layout across steps (reordered once, outside the timing), the best a framework that
//    stored weights blocked could do; ours reorders the Keras-layout weights in and the weight
//    gradients out on every call. For the backward passes ours may run another of oneDNN's
//    implementations than oneDNN's own first pick, and backward-weights may run it on one
//    OpenMP thread (it times them on the first call: onednn_ops.h, set_conv2d_backward_*_impl),
//    so the raw peer runs the one ours chose (created and run on the same thread count), and
//    where that differs from oneDNN's pick the raw default is timed too and printed beside it (a
//    reader then sees both floors: what oneDNN gives by itself and what ours runs).
// Each call is timed alone, ours and the peer alternating, and the minimum over rounds is
// reported (the machine is shared; the minimum is the least disturbed run), with the ratio
// peer/ours (1.0 = parity, higher is better for ours). Conv lines read
// "op ours/raw ms (ratio)". Build and run: benchmarks/onednn_ops.sh
#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backends/cpu/onednn_ops.h"
#include "core/dtype.h"

namespace {

using Clock = std::chrono::steady_clock;
using gpuaccel::DType;
using gpuaccel::TensorView;
using dnnl::memory;

double seconds(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs each variant `rounds` times, interleaved, after one warm-up call each; returns minima.
std::vector<double> race(const std::vector<std::function<void()>>& variants, int rounds) {
  std::vector<double> best(variants.size(), 1e300);
  for (const auto& v : variants) v();
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < variants.size(); ++i) best[i] = std::min(best[i], seconds(variants[i]));
  return best;
}

TensorView make_view(void* data, DType t, std::vector<int64_t> shape) {
  TensorView v;
  v.data = data;
  v.dtype = t;
  v.ndim = static_cast<int>(shape.size());
  int64_t s = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = s;
    s *= shape[d];
  }
  return v;
}

std::vector<float> random_f32(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// A buffer of n elements of dtype t filled with random values.
std::vector<uint8_t> random_buffer(size_t n, DType t, uint32_t seed) {
  std::vector<float> f = random_f32(n, seed);
  std::vector<uint8_t> b(n * gpuaccel::dtype_size(t));
  if (t == DType::kFloat32) {
    std::memcpy(b.data(), f.data(), n * sizeof(float));
  } else {
    gpuaccel::convert_f32_to_bf16(f.data(), reinterpret_cast<uint16_t*>(b.data()), n);
  }
  return b;
}

memory::data_type dnnl_type(DType t) {
  return t == DType::kFloat32 ? memory::data_type::f32 : memory::data_type::bf16;
}

void bench_matmul(dnnl::engine& eng, dnnl::stream& strm, DType t, int64_t n, int rounds) {
  auto a = random_buffer(static_cast<size_t>(n * n), t, 1);
  auto b = random_buffer(static_cast<size_t>(n * n), t, 2);
  std::vector<uint8_t> c(static_cast<size_t>(n * n) * gpuaccel::dtype_size(t));
  std::vector<uint8_t> c_raw(c.size());
  const TensorView av = make_view(a.data(), t, {n, n}), bv = make_view(b.data(), t, {n, n});
  const TensorView cv = make_view(c.data(), t, {n, n});

  // Raw oneDNN: one primitive, created once.
  const memory::desc md({n, n}, dnnl_type(t), memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(eng, md, md, md);
  dnnl::matmul raw(pd);
  memory am(md, eng, a.data()), bm(md, eng, b.data()), cm(md, eng, c_raw.data());

  std::vector<std::function<void()>> variants{
      [&] { gpuaccel::cpu::onednn_matmul(av, bv, nullptr, cv); },
      [&] {
        raw.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
        strm.wait();
      }};
  if (t == DType::kFloat32) {
    variants.push_back([&] {
      dnnl_sgemm('N', 'N', n, n, n, 1.f, reinterpret_cast<const float*>(a.data()), n,
                 reinterpret_cast<const float*>(b.data()), n, 0.f,
                 reinterpret_cast<float*>(c_raw.data()), n);
    });
  }
  const std::vector<double> s = race(variants, rounds);
  const double flop = 2.0 * n * n * n;
  std::printf("matmul %lldx%lldx%lld %-8s ours %7.1f ms (%6.1f GFLOP/s) | raw oneDNN %7.1f ms  "
              "ratio raw/ours %.3f (target >= 0.9)",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              gpuaccel::dtype_name(t), s[0] * 1e3, flop / s[0] * 1e-9, s[1] * 1e3, s[1] / s[0]);
  if (t == DType::kFloat32) {
    std::printf(" | dnnl_sgemm %7.1f ms  ratio sgemm/ours %.3f", s[2] * 1e3, s[2] / s[0]);
  }
  std::printf("\n");
}

// One convolution layer: shapes, our views, and the raw oneDNN primitives with blocked weights.
struct ConvLayer {
  int64_t n, h, w, c, f, k;
  bool need_dx;
  int64_t oh() const { return h - k + 1; }
  int64_t ow() const { return w - k + 1; }

  std::vector<uint8_t> x, wt, bias, y, dy, dx, dw, db;
  // raw oneDNN
  dnnl::convolution_forward::primitive_desc fwd_pd;
  dnnl::convolution_backward_data::primitive_desc bwd_data_pd;
  dnnl::convolution_backward_weights::primitive_desc bwd_w_pd;
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwd_data;
  dnnl::convolution_backward_weights bwd_w;
  std::vector<uint8_t> w_fwd_blocked, w_bwd_blocked, dw_blocked;
  // oneDNN's backward-data implementation that ours chose, when not oneDNN's first pick.
  bool chosen_differs = false;
  dnnl::convolution_backward_data::primitive_desc chosen_pd;
  dnnl::convolution_backward_data chosen;
  std::vector<uint8_t> w_chosen_blocked;
  // The same for backward-weights, with the thread count it runs on (0: all).
  bool chosen_w_differs = false;
  int chosen_w_threads = 0;
  dnnl::convolution_backward_weights::primitive_desc chosen_w_pd;
  dnnl::convolution_backward_weights chosen_w;
  std::vector<uint8_t> dw_chosen_blocked;

  void init(dnnl::engine& eng, dnnl::stream& strm, DType t, uint32_t seed) {
    const size_t es = gpuaccel::dtype_size(t);
    x = random_buffer(static_cast<size_t>(n * h * w * c), t, seed);
    wt = random_buffer(static_cast<size_t>(k * k * c * f), t, seed + 1);
    bias = random_buffer(static_cast<size_t>(f), t, seed + 2);
    dy = random_buffer(static_cast<size_t>(n * oh() * ow() * f), t, seed + 3);
    y.resize(dy.size());
    dx.resize(x.size());
    dw.resize(wt.size());
    db.resize(bias.size());
    (void)es;

    const memory::data_type dt = dnnl_type(t);
    const memory::desc x_md({n, c, h, w}, dt, memory::format_tag::nhwc);
    const memory::desc y_md({n, f, oh(), ow()}, dt, memory::format_tag::nhwc);
    const memory::desc w_any({f, c, k, k}, dt, memory::format_tag::any);
    const memory::desc w_user({f, c, k, k}, dt, memory::format_tag::hwio);
    const memory::desc b_md({f}, dt, memory::format_tag::a);
    const memory::dims st{1, 1}, pad{0, 0};
    fwd_pd = dnnl::convolution_forward::primitive_desc(
        eng, dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x_md, w_any,
        b_md, y_md, st, pad, pad);
    bwd_data_pd = dnnl::convolution_backward_data::primitive_desc(
        eng, dnnl::algorithm::convolution_direct, x_md, w_any, y_md, st, pad, pad, fwd_pd);
    bwd_w_pd = dnnl::convolution_backward_weights::primitive_desc(
        eng, dnnl::algorithm::convolution_direct, x_md, w_any, b_md, y_md, st, pad, pad, fwd_pd);
    fwd = dnnl::convolution_forward(fwd_pd);
    bwd_data = dnnl::convolution_backward_data(bwd_data_pd);
    bwd_w = dnnl::convolution_backward_weights(bwd_w_pd);
    // Weights reordered once into each primitive's layout (outside the timing).
    w_fwd_blocked.resize(fwd_pd.weights_desc().get_size());
    w_bwd_blocked.resize(bwd_data_pd.weights_desc().get_size());
    dw_blocked.resize(bwd_w_pd.diff_weights_desc().get_size());
    memory wu(w_user, eng, wt.data());
    memory wf(fwd_pd.weights_desc(), eng, w_fwd_blocked.data());
    memory wb(bwd_data_pd.weights_desc(), eng, w_bwd_blocked.data());
    dnnl::reorder(wu, wf).execute(strm, wu, wf);
    dnnl::reorder(wu, wb).execute(strm, wu, wb);
    strm.wait();
  }

  // After ours has run backward-data once: the raw primitive of the implementation it chose
  // (an empty name or one oneDNN does not list for these raw operands: oneDNN's pick).
  void init_chosen(dnnl::engine& eng, dnnl::stream& strm, DType t, const std::string& name) {
    const memory::data_type dt = dnnl_type(t);
    const memory::desc x_md({n, c, h, w}, dt, memory::format_tag::nhwc);
    const memory::desc y_md({n, f, oh(), ow()}, dt, memory::format_tag::nhwc);
    const memory::desc w_any({f, c, k, k}, dt, memory::format_tag::any);
    const memory::dims st{1, 1}, pad{0, 0};
    dnnl::convolution_backward_data::primitive_desc it(
        eng, dnnl::algorithm::convolution_direct, x_md, w_any, y_md, st, pad, pad, fwd_pd);
    chosen_differs = false;
    do {
      if (name == it.impl_info_str()) {
        chosen_differs = name != bwd_data_pd.impl_info_str();
        break;
      }
    } while (it.next_impl());
    if (!chosen_differs) return;
    chosen_pd = dnnl::convolution_backward_data::primitive_desc(it.get());
    chosen = dnnl::convolution_backward_data(chosen_pd);
    w_chosen_blocked.resize(chosen_pd.weights_desc().get_size());
    memory wu(memory::desc({f, c, k, k}, dt, memory::format_tag::hwio), eng, wt.data());
    memory wc(chosen_pd.weights_desc(), eng, w_chosen_blocked.data());
    dnnl::reorder(wu, wc).execute(strm, wu, wc);
    strm.wait();
  }

  // After ours has run backward-weights once: the raw primitive of the candidate it chose
  // ("<impl>@1thread": descriptor and primitive created on one thread, and run on one).
  void init_chosen_weights(dnnl::engine& eng, DType t, std::string name) {
    const std::string suffix = "@1thread";
    chosen_w_threads = 0;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      chosen_w_threads = 1;
    }
    const int threads = omp_get_max_threads();
    if (chosen_w_threads > 0) omp_set_num_threads(chosen_w_threads);
    const memory::data_type dt = dnnl_type(t);
    const memory::desc x_md({n, c, h, w}, dt, memory::format_tag::nhwc);
    const memory::desc y_md({n, f, oh(), ow()}, dt, memory::format_tag::nhwc);
    const memory::desc w_any({f, c, k, k}, dt, memory::format_tag::any);
    const memory::desc b_md({f}, dt, memory::format_tag::a);
    const memory::dims st{1, 1}, pad{0, 0};
    dnnl::convolution_backward_weights::primitive_desc it(
        eng, dnnl::algorithm::convolution_direct, x_md, w_any, b_md, y_md, st, pad, pad, fwd_pd);
    const dnnl::convolution_backward_weights::primitive_desc first(it.get());
    bool found = false;
    do {
      found = name == it.impl_info_str();
    } while (!found && it.next_impl());
    chosen_w_pd =
        dnnl::convolution_backward_weights::primitive_desc(found ? it.get() : first.get());
    chosen_w_differs = chosen_w_threads > 0 || name != bwd_w_pd.impl_info_str();
    if (chosen_w_differs) {
      chosen_w = dnnl::convolution_backward_weights(chosen_w_pd);
      dw_chosen_blocked.resize(chosen_w_pd.diff_weights_desc().get_size());
    }
    omp_set_num_threads(threads);
  }

  // The backward-weights candidate ours uses for this layer ("" before its first call), or
  // with `all`, every candidate ours times, comma-separated.
  std::string ours_bwd_weights_impl(DType t, bool all = false) {
    const TensorView dbv = make_view(db.data(), t, {f});
    const TensorView xv = make_view(x.data(), t, {n, h, w, c});
    const TensorView dyv = make_view(dy.data(), t, {n, oh(), ow(), f});
    const TensorView dwv = make_view(dw.data(), t, {k, k, c, f});
    if (!all) {
      return gpuaccel::cpu::conv2d_backward_weights_impl_used(xv, dyv, {}, dwv, &dbv);
    }
    std::string names;
    for (const std::string& name :
         gpuaccel::cpu::conv2d_backward_weights_impls(xv, dyv, {}, dwv, &dbv)) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return names;
  }

  // The backward-data implementation ours uses for this layer ("" before its first call).
  std::string ours_bwd_data_impl(DType t) {
    return gpuaccel::cpu::conv2d_backward_data_impl_used(
        make_view(dy.data(), t, {n, oh(), ow(), f}), make_view(wt.data(), t, {k, k, c, f}),
        gpuaccel::cpu::Conv2dParams{}, make_view(dx.data(), t, {n, h, w, c}));
  }

  // Our three calls, one by one (0: forward, 1: backward data, 2: backward weights + bias).
  void ours(DType t, int which) {
    const TensorView xv = make_view(x.data(), t, {n, h, w, c});
    const TensorView wv = make_view(wt.data(), t, {k, k, c, f});
    const TensorView bv = make_view(bias.data(), t, {f});
    const TensorView yv = make_view(y.data(), t, {n, oh(), ow(), f});
    const TensorView dyv = make_view(dy.data(), t, {n, oh(), ow(), f});
    const TensorView dxv = make_view(dx.data(), t, {n, h, w, c});
    const TensorView dwv = make_view(dw.data(), t, {k, k, c, f});
    const TensorView dbv = make_view(db.data(), t, {f});
    gpuaccel::cpu::Conv2dParams p;
    if (which == 0) gpuaccel::cpu::conv2d_forward(xv, wv, &bv, p, yv);
    if (which == 1) gpuaccel::cpu::conv2d_backward_data(dyv, wv, p, dxv);
    if (which == 2) gpuaccel::cpu::conv2d_backward_weights(xv, dyv, p, dwv, &dbv);
  }

  void raw(dnnl::engine& eng, dnnl::stream& strm, int which) {
    if (which == 0) {
      fwd.execute(strm,
                  {{DNNL_ARG_SRC, memory(fwd_pd.src_desc(), eng, x.data())},
                   {DNNL_ARG_WEIGHTS, memory(fwd_pd.weights_desc(), eng, w_fwd_blocked.data())},
                   {DNNL_ARG_BIAS, memory(fwd_pd.bias_desc(), eng, bias.data())},
                   {DNNL_ARG_DST, memory(fwd_pd.dst_desc(), eng, y.data())}});
    }
    if (which == 1 || which == 3) {  // 1: the implementation ours chose; 3: oneDNN's pick
      const bool own = which == 1 && chosen_differs;
      const auto& pd = own ? chosen_pd : bwd_data_pd;
      (own ? chosen : bwd_data)
          .execute(strm, {{DNNL_ARG_DIFF_DST, memory(pd.diff_dst_desc(), eng, dy.data())},
                          {DNNL_ARG_WEIGHTS,
                           memory(pd.weights_desc(), eng,
                                  own ? w_chosen_blocked.data() : w_bwd_blocked.data())},
                          {DNNL_ARG_DIFF_SRC, memory(pd.diff_src_desc(), eng, dx.data())}});
    }
    if (which == 2 || which == 4) {  // 2: the candidate ours chose; 4: oneDNN's pick
      const bool own = which == 2 && chosen_w_differs;
      const auto& pd = own ? chosen_w_pd : bwd_w_pd;
      const int threads = omp_get_max_threads();
      if (own && chosen_w_threads > 0) omp_set_num_threads(chosen_w_threads);
      (own ? chosen_w : bwd_w)
          .execute(strm, {{DNNL_ARG_SRC, memory(pd.src_desc(), eng, x.data())},
                          {DNNL_ARG_DIFF_DST, memory(pd.diff_dst_desc(), eng, dy.data())},
                          {DNNL_ARG_DIFF_WEIGHTS,
                           memory(pd.diff_weights_desc(), eng,
                                  own ? dw_chosen_blocked.data() : dw_blocked.data())},
                          {DNNL_ARG_DIFF_BIAS, memory(pd.diff_bias_desc(), eng, db.data())}});
      omp_set_num_threads(threads);
    }
    strm.wait();
  }
};

struct CnnTimes {
  double ours = 0, raw = 0;  // raw: the backward implementations (and threads) ours chose
  double raw_default = 0;    // raw with oneDNN's own backward picks throughout
};

// One step's convolutions. `filters` scales every layer's filter count (4: the 4x-filter CNN of
// benchmarks/mixed_precision.py).
CnnTimes bench_cnn(dnnl::engine& eng, dnnl::stream& strm, DType t,
                                    int64_t batch, int rounds, int64_t filters = 1) {
  const int64_t k = filters;
  std::vector<ConvLayer> layers{{batch, 28, 28, 1, 32 * k, 3, false},
                                {batch, 13, 13, 32 * k, 64 * k, 3, true},
                                {batch, 5, 5, 64 * k, 64 * k, 3, true}};
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i].init(eng, strm, t, static_cast<uint32_t>(10 * (i + 1)));
  }
  const char* kNames[] = {"fwd", "bwd_data", "bwd_weights"};
  CnnTimes total;
  std::string choices, weights_choices;
  for (size_t i = 0; i < layers.size(); ++i) {
    ConvLayer& l = layers[i];
    std::printf("  conv%zu %2lldx%2lldx%2lld->%2lld %-8s", i + 1, static_cast<long long>(l.h),
                static_cast<long long>(l.w), static_cast<long long>(l.c),
                static_cast<long long>(l.f), gpuaccel::dtype_name(t));
    for (int which = 0; which < 3; ++which) {
      if (which == 1 && !l.need_dx) continue;
      std::vector<std::function<void()>> variants{[&] { l.ours(t, which); },
                                                  [&] { l.raw(eng, strm, which); }};
      if (which == 1) {
        // Ours chooses its implementation on the first call (primitive creation included).
        const double first_call = seconds([&] { l.ours(t, which); });
        const std::string name = l.ours_bwd_data_impl(t);
        l.init_chosen(eng, strm, t, name);
        char first[64];
        std::snprintf(first, sizeof first, "; first call %.1f ms)", first_call * 1e3);
        choices += "  conv" + std::to_string(i + 1) + ": " + name +
                   (l.chosen_differs ? std::string(" (oneDNN's pick: ") +
                                           l.bwd_data_pd.impl_info_str()
                                     : std::string(" (oneDNN's pick")) +
                   first;
        if (l.chosen_differs) variants.push_back([&] { l.raw(eng, strm, 3); });
      }
      if (which == 2) {
        const double first_call = seconds([&] { l.ours(t, which); });
        const std::string name = l.ours_bwd_weights_impl(t);
        l.init_chosen_weights(eng, t, name);
        char first[64];
        std::snprintf(first, sizeof first, "; first call %.1f ms)", first_call * 1e3);
        weights_choices += "  conv" + std::to_string(i + 1) + ": " + name +
                           (l.chosen_w_differs ? std::string(" (oneDNN's pick: ") +
                                                     l.bwd_w_pd.impl_info_str()
                                               : std::string(" (oneDNN's pick")) +
                           first + " [of " + l.ours_bwd_weights_impl(t, true) + "]";
        if (l.chosen_w_differs) variants.push_back([&] { l.raw(eng, strm, 4); });
      }
      const std::vector<double> s = race(variants, rounds);
      total.ours += s[0];
      total.raw += s[1];
      total.raw_default += s.size() > 2 ? s[2] : s[1];
      std::printf("  %s %.3f/%.3f ms (%.2f)", kNames[which], s[0] * 1e3, s[1] * 1e3, s[1] / s[0]);
      if (s.size() > 2) std::printf(" [raw oneDNN's pick %.3f ms]", s[2] * 1e3);
    }
    std::printf("\n");
  }
  std::printf("  backward-data implementations (setting '%s'):%s\n",
              gpuaccel::cpu::conv2d_backward_data_impl_setting().c_str(), choices.c_str());
  std::printf("  backward-weights implementations (setting '%s'):%s\n",
              gpuaccel::cpu::conv2d_backward_weights_impl_setting().c_str(),
              weights_choices.c_str());
  std::printf("course CNN convs fwd+bwd, batch %lld, %-8s ours %7.3f ms | raw oneDNN %7.3f ms  "
              "ratio raw/ours %.3f (target >= 0.85) | raw with oneDNN's own picks %7.3f ms\n",
              static_cast<long long>(batch), gpuaccel::dtype_name(t), total.ours * 1e3,
              total.raw * 1e3, total.raw / total.ours, total.raw_default * 1e3);
  return total;
}

// Per-call overhead of our layer on a tiny op (softmax over 8 values): ours vs the raw
// primitive executed with memory objects built per call (what any caller with fresh pointers
// pays). Median of many calls.
void bench_tiny(dnnl::engine& eng, dnnl::stream& strm, int calls) {
  std::vector<float> x = random_f32(8, 5), y(8), y_raw(8);
  const TensorView xv = make_view(x.data(), DType::kFloat32, {1, 8});
  const TensorView yv = make_view(y.data(), DType::kFloat32, {1, 8});
  const memory::desc md({1, 8}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::softmax_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_training,
                                           dnnl::algorithm::softmax_accurate, md, md, 1);
  dnnl::softmax_forward raw(pd);
  auto median_of = [&](const std::function<void()>& fn) {
    std::vector<double> t(static_cast<size_t>(calls));
    for (int i = 0; i < 100; ++i) fn();
    for (auto& e : t) e = seconds(fn);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  const double ours = median_of([&] { gpuaccel::cpu::softmax_forward(xv, false, yv); });
  const double peer = median_of([&] {
    raw.execute(strm, {{DNNL_ARG_SRC, memory(md, eng, x.data())},
                       {DNNL_ARG_DST, memory(md, eng, y_raw.data())}});
    strm.wait();
  });
  std::printf("tiny op (softmax of 8 values) per call: ours %.2f us | raw oneDNN %.2f us  "
              "overhead %.2f us\n",
              ours * 1e6, peer * 1e6, (ours - peer) * 1e6);
}

// BatchNormalization's training forward pass as a training step runs it: other work between
// calls, so the OpenMP workers have gone to sleep (GOMP_SPINCOUNT as gpuaccel sets it) when
// the call comes. Ours (cpu::batch_norm_forward: our per-channel statistics, then oneDNN's
// use_global_stats pass) against oneDNN's forward_training primitive, alternating call by
// call; each call's time is kept and the median and mean printed, since the stall this
// guards against (docs/benchmarks.md) comes and goes rather than slowing every call.
void bench_batch_norm(dnnl::engine& eng, dnnl::stream& strm, int64_t rows, int64_t c,
                      int calls) {
  std::vector<float> x = random_f32(static_cast<size_t>(rows * c), 11), y(x.size()),
                     y_raw(x.size()), gamma(c, 1.f), beta(c, 0.f), mean(c), var(c),
                     mean_raw(c), var_raw(c), other(4096);
  const TensorView xv = make_view(x.data(), DType::kFloat32, {rows, c});
  const TensorView yv = make_view(y.data(), DType::kFloat32, {rows, c});
  const auto vec = [](float* p, int64_t n) { return make_view(p, DType::kFloat32, {n}); };
  const memory::desc md({rows, c, 1, 1}, memory::data_type::f32, memory::dims{c, 1, c, c});
  const memory::desc vd({c}, memory::data_type::f32, memory::format_tag::a);
  dnnl::batch_normalization_forward::primitive_desc pd(
      eng, dnnl::prop_kind::forward_training, md, md, 1e-3f,
      dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
  dnnl::batch_normalization_forward raw(pd);
  const auto between_calls = [&] {
#pragma omp parallel for
    for (int i = 0; i < 4096; ++i) other[static_cast<size_t>(i)] += 1.f;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  };
  std::vector<double> ours_ms, raw_ms;
  for (int i = 0; i < calls; ++i) {
    between_calls();
    ours_ms.push_back(1e3 * seconds([&] {
      gpuaccel::cpu::batch_norm_forward(xv, vec(gamma.data(), c), vec(beta.data(), c),
                                        vec(mean.data(), c), vec(var.data(), c), 1e-3, true, yv);
    }));
    between_calls();
    raw_ms.push_back(1e3 * seconds([&] {
      raw.execute(strm, {{DNNL_ARG_SRC, memory(md, eng, x.data())},
                         {DNNL_ARG_DST, memory(md, eng, y_raw.data())},
                         {DNNL_ARG_SCALE, memory(vd, eng, gamma.data())},
                         {DNNL_ARG_SHIFT, memory(vd, eng, beta.data())},
                         {DNNL_ARG_MEAN, memory(pd.mean_desc(), eng, mean_raw.data())},
                         {DNNL_ARG_VARIANCE, memory(pd.variance_desc(), eng, var_raw.data())}});
      strm.wait();
    }));
  }
  const auto describe = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    double total = 0;
    for (double v : t) total += v;
    char text[160];
    std::snprintf(text, sizeof text, "median %.3f mean %.3f max %.3f ms", t[t.size() / 2],
                  total / static_cast<double>(t.size()), t.back());
    return std::string(text);
  };
  double largest_difference = 0;
  for (int64_t j = 0; j < c; ++j)
    largest_difference = std::max<double>(largest_difference, std::fabs(var[j] - var_raw[j]));
  std::printf("batch norm training forward (%lld x %lld, %d calls, workers asleep between "
              "calls):\n  ours: %s\n  raw oneDNN forward_training (%s): %s\n  largest variance "
              "difference %.2e\n",
              static_cast<long long>(rows), static_cast<long long>(c), calls,
              describe(ours_ms).c_str(), pd.impl_info_str(), describe(raw_ms).c_str(),
              largest_difference);
}

}  // namespace

// `--cnn-floor BATCH f32|bf16 FILTERS ROUNDS`: only the course CNN's convolutions, ending with
// a line "CNN_FLOOR_MS raw=<ms> ours=<ms> raw_default=<ms>" whose raw= benchmarks/train_cnn.py
// and mixed_precision.py read (the raw oneDNN convolution floor of their step, measured in the
// same invocation, with the backward implementations and thread counts ours runs); raw_default=
// is the same floor with oneDNN's own backward picks (equal when ours chose those).
int cnn_floor(int argc, char** argv, dnnl::engine& eng, dnnl::stream& strm) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: onednn_ops_bench --cnn-floor BATCH f32|bf16 FILTERS ROUNDS\n");
    return 2;
  }
  const DType t = std::string(argv[3]) == "bf16" ? DType::kBFloat16 : DType::kFloat32;
  const CnnTimes times = bench_cnn(eng, strm, t, std::atoll(argv[2]), std::atoi(argv[5]),
                                   std::atoll(argv[4]));
  std::printf("CNN_FLOOR_MS raw=%.4f ours=%.4f raw_default=%.4f\n", times.raw * 1e3,
              times.ours * 1e3, times.raw_default * 1e3);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--batch-norm") {  // ROWS CHANNELS CALLS
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    bench_batch_norm(eng, strm, argc > 2 ? std::atoll(argv[2]) : 8192,
                     argc > 3 ? std::atoll(argv[3]) : 8, argc > 4 ? std::atoi(argv[4]) : 200);
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--cnn-floor") {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    return cnn_floor(argc, argv, eng, strm);
  }
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int matmul_rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const int conv_rounds = argc > 3 ? std::atoi(argv[3]) : 30;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("oneDNN %d.%d.%d, effective ISA 0x%x, %d OpenMP threads; min of interleaved rounds "
              "(matmul %d, conv %d)\n",
              dnnl_version()->major, dnnl_version()->minor, dnnl_version()->patch,
              static_cast<unsigned>(dnnl_get_effective_cpu_isa()), omp_get_max_threads(),
              matmul_rounds, conv_rounds);
  bench_matmul(eng, strm, DType::kFloat32, n, matmul_rounds);
  bench_matmul(eng, strm, DType::kBFloat16, n, matmul_rounds);
  bench_cnn(eng, strm, DType::kFloat32, 64, conv_rounds);
  bench_cnn(eng, strm, DType::kBFloat16, 64, conv_rounds);
  bench_tiny(eng, strm, 20001);
  std::printf("primitives created by ours: %lld, cache entries: %lld\n",
              static_cast<long long>(gpuaccel::cpu::onednn_primitives_created()),
              static_cast<long long>(gpuaccel::cpu::onednn_primitive_cache_size()));
  return 0;
}
