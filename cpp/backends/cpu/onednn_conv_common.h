// What the convolution (onednn_conv.cc) and the transposed convolution (onednn_deconv.cc)
// share on oneDNN: NHWC activation descriptors, the geometry and cache-key part of
// Conv2dParams, the reorder of a Keras kernel into a primitive's own weights layout (the
// reordered copy kept with the weights' storage, tensor/derived_copies.h, so that it is made
// once per weights version and layout), and the forward pass's cache key and run.
#pragma once

#include <memory>
#include <unordered_map>

#include "backends/conv_params.h"
#include "backends/cpu/onednn_context.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// x/y: (N, H, W, C) as oneDNN {N, C, H, W} in nhwc.
dnnl::memory::desc nhwc_desc(const TensorView& v);

// Conv2dParams as oneDNN's convolution and deconvolution descriptors take them.
struct Geometry {
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  explicit Geometry(const Conv2dParams& p)
      : strides{p.stride_h, p.stride_w},
        dilates{p.dilation_h - 1, p.dilation_w - 1},
        pad_l{p.pad_top, p.pad_left},
        pad_r{p.pad_bottom, p.pad_right} {}
};

void add_params(onednn::KeyBuilder& key, const Conv2dParams& p);

// A reorder between the user's weights and the primitive's, absent when the layouts match.
struct WeightsReorder {
  bool needed = false;
  dnnl::memory::desc user_md, prim_md;
  dnnl::reorder prim;

  void init(const dnnl::memory::desc& user, const dnnl::memory::desc& primitive,
            bool user_to_primitive);
  // Copies between the user's buffer and the primitive's, in the direction given to init().
  void run(void* user_data, void* prim_data, bool user_to_primitive) const;
  bool small() const;
};

// `w` in the layout `reorder` produces: w itself when no reorder is needed, the cached copy of
// this weights version when w's storage keeps derived copies (`keep` holds it for the call),
// else a per-call reorder into this thread's buffer.
void* primitive_weights(const TensorView& w, const WeightsReorder& reorder,
                        std::shared_ptr<void>& keep);

// The cache key of a forward pass `op` on these operands.
onednn::KeyBuilder forward_key(const char* op, const TensorView& x, const TensorView& w,
                               const TensorView* bias, const TensorView& y, const Conv2dParams& p);

// A cached forward primitive (convolution_forward or deconvolution_forward) and the reorder
// of the user's weights into its layout.
template <class Prim>
struct ForwardPrimitive : onednn::PrimitiveEntry<Prim> {
  WeightsReorder weights;
};

// Runs `e` on x, w (the user's layout), the bias (or nullptr) and y, and waits for it.
template <class Prim>
void run_forward(const ForwardPrimitive<Prim>& e, const TensorView& x, const TensorView& w,
                 const TensorView* bias, const TensorView& y) {
  using onednn::make_memory;
  std::shared_ptr<void> keep_weights;
  void* w_data = primitive_weights(w, e.weights, keep_weights);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, make_memory(e.pd.src_desc(), x.data)},
      {DNNL_ARG_WEIGHTS, make_memory(e.pd.weights_desc(), w_data)},
      {DNNL_ARG_DST, make_memory(e.pd.dst_desc(), y.data)},
      {DNNL_ARG_SCRATCHPAD, onednn::scratchpad_memory(e.pd)}};
  if (bias != nullptr) args[DNNL_ARG_BIAS] = make_memory(e.pd.bias_desc(), bias->data);
  e.prim.execute(onednn::stream(), args);
  onednn::stream().wait();
}

}  // namespace gpuaccel::cpu
