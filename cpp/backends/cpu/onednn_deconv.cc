// cpu::conv2d_transpose_forward (onednn_ops.h), Keras's Conv2DTranspose, on oneDNN's
// deconvolution primitive: one pass that scatters x through the kernel and adds the bias, where
// conv2d_backward_data plus a bias pass would read y twice. Activations stay NHWC; the Keras
// kernel (KH, KW, F, C) is read as oneDNN's {F, C, KH, KW} deconvolution weights and reordered
// into the primitive's own layout once per weights version (onednn_conv_common.h), as the
// convolution's are. f16 is staged through f32. The gradients need no primitive of their own:
// the op frontend runs the convolution's forward and backward-weights passes (ops/nn.cc).
#include <cstdint>
#include <memory>

#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_conv_common.h"
#include "backends/cpu/onednn_ops.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;

namespace {

// w: (KH, KW, F, C) as oneDNN's deconvolution weights {F (y's channels), C (x's), KH, KW}.
memory::desc transposed_kernel_desc(const TensorView& w) {
  const int64_t kh = w.shape[0], kw = w.shape[1], f = w.shape[2], c = w.shape[3];
  return strided_desc({f, c, kh, kw}, w.dtype, {c, 1, kw * f * c, f * c});
}

using DeconvolutionEntry = ForwardPrimitive<dnnl::deconvolution_forward>;

void forward_native(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y) {
  auto e = cached<DeconvolutionEntry>(forward_key("deconv_fwd", x, w, bias, y, p).str(), [&] {
    auto entry = std::make_shared<DeconvolutionEntry>();
    const Geometry g(p);
    const memory::desc w_any({w.shape[2], w.shape[3], w.shape[0], w.shape[1]}, to_dnnl(w.dtype),
                             memory::format_tag::any);
    const memory::desc x_md = nhwc_desc(x), y_md = nhwc_desc(y);
    if (bias != nullptr) {
      entry->pd = dnnl::deconvolution_forward::primitive_desc(
          engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::deconvolution_direct,
          x_md, w_any, dense_desc({bias->shape[0]}, bias->dtype), y_md, g.strides, g.dilates,
          g.pad_l, g.pad_r, default_attr());
    } else {
      entry->pd = dnnl::deconvolution_forward::primitive_desc(
          engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::deconvolution_direct,
          x_md, w_any, y_md, g.strides, g.dilates, g.pad_l, g.pad_r, default_attr());
    }
    entry->prim = make_primitive<dnnl::deconvolution_forward>(entry->pd);
    entry->weights.init(transposed_kernel_desc(w), entry->pd.weights_desc(), true);
    return entry;
  });
  run_forward(*e, x, w, bias, y);
}

}  // namespace

void conv2d_transpose_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                              const Conv2dParams& p, const TensorView& y) {
  if (y.numel() == 0) return;
  guarded("Conv2DTranspose", [&] {
    if (!staged_through_f32(x.dtype)) {
      forward_native(x, w, bias, p, y);
      return;
    }
    F32Copy x32 = to_f32(x), w32 = to_f32(w), y32 = f32_like(y), b32;
    if (bias != nullptr) b32 = to_f32(*bias);
    forward_native(x32.view, w32.view, bias != nullptr ? &b32.view : nullptr, p, y32.view);
    store_from_f32(y32.data.data(), y);
  });
}

}  // namespace gpuaccel::cpu
