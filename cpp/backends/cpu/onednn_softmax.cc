// cpu::softmax_forward / softmax_backward (onednn_ops.h) on oneDNN's softmax primitives
// (algorithm softmax_accurate or softmax_log), over the last dimension of a contiguous tensor
// seen as (rows, classes). The backward pass needs only y (and dy), as oneDNN's does. f16 is
// staged through f32. oneDNN's max skips NaN, so a row holding NaN would come out as 0 / -inf
// for its other entries; propagate_nan_rows makes the whole row NaN, as NumPy's
// exp(x - max) / sum formula gives (a NaN logit must not hide as a plausible probability).
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;

namespace {

memory::desc rows_desc(const TensorView& v) {
  const int64_t classes = v.ndim == 0 ? 1 : v.shape[v.ndim - 1];
  const int64_t rows = classes == 0 ? 0 : v.numel() / classes;
  return dense_desc({rows, classes}, v.dtype);
}

dnnl::algorithm algorithm_of(bool log) {
  return log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
}

dnnl::softmax_forward::primitive_desc forward_pd(
    const memory::desc& x_md, const memory::desc& y_md, bool log,
    const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
  return dnnl::softmax_forward::primitive_desc(engine(), dnnl::prop_kind::forward_training,
                                               algorithm_of(log), x_md, y_md, 1, attr);
}

void forward_native(const TensorView& x, bool log, const TensorView& y) {
  KeyBuilder key("softmax_fwd");
  key.add(x).add(y).add(static_cast<int64_t>(log));
  auto e = cached_primitive<dnnl::softmax_forward>(
      key, [&] { return forward_pd(rows_desc(x), rows_desc(y), log, default_attr()); });
  e->prim.execute(stream(), {{DNNL_ARG_SRC, make_memory(e->pd.src_desc(), x.data)},
                             {DNNL_ARG_DST, make_memory(e->pd.dst_desc(), y.data)},
                             {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e->pd)}});
  stream().wait();
}

void backward_native(const TensorView& y, const TensorView& dy, bool log, const TensorView& dx) {
  KeyBuilder key("softmax_bwd");
  key.add(y).add(dy).add(dx).add(static_cast<int64_t>(log));
  auto e = cached_primitive<dnnl::softmax_backward>(key, [&] {
    const memory::desc y_md = rows_desc(y), dy_md = rows_desc(dy), dx_md = rows_desc(dx);
    const auto hint = forward_pd(dx_md, y_md, log);
    return dnnl::softmax_backward::primitive_desc(engine(), algorithm_of(log), dx_md, dy_md, y_md,
                                                  1, hint, default_attr());
  });
  e->prim.execute(stream(), {{DNNL_ARG_DST, make_memory(e->pd.dst_desc(), y.data)},
                             {DNNL_ARG_DIFF_DST, make_memory(e->pd.diff_dst_desc(), dy.data)},
                             {DNNL_ARG_DIFF_SRC, make_memory(e->pd.diff_src_desc(), dx.data)},
                             {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e->pd)}});
  stream().wait();
}

// Bit-level NaN tests and quiet NaNs per storage dtype (x and y are contiguous).
bool is_nan_at(const TensorView& v, int64_t i) {
  if (v.dtype == DType::kFloat32) {
    const float f = static_cast<const float*>(v.data)[i];
    return f != f;
  }
  const uint16_t h = static_cast<const uint16_t*>(v.data)[i];
  return v.dtype == DType::kFloat16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0
                                    : (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0;
}

void store_nan(const TensorView& v, int64_t i) {
  if (v.dtype == DType::kFloat32) {
    const uint32_t bits = 0x7fc00000u;
    std::memcpy(static_cast<float*>(v.data) + i, &bits, sizeof bits);
    return;
  }
  static_cast<uint16_t*>(v.data)[i] = v.dtype == DType::kFloat16 ? 0x7e00u : 0x7fc0u;
}

void propagate_nan_rows(const TensorView& x, const TensorView& y) {
  const int64_t classes = x.ndim == 0 ? 1 : x.shape[x.ndim - 1];
  const int64_t rows = classes == 0 ? 0 : x.numel() / classes;
  parallel_for_if(x.numel() >= kParallelMinElements, rows, [&](int64_t r) {
    bool nan = false;
    for (int64_t c = 0; c < classes && !nan; ++c) nan = is_nan_at(x, r * classes + c);
    if (!nan) return;
    for (int64_t c = 0; c < classes; ++c) store_nan(y, r * classes + c);
  });
}

}  // namespace

void softmax_forward(const TensorView& x, bool log, const TensorView& y) {
  if (y.numel() == 0) return;
  // A loss's softmax (batch x classes) is far below a region's worth (cpu_threads.h).
  ScopedOmpThreads serial(y.numel() < kParallelMinElements ? 1 : 0);
  guarded(log ? "LogSoftmax" : "Softmax", [&] {
    if (!staged_through_f32(x.dtype)) {
      forward_native(x, log, y);
    } else {
      F32Copy x32 = to_f32(x), y32 = f32_like(y);
      forward_native(x32.view, log, y32.view);
      store_from_f32(y32.data.data(), y);
    }
    propagate_nan_rows(x, y);
  });
}

void softmax_backward(const TensorView& y, const TensorView& dy, bool log, const TensorView& dx) {
  if (dx.numel() == 0) return;
  ScopedOmpThreads serial(dx.numel() < kParallelMinElements ? 1 : 0);
  guarded(log ? "LogSoftmaxGrad" : "SoftmaxGrad", [&] {
    if (!staged_through_f32(y.dtype)) {
      backward_native(y, dy, log, dx);
      return;
    }
    F32Copy y32 = to_f32(y), dy32 = to_f32(dy), dx32 = f32_like(dx);
    backward_native(y32.view, dy32.view, log, dx32.view);
    store_from_f32(dx32.data.data(), dx);
  });
}

}  // namespace gpuaccel::cpu
