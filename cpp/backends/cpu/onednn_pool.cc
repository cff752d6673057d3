// cpu::pool2d_* (onednn_ops.h) on oneDNN's pooling primitives, NHWC in and out. Max pooling
// keeps oneDNN's workspace (the argmax positions) in a caller-owned buffer between forward and
// backward; average pooling excludes padding from the divisor, as Keras does. f16 is staged
// through f32 (the workspace then belongs to the f32 primitive, forward and backward alike).
#include <cstring>

#include "backends/cpu/max_pool.h"
#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;

namespace {

memory::desc nhwc_desc(const TensorView& v, DType dtype) {
  const int64_t n = v.shape[0], h = v.shape[1], w = v.shape[2], c = v.shape[3];
  return strided_desc({n, c, h, w}, dtype, {h * w * c, 1, w * c, c});
}

dnnl::algorithm algorithm_of(const Pool2dParams& p) {
  return p.kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                  : dnnl::algorithm::pooling_avg_exclude_padding;
}

// The dtype the primitive computes in: f16 is staged through f32.
DType compute_dtype(DType t) { return staged_through_f32(t) ? DType::kFloat32 : t; }

dnnl::pooling_forward::primitive_desc forward_pd(
    const TensorView& x, const TensorView& y, const Pool2dParams& p, DType dtype, bool training,
    const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
  return dnnl::pooling_forward::primitive_desc(
      engine(), training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
      algorithm_of(p), nhwc_desc(x, dtype), nhwc_desc(y, dtype), {p.stride_h, p.stride_w},
      {p.window_h, p.window_w}, {0, 0}, {p.pad_top, p.pad_left}, {p.pad_bottom, p.pad_right},
      attr);
}

KeyBuilder pool_key(const char* op, const TensorView& x, const TensorView& y,
                    const Pool2dParams& p) {
  KeyBuilder key(op);
  key.add(x).add(y).add(static_cast<int64_t>(p.kind));
  key.add(p.window_h).add(p.window_w).add(p.stride_h).add(p.stride_w);
  key.add(p.pad_top).add(p.pad_bottom).add(p.pad_left).add(p.pad_right);
  return key;
}

// The cached forward entry (training: with a workspace for max pooling).
std::shared_ptr<PrimitiveEntry<dnnl::pooling_forward>> forward_entry(const TensorView& x,
                                                                    const TensorView& y,
                                                                    const Pool2dParams& p,
                                                                    bool training) {
  return cached_primitive<dnnl::pooling_forward>(
      pool_key(training ? "pool_fwd_train" : "pool_fwd_infer", x, y, p),
      [&] { return forward_pd(x, y, p, compute_dtype(x.dtype), training, default_attr()); });
}

void forward_native(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                    void* workspace) {
  const bool training = workspace != nullptr && p.kind == PoolKind::kMax;
  auto e = forward_entry(x, y, p, training);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, make_memory(e->pd.src_desc(), x.data)},
                                       {DNNL_ARG_DST, make_memory(e->pd.dst_desc(), y.data)},
                                       {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e->pd)}};
  if (training) args[DNNL_ARG_WORKSPACE] = make_memory(e->pd.workspace_desc(), workspace);
  e->prim.execute(stream(), args);
  stream().wait();
}

void backward_native(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                     const TensorView& dx) {
  auto e = cached_primitive<dnnl::pooling_backward>(pool_key("pool_bwd", dx, dy, p), [&] {
    const DType t = compute_dtype(dy.dtype);
    const auto hint = forward_pd(dx, dy, p, t, true);
    return dnnl::pooling_backward::primitive_desc(
        engine(), algorithm_of(p), nhwc_desc(dx, t), nhwc_desc(dy, t), {p.stride_h, p.stride_w},
        {p.window_h, p.window_w}, {0, 0}, {p.pad_top, p.pad_left}, {p.pad_bottom, p.pad_right},
        hint, default_attr());
  });
  std::unordered_map<int, memory> args{
      {DNNL_ARG_DIFF_DST, make_memory(e->pd.diff_dst_desc(), dy.data)},
      {DNNL_ARG_DIFF_SRC, make_memory(e->pd.diff_src_desc(), dx.data)},
      {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e->pd)}};
  if (p.kind == PoolKind::kMax) {
    args[DNNL_ARG_WORKSPACE] = make_memory(e->pd.workspace_desc(), workspace);
  }
  e->prim.execute(stream(), args);
  stream().wait();
}

}  // namespace

int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p, const TensorView& y) {
  if (p.kind != PoolKind::kMax || y.numel() == 0) return 0;
  if (direct_max_pool_applies(p)) return direct_max_pool_workspace_bytes(y);
  int64_t bytes = 0;
  guarded("MaxPool", [&] {
    TensorView xc = x, yc = y;
    xc.dtype = yc.dtype = compute_dtype(x.dtype);  // the key of the primitive forward will use
    bytes = static_cast<int64_t>(forward_entry(xc, yc, p, true)->pd.workspace_desc().get_size());
  });
  return bytes;
}

void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                    void* workspace) {
  if (y.numel() == 0) return;
  if (direct_max_pool_applies(p)) {
    direct_max_pool_forward(x, p, y, static_cast<uint8_t*>(workspace));
    return;
  }
  guarded(p.kind == PoolKind::kMax ? "MaxPool" : "AvgPool", [&] {
    if (!staged_through_f32(x.dtype)) {
      forward_native(x, p, y, workspace);
      return;
    }
    F32Copy x32 = to_f32(x), y32 = f32_like(y);
    forward_native(x32.view, p, y32.view, workspace);
    store_from_f32(y32.data.data(), y);
  });
}

void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                     const TensorView& /*x*/, const TensorView& dx) {
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) {
    std::memset(dx.data, 0, static_cast<size_t>(dx.numel()) * elem_size(dx));
    return;
  }
  if (direct_max_pool_applies(p)) {
    direct_max_pool_backward(dy, p, static_cast<const uint8_t*>(workspace), dx);
    return;
  }
  guarded(p.kind == PoolKind::kMax ? "MaxPoolGrad" : "AvgPoolGrad", [&] {
    if (!staged_through_f32(dy.dtype)) {
      backward_native(dy, p, workspace, dx);
      return;
    }
    F32Copy dy32 = to_f32(dy), dx32 = f32_like(dx);
    backward_native(dy32.view, p, workspace, dx32.view);
    store_from_f32(dx32.data.data(), dx);
  });
}

bool pool2d_backward_relu(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                         const TensorView& x, const TensorView& dx) {
  return dx.numel() > 0 && dy.numel() > 0 && direct_max_pool_applies(p) &&
         direct_max_pool_backward_relu(dy, p, static_cast<const uint8_t*>(workspace), x, dx);
}

}  // namespace gpuaccel::cpu
