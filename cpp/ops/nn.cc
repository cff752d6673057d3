// Neural-network op frontends and gradients (see nn.h).
#include "ops/nn.h"

#include <cmath>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/deferred_checks.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/op_utils.h"
#include "ops/post_activation.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {

void check_rank(const std::string& op, const Tensor& t, int rank, const char* what,
                const char* layout) {
  if (t.ndim() != rank) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string(what) + " must have rank " + std::to_string(rank) + " " + layout +
                    ", got shape " + shape_to_string(t.shape()));
  }
}

// What conv2d and conv2d_transpose check alike: a defined rank-4 input and kernel
// (`kernel_layout` names the kernel's axes), one device and dtype with the bias, a floating
// input.
void check_conv_operands(const std::string& op, const Tensor& x, const Tensor& w,
                         const Tensor& bias, const char* kernel_layout) {
  check_defined(op, x, "input");
  check_defined(op, w, "kernel");
  check_rank(op, x, 4, "input", "(batch, height, width, channels)");
  check_rank(op, w, 4, "kernel", kernel_layout);
  std::vector<Tensor> all = {x, w};
  if (bias.defined()) all.push_back(bias);
  common_device(op, all);
  common_dtype(op, all);
  check_kernel_floating(op, x);
}

constexpr const char* kTransposedKernelLayout = "(height, width, filters, in_channels)";

// TF's output size and padding for one spatial dimension.
struct Resolved {
  int64_t out = 0, pad_before = 0, pad_after = 0;
  int64_t stride = 1;  // the stride the kernels get: at most the input size (see resolve)
};
Resolved resolve(const std::string& op, int64_t in, int64_t window, int64_t stride,
                 int64_t dilation, Padding padding) {
  if (stride < 1 || dilation < 1 || window < 1) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "strides, dilations and window sizes must be >= 1, got stride " +
                    std::to_string(stride) + ", dilation " + std::to_string(dilation) +
                    ", window " + std::to_string(window));
  }
  // The dilated window, and below the padding, in checked arithmetic: a window or dilation
  // near 2^63 must be an error, not a wrapped-around negative size.
  int64_t effective = 0;
  if (__builtin_mul_overflow(window - 1, dilation, &effective) || effective > (int64_t{1} << 40)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "window " + std::to_string(window) + " with dilation " + std::to_string(dilation) +
                    " spans more than 2^40 elements");
  }
  effective += 1;
  Resolved r;
  // A stride beyond the input size leaves one output position, computed the same way with any
  // such stride; the libraries get the input size (oneDNN refuses strides near 2^62).
  r.stride = std::min(stride, std::max<int64_t>(in, 1));
  stride = r.stride;
  if (padding == Padding::kValid) {
    if (in < effective) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "input size " + std::to_string(in) + " is smaller than the window " +
                      std::to_string(effective) + " with padding='valid'");
    }
    r.out = (in - effective) / stride + 1;
  } else {
    r.out = in == 0 ? 0 : (in - 1) / stride + 1;  // ceil(in / stride) without overflow
    const int64_t total =
        r.out == 0 ? 0 : std::max<int64_t>((r.out - 1) * stride + effective - in, 0);
    r.pad_before = total / 2;
    r.pad_after = total - r.pad_before;
  }
  return r;
}

}  // namespace

Padding parse_padding(const std::string& text, const std::string& op) {
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "valid") return Padding::kValid;
  if (t == "same") return Padding::kSame;
  throw_error(ErrorCode::kValue, op,
              "padding must be 'valid' or 'same', got '" + text + "'");
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t stride_h,
              int64_t stride_w, Padding padding, int64_t dilation_h, int64_t dilation_w,
              PostActivation activation, int64_t groups) {
  const std::string op = "Conv2D";
  check_conv_operands(op, x, w, bias, "(height, width, in_channels / groups, filters)");
  if (groups < 1) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "groups must be a positive integer, got " + std::to_string(groups));
  }
  if (w.dim(2) * groups != x.dim(3)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "input has " + std::to_string(x.dim(3)) + " channels but the kernel expects " +
                    std::to_string(w.dim(2) * groups) + " (kernel shape " +
                    shape_to_string(w.shape()) + ", groups " + std::to_string(groups) +
                    ": the kernel's in_channels axis times groups must equal the input's channels)");
  }
  if (w.dim(3) % groups != 0) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "the kernel's " + std::to_string(w.dim(3)) +
                    " filters must be divisible by groups=" + std::to_string(groups));
  }
  if (bias.defined() && (bias.ndim() != 1 || bias.dim(0) != w.dim(3))) {
    throw_error(ErrorCode::kInvalidArgument, op, "bias must have shape (" + std::to_string(w.dim(3)) + ",)");
  }
  // oneDNN and cuDNN reject empty channel and filter counts with an opaque status; a zero
  // batch or spatial size is fine (an empty output).
  if (w.dim(2) == 0 || w.dim(3) == 0) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "a convolution needs at least one input channel and one filter, got kernel shape " +
                    shape_to_string(w.shape()) + " for input shape " + shape_to_string(x.shape()));
  }
  const Resolved rh = resolve(op, x.dim(1), w.dim(0), stride_h, dilation_h, padding);
  const Resolved rw = resolve(op, x.dim(2), w.dim(1), stride_w, dilation_w, padding);
  Conv2dParams p;
  p.stride_h = rh.stride;
  p.stride_w = rw.stride;
  p.dilation_h = dilation_h;
  p.dilation_w = dilation_w;
  p.pad_top = rh.pad_before;
  p.pad_bottom = rh.pad_after;
  p.pad_left = rw.pad_before;
  p.pad_right = rw.pad_after;
  p.groups = groups;

  const Tensor xc = contiguous(x), wc = contiguous(w);
  const Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  Tensor y = Tensor::empty({x.dim(0), rh.out, rw.out, w.dim(3)}, x.dtype(), x.device(), op.c_str());
  if (y.numel() > 0) {
    const TensorView bv = bc.defined() ? bc.view() : TensorView();
    const TensorView* b = bc.defined() ? &bv : nullptr;
    Backend& backend = backend_for_op(op, x.device());
    if (activation == PostActivation::kNone) {
      backend.conv2d_forward(xc.view(), wc.view(), b, p, y.view());
    } else {
      backend.conv2d_forward_activation(xc.view(), wc.view(), b, p, activation, y.view());
    }
  }
  std::vector<Tensor> inputs = {xc, wc};
  if (bc.defined()) inputs.push_back(bc);
  if (!grad_mode_enabled() || !any_needs_grad(inputs)) return y;
  // Decided now, while any tape that watches them is still recording: a first layer's input
  // (the images) needs no gradient, and its backward-data pass would cost as much as the rest
  // of the layer's backward.
  const bool want_dx = needs_grad(xc);
  const bool want_dw = needs_grad(wc) || (bc.defined() && needs_grad(bc));
  // A fused activation's backward reads the activated output: kept as a detached alias of its
  // storage (the node holding y itself would be a reference cycle through y's grad_fn), as the
  // separate activation node kept its input.
  const Tensor y_saved = activation != PostActivation::kNone ? detach(y) : Tensor();
  // The activation's backward is skipped when the consumer of y (max pooling) applied it.
  record_with_context(op, inputs, {y}, [xc, wc, bc, p, want_dx, want_dw, activation, y_saved](
                                           const std::vector<Tensor>& g, BackwardContext& context) {
    const Tensor dy = context.output_activation_applied[0]
                          ? contiguous(g[0])
                          : post_activation_backward(activation, y_saved, g[0]);
    Backend& backend = backend_for(xc.device());
    Tensor dx, dw, db;
    if (want_dx) {
      dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "Conv2DBackpropInput");
      backend.conv2d_backward_data(dy.view(), wc.view(), p, dx.view());
    }
    if (want_dw) {
      dw = Tensor::empty(wc.shape(), wc.dtype(), wc.device(), "Conv2DBackpropFilter");
      db = bc.defined() ? Tensor::empty(bc.shape(), bc.dtype(), bc.device(), "BiasAddGrad") : Tensor();
      const TensorView dbv = db.defined() ? db.view() : TensorView();
      backend.conv2d_backward_weights(xc.view(), dy.view(), p, dw.view(), db.defined() ? &dbv : nullptr);
    }
    std::vector<Tensor> grads = {dx, dw};
    if (db.defined()) grads.push_back(db);
    return grads;
  }, activation);
  return y;
}

// ---- transposed convolution ----

namespace {

int64_t checked_mul(const std::string& op, int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out) || out > (int64_t{1} << 40)) {
    throw_error(ErrorCode::kInvalidArgument, op, std::string(what) + " exceeds 2^40");
  }
  return out;
}

// The length the convolution described by (pad_before, pad_after, kernel, stride, dilation)
// gives an input of `size`: what x's size must be for y of `size`.
int64_t convolved_length(int64_t size, int64_t pad_before, int64_t pad_after, int64_t kernel,
                         int64_t stride, int64_t dilation) {
  const int64_t span = size + pad_before + pad_after - ((kernel - 1) * dilation + 1);
  return span < 0 ? 0 : span / stride + 1;
}

// Every number of the geometry in range, and y's size one whose convolution gives x's.
void check_transpose_axis(const std::string& op, const char* axis, int64_t in, int64_t out,
                          int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_before,
                          int64_t pad_after) {
  const int64_t limit = int64_t{1} << 40;
  const auto in_range = [&](int64_t v, int64_t low) { return v >= low && v <= limit; };
  if (!in_range(stride, 1) || !in_range(dilation, 1) || !in_range(pad_before, 0) ||
      !in_range(pad_after, 0) || !in_range(out, 1)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string(axis) + ": strides and dilations must be >= 1, paddings >= 0 and "
                "the output size >= 1 (each at most 2^40), got stride " + std::to_string(stride) +
                    ", dilation " + std::to_string(dilation) + ", padding (" +
                    std::to_string(pad_before) + ", " + std::to_string(pad_after) +
                    "), output size " + std::to_string(out));
  }
  checked_mul(op, kernel - 1, dilation, "the dilated kernel");
  const int64_t convolved = convolved_length(out, pad_before, pad_after, kernel, stride, dilation);
  if (convolved != in) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string(axis) + ": an output of size " + std::to_string(out) +
                    " does not fit an input of size " + std::to_string(in) +
                    ": the convolution of that output (kernel " + std::to_string(kernel) +
                    ", stride " + std::to_string(stride) + ", dilation " +
                    std::to_string(dilation) + ", padding " + std::to_string(pad_before) + "+" +
                    std::to_string(pad_after) + ") has size " + std::to_string(convolved) +
                    " (output_padding must be smaller than the stride)");
  }
}

}  // namespace

int64_t conv2d_transpose_output_length(int64_t in, int64_t kernel, int64_t stride,
                                       int64_t dilation, Padding padding,
                                       int64_t output_padding) {
  const std::string op = "Conv2DTranspose";
  if (in < 1 || kernel < 1 || stride < 1 || dilation < 1) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "input size, kernel size, stride and dilation must be >= 1, got input " +
                    std::to_string(in) + ", kernel " + std::to_string(kernel) + ", stride " +
                    std::to_string(stride) + ", dilation " + std::to_string(dilation));
  }
  if (output_padding >= stride) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "output_padding must be smaller than the stride, got output_padding " +
                    std::to_string(output_padding) + " with stride " + std::to_string(stride));
  }
  const int64_t effective = checked_mul(op, kernel - 1, dilation, "the dilated kernel") + 1;
  const int64_t scaled = checked_mul(op, in - 1, stride, "the output size");
  if (padding == Padding::kValid) {
    return scaled + effective +
           (output_padding < 0 ? std::max(effective, stride) - effective : output_padding);
  }
  if (output_padding < 0) return scaled + stride;
  return scaled + effective % 2 + output_padding;
}

Conv2dTransposeGeometry conv2d_transpose_geometry(int64_t in_h, int64_t in_w, int64_t kernel_h,
                                                  int64_t kernel_w, int64_t out_h, int64_t out_w,
                                                  int64_t stride_h, int64_t stride_w,
                                                  Padding padding, int64_t dilation_h,
                                                  int64_t dilation_w) {
  const std::string op = "Conv2DTranspose";
  if (out_h < 1 || out_w < 1) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "the output size must be >= 1, got (" + std::to_string(out_h) + ", " +
                    std::to_string(out_w) + ")");
  }
  const Resolved rh = resolve(op, out_h, kernel_h, stride_h, dilation_h, padding);
  const Resolved rw = resolve(op, out_w, kernel_w, stride_w, dilation_w, padding);
  if (rh.out != in_h || rw.out != in_w) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "an output of spatial size (" + std::to_string(out_h) + ", " +
                    std::to_string(out_w) + ") does not fit an input of (" + std::to_string(in_h) +
                    ", " + std::to_string(in_w) + "): convolving that output with padding='" +
                    (padding == Padding::kSame ? "same" : "valid") + "' gives (" +
                    std::to_string(rh.out) + ", " + std::to_string(rw.out) + ")");
  }
  Conv2dTransposeGeometry g;
  g.out_h = out_h;
  g.out_w = out_w;
  g.params.stride_h = rh.stride;
  g.params.stride_w = rw.stride;
  g.params.dilation_h = dilation_h;
  g.params.dilation_w = dilation_w;
  g.params.pad_top = rh.pad_before;
  g.params.pad_bottom = rh.pad_after;
  g.params.pad_left = rw.pad_before;
  g.params.pad_right = rw.pad_after;
  return g;
}

Tensor conv2d_transpose(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const Conv2dTransposeGeometry& g) {
  const std::string op = "Conv2DTranspose";
  check_conv_operands(op, x, w, bias, kTransposedKernelLayout);
  if (w.dim(3) != x.dim(3)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "input has " + std::to_string(x.dim(3)) + " channels but the kernel (height, "
                "width, filters, in_channels) expects " + std::to_string(w.dim(3)) +
                    " (kernel shape " + shape_to_string(w.shape()) + ")");
  }
  if (bias.defined() && (bias.ndim() != 1 || bias.dim(0) != w.dim(2))) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "bias must have shape (" + std::to_string(w.dim(2)) + ",), got " +
                    shape_to_string(bias.shape()));
  }
  if (w.dim(2) == 0 || w.dim(3) == 0 || x.dim(1) == 0 || x.dim(2) == 0) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "a transposed convolution needs at least one input channel, one filter and a "
                "non-empty image, got kernel shape " + shape_to_string(w.shape()) +
                    " for input shape " + shape_to_string(x.shape()));
  }
  const Conv2dParams& p = g.params;
  check_transpose_axis(op, "height", x.dim(1), g.out_h, w.dim(0), p.stride_h, p.dilation_h,
                       p.pad_top, p.pad_bottom);
  check_transpose_axis(op, "width", x.dim(2), g.out_w, w.dim(1), p.stride_w, p.dilation_w,
                       p.pad_left, p.pad_right);

  const Tensor xc = contiguous(x), wc = contiguous(w);
  const Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  Tensor y = Tensor::empty({x.dim(0), g.out_h, g.out_w, w.dim(2)}, x.dtype(), x.device(), op.c_str());
  if (y.numel() > 0) {
    const TensorView bv = bc.defined() ? bc.view() : TensorView();
    backend_for_op(op, x.device())
        .conv2d_transpose_forward(xc.view(), wc.view(), bc.defined() ? &bv : nullptr, p, y.view());
  }
  std::vector<Tensor> inputs = {xc, wc};
  if (bc.defined()) inputs.push_back(bc);
  if (!grad_mode_enabled() || !any_needs_grad(inputs)) return y;
  const bool want_dx = needs_grad(xc), want_dw = needs_grad(wc);
  const bool want_db = bc.defined() && needs_grad(bc);
  // y is the gradient of a convolution of y with respect to its input, so its own gradients
  // are that convolution (d/dx) and its kernel gradient with x and dy in swapped roles (d/dw);
  // the kernel (KH, KW, F, C) is that convolution's (KH, KW, in, out) as it stands.
  record(op, inputs, {y}, [xc, wc, bc, p, want_dx, want_dw, want_db](const std::vector<Tensor>& grads) {
    const Tensor dy = contiguous(grads[0]);
    Backend& backend = backend_for(xc.device());
    Tensor dx, dw, db;
    if (want_dx) {
      dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "Conv2DTransposeBackpropInput");
      backend.conv2d_forward(dy.view(), wc.view(), nullptr, p, dx.view());
    }
    if (want_dw) {
      dw = Tensor::empty(wc.shape(), wc.dtype(), wc.device(), "Conv2DTransposeBackpropFilter");
      backend.conv2d_backward_weights(dy.view(), xc.view(), p, dw.view(), nullptr);
    }
    if (want_db) db = reduce(ReduceOp::kSum, dy, {0, 1, 2}, false);
    std::vector<Tensor> out = {dx, dw};
    if (bc.defined()) out.push_back(db);
    return out;
  });
  return y;
}

Tensor conv2d_transpose(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t out_h,
                        int64_t out_w, int64_t stride_h, int64_t stride_w, Padding padding,
                        int64_t dilation_h, int64_t dilation_w) {
  const std::string op = "Conv2DTranspose";
  check_conv_operands(op, x, w, bias, kTransposedKernelLayout);
  return conv2d_transpose(x, w, bias,
                          conv2d_transpose_geometry(x.dim(1), x.dim(2), w.dim(0), w.dim(1), out_h,
                                                    out_w, stride_h, stride_w, padding,
                                                    dilation_h, dilation_w));
}

Tensor pool2d(const Tensor& x, bool max, int64_t window_h, int64_t window_w, int64_t stride_h,
              int64_t stride_w, Padding padding) {
  const std::string op = max ? "MaxPool" : "AvgPool";
  check_defined(op, x, "input");
  check_rank(op, x, 4, "input", "(batch, height, width, channels)");
  check_kernel_floating(op, x);
  const Resolved rh = resolve(op, x.dim(1), window_h, stride_h, 1, padding);
  const Resolved rw = resolve(op, x.dim(2), window_w, stride_w, 1, padding);
  Pool2dParams p;
  p.kind = max ? PoolKind::kMax : PoolKind::kAverage;
  p.window_h = window_h;
  p.window_w = window_w;
  p.stride_h = rh.stride;
  p.stride_w = rw.stride;
  p.pad_top = rh.pad_before;
  p.pad_bottom = rh.pad_after;
  p.pad_left = rw.pad_before;
  p.pad_right = rw.pad_after;
  const Tensor xc = contiguous(x);
  Tensor y = Tensor::empty({x.dim(0), rh.out, rw.out, x.dim(3)}, x.dtype(), x.device(), op.c_str());
  Backend& backend = backend_for_op(op, x.device());
  // The workspace (max pooling's argmax) is kept only when a backward pass may need it.
  const bool keep_workspace = max && any_needs_grad({xc}) && grad_mode_enabled();
  Tensor workspace;
  if (keep_workspace) {
    const int64_t bytes = backend.pool2d_workspace_bytes(xc.view(), p, y.view());
    workspace = Tensor::empty({std::max<int64_t>(bytes, 1)}, DType::kUInt8, x.device(), op.c_str());
  }
  if (y.numel() > 0) backend.pool2d_forward(xc.view(), p, y.view(), keep_workspace ? workspace.data() : nullptr);
  // When x is the output of an op with a fused activation (Conv2D(activation='relu')) and
  // nothing else reads x's gradient, the activation's backward is done here, in the pass that
  // writes dx (BackwardContext), and the producer skips its own pass over the gradient.
  record_with_context(op, {xc}, {y}, [xc, p, workspace](const std::vector<Tensor>& g,
                                                        BackwardContext& context) {
    const Tensor dy = contiguous(g[0]);
    Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "PoolGrad");
    const void* ws = workspace.defined() ? workspace.data() : nullptr;
    const PostActivation fold = context.foldable_input_activation[0];
    if (fold != PostActivation::kNone) {
      backend_for(xc.device()).pool2d_backward_activation(dy.view(), p, ws, xc.view(), fold, dx.view());
      context.input_activation_applied[0] = true;
    } else {
      backend_for(xc.device()).pool2d_backward(dy.view(), p, ws, xc.view(), dx.view());
    }
    return std::vector<Tensor>{dx};
  });
  return y;
}

namespace {

// Softmax over the last axis from element-wise ops and reductions, for float64 (which the
// softmax kernels of oneDNN and cuDNN lack); autograd differentiates the composition. The row
// maximum is subtracted without a gradient: softmax does not depend on the shift.
Tensor composed_softmax(const Tensor& x, bool log) {
  Tensor row_max;
  {
    GradModeGuard no_grad(false);
    row_max = reduce(ReduceOp::kMax, x, {-1}, true);
  }
  const Tensor shifted = sub(x, row_max);
  const Tensor exps = unary(UnaryOp::kExp, shifted);
  const Tensor sums = reduce_sum(exps, {-1}, true);
  return log ? sub(shifted, unary(UnaryOp::kLog, sums)) : div(exps, sums);
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis, bool log) {
  const std::string op = log ? "LogSoftmax" : "Softmax";
  check_defined(op, x, "logits");
  check_floating(op, x);
  if (x.ndim() == 0) throw_error(ErrorCode::kInvalidArgument, op, "logits must have at least one dimension");
  const int a = normalize_axis(axis, x.ndim(), op);
  if (a != x.ndim() - 1) {
    // The kernels work on the last axis: move `a` there and back.
    const Tensor moved = transpose(x, a, -1);
    return transpose(softmax(moved, -1, log), a, -1);
  }
  if (x.dtype() == DType::kFloat64) return composed_softmax(x, log);
  const Tensor xc = contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), op.c_str());
  if (y.numel() > 0) backend_for_op(op, x.device()).softmax_forward(xc.view(), log, y.view());
  const std::weak_ptr<TensorImpl> y_weak = y.impl_ptr();
  record(op, {xc}, {y}, [xc, log, y_weak](const std::vector<Tensor>& g) {
    const auto kept = y_weak.lock();
    const Tensor ys = kept ? Tensor(kept) : softmax(xc, -1, log);
    const Tensor dy = contiguous(g[0]);
    Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "SoftmaxGrad");
    backend_for(xc.device()).softmax_backward(ys.view(), dy.view(), log, dx.view());
    return std::vector<Tensor>{dx};
  });
  return y;
}

Tensor dropout(const Tensor& x, double rate, bool training) {
  const std::string op = "Dropout";
  check_defined(op, x, "input");
  if (!(rate >= 0.0 && rate < 1.0)) {
    throw_error(ErrorCode::kValue, op, "rate must be in [0, 1), got " + std::to_string(rate));
  }
  if (!training || rate == 0.0) return x;
  check_kernel_floating(op, x);
  const Tensor xc = contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), op.c_str());
  Tensor mask = Tensor::empty(x.shape(), DType::kUInt8, x.device(), op.c_str());
  const uint64_t offset = reserve_random_offset(uint64_t(x.numel()));
  if (y.numel() > 0) {
    backend_for_op(op, x.device()).dropout(xc.view(), rate, random_seed(), offset, y.view(), mask.view());
  }
  record(op, {xc}, {y}, [mask, rate](const std::vector<Tensor>& g) {
    const Tensor keep = cast(mask, g[0].dtype());
    return std::vector<Tensor>{mul(mul(g[0], keep), scalar_like(1.0 / (1.0 - rate), g[0]))};
  });
  return y;
}

Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                  const Tensor& moving_mean, const Tensor& moving_var, double momentum,
                  double epsilon, bool training) {
  const std::string op = "FusedBatchNormV3";
  for (const auto* t : {&x, &gamma, &beta, &moving_mean, &moving_var}) check_defined(op, *t, "argument");
  check_kernel_floating(op, x);
  if (x.ndim() < 2) throw_error(ErrorCode::kInvalidArgument, op, "input needs rank >= 2 (batch, ..., channels)");
  const int64_t channels = x.dim(x.ndim() - 1);
  for (const auto* t : {&gamma, &beta, &moving_mean, &moving_var}) {
    if (t->ndim() != 1 || t->dim(0) != channels || t->dtype() != DType::kFloat32) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "gamma, beta, moving_mean and moving_var must be float32 of shape (" +
                      std::to_string(channels) + ",), got " + t->describe());
    }
  }
  common_device(op, {x, gamma, beta, moving_mean, moving_var});
  const Tensor xc = contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), op.c_str());
  Backend& backend = backend_for_op(op, x.device());
  if (!training) {
    backend.batch_norm_forward(xc.view(), gamma.view(), beta.view(), moving_mean.view(),
                               moving_var.view(), epsilon, false, y.view());
    // Inference: y = (x - m) * gamma / sqrt(v + eps) + beta, with m, v constants.
    record(op, {xc, gamma, beta}, {y}, [xc, gamma, moving_mean, moving_var, epsilon](const std::vector<Tensor>& g) {
      const Tensor inv_std = unary(UnaryOp::kRsqrt, add(moving_var, scalar_like(epsilon, moving_var)));
      const Tensor scale = cast(mul(gamma, inv_std), xc.dtype());
      const Tensor dx = mul(g[0], scale);
      const Tensor xhat = mul(sub(cast(xc, DType::kFloat32), moving_mean), inv_std);
      std::vector<int64_t> axes;
      for (int d = 0; d < xc.ndim() - 1; ++d) axes.push_back(d);
      const Tensor dy32 = cast(g[0], DType::kFloat32);
      return std::vector<Tensor>{dx, reduce_sum(mul(dy32, xhat), axes, false), reduce_sum(dy32, axes, false)};
    });
    return y;
  }
  Tensor mean = Tensor::empty({channels}, DType::kFloat32, x.device(), op.c_str());
  Tensor var = Tensor::empty({channels}, DType::kFloat32, x.device(), op.c_str());
  backend.batch_norm_forward(xc.view(), gamma.view(), beta.view(), mean.view(), var.view(), epsilon, true, y.view());
  {
    // Moving statistics, updated in place outside the graph.
    GradModeGuard no_grad(false);
    const Tensor m = scalar_like(momentum, mean);
    const Tensor one_minus = scalar_like(1.0 - momentum, mean);
    copy_into(add(mul(moving_mean, m), mul(mean, one_minus)), moving_mean);
    copy_into(add(mul(moving_var, m), mul(var, one_minus)), moving_var);
  }
  record(op, {xc, gamma, beta}, {y}, [xc, gamma, mean, var, epsilon](const std::vector<Tensor>& g) {
    const Tensor dy = contiguous(g[0]);
    Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "FusedBatchNormGradV3");
    Tensor dgamma = Tensor::empty(gamma.shape(), DType::kFloat32, xc.device(), "FusedBatchNormGradV3");
    Tensor dbeta = Tensor::empty(gamma.shape(), DType::kFloat32, xc.device(), "FusedBatchNormGradV3");
    backend_for(xc.device()).batch_norm_backward(xc.view(), dy.view(), gamma.view(), mean.view(), var.view(),
                                                 epsilon, dx.view(), dgamma.view(), dbeta.view());
    return std::vector<Tensor>{dx, dgamma, dbeta};
  });
  return y;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon) {
  const std::string op = "LayerNorm";
  for (const auto* t : {&x, &gamma, &beta}) check_defined(op, *t, "argument");
  check_kernel_floating(op, x);
  if (x.ndim() < 1) throw_error(ErrorCode::kInvalidArgument, op, "input needs rank >= 1");
  const int64_t channels = x.dim(x.ndim() - 1);
  for (const auto* t : {&gamma, &beta}) {
    if (t->ndim() != 1 || t->dim(0) != channels || t->dtype() != DType::kFloat32) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "gamma and beta must be float32 of shape (" + std::to_string(channels) + ",), got " +
                      t->describe());
    }
  }
  common_device(op, {x, gamma, beta});
  const Tensor xc = contiguous(x);
  const int64_t rows = x.numel() / std::max<int64_t>(channels, 1);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), op.c_str());
  Tensor mean = Tensor::empty({rows}, DType::kFloat32, x.device(), op.c_str());
  Tensor var = Tensor::empty({rows}, DType::kFloat32, x.device(), op.c_str());
  backend_for_op(op, x.device()).layer_norm_forward(xc.view(), gamma.view(), beta.view(), epsilon,
                                                    y.view(), mean.view(), var.view());
  record(op, {xc, gamma, beta}, {y}, [xc, gamma, mean, var, epsilon](const std::vector<Tensor>& g) {
    const Tensor dy = contiguous(g[0]);
    Tensor dx = Tensor::empty(xc.shape(), xc.dtype(), xc.device(), "LayerNormGrad");
    Tensor dgamma = Tensor::empty(gamma.shape(), DType::kFloat32, xc.device(), "LayerNormGrad");
    Tensor dbeta = Tensor::empty(gamma.shape(), DType::kFloat32, xc.device(), "LayerNormGrad");
    backend_for(xc.device()).layer_norm_backward(xc.view(), dy.view(), gamma.view(), mean.view(), var.view(),
                                                 epsilon, dx.view(), dgamma.view(), dbeta.view());
    return std::vector<Tensor>{dx, dgamma, dbeta};
  });
  return y;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes, DType dtype) {
  const std::string op = "OneHot";
  if (labels.dtype() != DType::kInt32 && labels.dtype() != DType::kInt64) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("labels must be int32 or int64, got ") + dtype_name(labels.dtype()));
  }
  if (num_classes < 0) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "depth must be non-negative, got " + std::to_string(num_classes));
  }
  const Tensor classes = arange(0, double(num_classes), 1, labels.dtype(), labels.device());
  return cast(binary(BinaryOp::kEqual, expand_dims(labels, -1), classes), dtype);
}

namespace {
// InvalidArgumentError when an integer tensor holds values outside [0, limit). Inside a training
// step (a DeferredChecks is active) the min and max stay on the device and the error is raised
// at the step results' next read (ops/deferred_checks.h); otherwise they are read here.
void check_index_range(const std::string& op, const Tensor& ids, int64_t limit, const char* what) {
  if (ids.numel() == 0) return;
  GradModeGuard no_grad(false);
  const Tensor as_int64 = cast(ids, DType::kInt64);
  const Tensor lo = reduce(ReduceOp::kMin, as_int64, {}, false);
  const Tensor hi = reduce(ReduceOp::kMax, as_int64, {}, false);
  if (DeferredChecks* deferred = DeferredChecks::active()) {
    deferred->record_index_range(op, what, limit, lo, hi);
    return;
  }
  const LogicalDevice host = DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
  const int64_t min_value = *static_cast<const int64_t*>(to_device(lo, host).data());
  const int64_t max_value = *static_cast<const int64_t*>(to_device(hi, host).data());
  if (min_value < 0 || max_value >= limit) {
    throw_index_range_error(op, what, limit, min_value, max_value);
  }
}
}  // namespace

namespace {

// `ids` as the contiguous int64 vector the row-gather kernels take.
Tensor flat_int64(const Tensor& ids) {
  return contiguous(cast(reshape(ids, {ids.numel()}), DType::kInt64));
}

Tensor scatter_add_rows_of(const Tensor& rows, const Tensor& flat_ids, int64_t num_rows,
                           const std::string& op);

// table[flat_ids] with shape ids_shape + (D,); differentiable in the table (its gradient is
// the scatter-add). The kernels' cost and memory grow with ids x width, not with the vocabulary
// (the one-hot product they replaced grew with ids x vocabulary).
Tensor gather_rows_of(const Tensor& table, const Tensor& flat_ids, const Shape& ids_shape,
                      const std::string& op) {
  const Tensor source = contiguous(table);
  const int64_t width = table.dim(1);
  Tensor out = Tensor::empty({flat_ids.numel(), width}, table.dtype(), table.device(), op.c_str());
  if (out.numel() > 0) {
    backend_for_op(op, table.device()).gather_rows(source.view(), flat_ids.view(), out.view());
  }
  if (is_floating(table.dtype())) {
    const int64_t num_rows = table.dim(0);
    record(op, {source}, {out}, [flat_ids, num_rows](const std::vector<Tensor>& g) {
      return std::vector<Tensor>{scatter_add_rows_of(g[0], flat_ids, num_rows, "ResourceGatherGrad")};
    });
  }
  Shape shape = ids_shape;
  shape.push_back(width);
  return reshape(out, shape);
}

// `table` (num_rows, D) with each rows[i] combined into its row flat_ids[i], in order of i (the
// backend's scatter_rows), out of autograd. float16/bfloat16 sums and products are taken in
// float32 and rounded once, as the matrix products they replaced accumulated: a word repeated
// a hundred times in a batch would otherwise lose bits at every add.
Tensor scatter_rows_into(Tensor table, const Tensor& rows, const Tensor& flat_ids, RowCombine combine,
                         const std::string& op) {
  GradModeGuard no_grad(false);  // the casts are part of the caller's op, not nodes of their own
  const DType dtype = rows.dtype();
  const bool widen = (dtype == DType::kFloat16 || dtype == DType::kBFloat16) &&
                     (combine == RowCombine::kAdd || combine == RowCombine::kMultiply);
  const Tensor source = contiguous(widen ? cast(rows, DType::kFloat32) : rows);
  if (widen) table = cast(table, DType::kFloat32);
  table = contiguous(table);
  if (source.numel() > 0 && table.numel() > 0) {
    backend_for_op(op, source.device()).scatter_rows(source.view(), flat_ids.view(), table.view(), combine);
  }
  return widen ? cast(table, dtype) : table;
}

// out[s] = the sum of rows[i] with flat_ids[i] == s, out (num_rows, D); differentiable in
// floating rows (its gradient is the gather).
Tensor scatter_add_rows_of(const Tensor& rows, const Tensor& flat_ids, int64_t num_rows,
                           const std::string& op) {
  const Tensor source = contiguous(rows);
  const Tensor out = scatter_rows_into(zeros({num_rows, source.dim(1)}, source.dtype(), source.device()),
                                       source, flat_ids, RowCombine::kAdd, op);
  if (is_floating(source.dtype())) {
    record(op, {source}, {out}, [flat_ids, op](const std::vector<Tensor>& g) {
      return std::vector<Tensor>{gather_rows_of(g[0], flat_ids, {flat_ids.numel()}, op + "Grad")};
    });
  }
  return out;
}

}  // namespace

Tensor embedding(const Tensor& ids, const Tensor& table) {
  const std::string op = "ResourceGather";
  check_defined(op, ids, "ids");
  check_defined(op, table, "embeddings");
  if (table.ndim() != 2) {
    throw_error(ErrorCode::kInvalidArgument, op, "embeddings must be (vocabulary, dim), got " + shape_to_string(table.shape()));
  }
  if (ids.dtype() != DType::kInt32 && ids.dtype() != DType::kInt64) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("ids must be int32 or int64, got ") + dtype_name(ids.dtype()));
  }
  common_device(op, {ids, table});
  check_index_range(op, ids, table.dim(0), "ids");
  return gather_rows_of(table, flat_int64(ids), ids.shape(), op);
}

namespace {

// The arguments every segment op over rows takes: data (N, D) floating, int32 or int64, one
// integer id per row, and a segment count >= 0, on one device.
void check_segment_arguments(const std::string& op, const Tensor& rows, const Tensor& ids,
                             int64_t num_segments) {
  check_defined(op, rows, "data");
  check_defined(op, ids, "segment_ids");
  if (rows.ndim() != 2 || ids.numel() != rows.dim(0)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "data must be (N, D) with one segment id per row, got data " +
                    shape_to_string(rows.shape()) + " and " + std::to_string(ids.numel()) + " ids");
  }
  if (ids.dtype() != DType::kInt32 && ids.dtype() != DType::kInt64) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("segment_ids must be int32 or int64, got ") + dtype_name(ids.dtype()));
  }
  if (!is_floating(rows.dtype()) && rows.dtype() != DType::kInt32 && rows.dtype() != DType::kInt64) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("data must be floating, int32 or int64, got ") + dtype_name(rows.dtype()));
  }
  if (num_segments < 0) {
    throw_error(ErrorCode::kInvalidArgument, op, "num_segments must be >= 0, got " + std::to_string(num_segments));
  }
  common_device(op, {rows, ids});
}

// The value of an empty segment: the dtype's lowest (for a max) or highest finite value.
double extreme_identity(DType dtype, bool is_max) {
  double highest = 0;
  switch (dtype) {
    case DType::kFloat32: highest = 3.4028234663852886e38; break;
    case DType::kFloat64: highest = 1.7976931348623157e308; break;
    case DType::kFloat16: highest = 65504.0; break;
    case DType::kBFloat16: highest = 3.3895313892515355e38; break;
    // int64's bounds saturate from these doubles (2^63 is one past its highest)
    case DType::kInt32: return is_max ? -2147483648.0 : 2147483647.0;
    case DType::kInt64: return is_max ? -9223372036854775808.0 : 9223372036854775808.0;
    default: break;
  }
  return is_max ? -highest : highest;
}

}  // namespace

Tensor segment_sum_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments) {
  const std::string op = "UnsortedSegmentSum";
  check_segment_arguments(op, rows, ids, num_segments);
  return scatter_add_rows_of(rows, flat_int64(ids), num_segments, op);
}

Tensor segment_extreme_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments,
                            bool is_max) {
  const std::string op = is_max ? "UnsortedSegmentMax" : "UnsortedSegmentMin";
  check_segment_arguments(op, rows, ids, num_segments);
  const Tensor source = contiguous(rows);
  const Tensor flat_ids = flat_int64(ids);
  const Tensor out = scatter_rows_into(
      full({num_segments, source.dim(1)}, extreme_identity(source.dtype(), is_max), source.dtype(),
           source.device()),
      source, flat_ids, is_max ? RowCombine::kMax : RowCombine::kMin, op);
  if (!is_floating(source.dtype())) return out;
  const Tensor result = detach(out);  // the values, without a reference from out's own node
  record(op, {source}, {out}, [source, flat_ids, result, num_segments, op](const std::vector<Tensor>& g) {
    // TF's rule: the rows equal to their segment's result share its gradient evenly.
    const Tensor reached = gather_rows_of(result, flat_ids, {flat_ids.numel()}, op + "Grad");
    const Tensor selected = cast(binary(BinaryOp::kEqual, source, reached), source.dtype());
    const Tensor ties = scatter_add_rows_of(selected, flat_ids, num_segments, op + "Grad");
    const Tensor shared = binary(BinaryOp::kDiv, g[0], ties);  // inf only where nothing reads it
    return std::vector<Tensor>{
        mul(gather_rows_of(shared, flat_ids, {flat_ids.numel()}, op + "Grad"), selected)};
  });
  return out;
}

Tensor segment_prod_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments) {
  const std::string op = "UnsortedSegmentProd";
  check_segment_arguments(op, rows, ids, num_segments);
  const Tensor source = contiguous(rows);
  const Tensor flat_ids = flat_int64(ids);
  const Shape shape = {num_segments, source.dim(1)};
  const Tensor out = scatter_rows_into(full(shape, 1.0, source.dtype(), source.device()), source,
                                       flat_ids, RowCombine::kMultiply, op);
  if (!is_floating(source.dtype())) return out;
  const Tensor result = detach(out);
  record(op, {source}, {out}, [source, flat_ids, result, shape, op](const std::vector<Tensor>& g) {
    // d prod / d x_i is the product of the segment's other entries: prod / x_i where x_i != 0.
    // A zero's is the product of the non-zeros when it is its segment's only zero, and every
    // entry's is 0 where a segment holds two zeros or more (TF's and PyTorch's rule).
    const Tensor zero = scalar_like(0.0, source), one = scalar_like(1.0, source);
    const Tensor is_zero = binary(BinaryOp::kEqual, source, zero);
    const Tensor zero_counts =
        scatter_rows_into(zeros(shape, source.dtype(), source.device()), cast(is_zero, source.dtype()),
                          flat_ids, RowCombine::kAdd, op + "Grad");
    const Tensor non_zero = where(is_zero, one, source);
    const Tensor non_zero_prod = scatter_rows_into(full(shape, 1.0, source.dtype(), source.device()),
                                                   non_zero, flat_ids, RowCombine::kMultiply, op + "Grad");
    const Tensor at_most_one_zero = binary(BinaryOp::kLess, zero_counts, scalar_like(2.0, source));
    const Tensor kept_grad = where(at_most_one_zero, g[0], zero);
    auto gathered = [&](const Tensor& t) { return gather_rows_of(t, flat_ids, {flat_ids.numel()}, op + "Grad"); };
    const Tensor partial = where(is_zero, gathered(non_zero_prod), binary(BinaryOp::kDiv, gathered(result), non_zero));
    return std::vector<Tensor>{mul(gathered(kept_grad), partial)};
  });
  return out;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask) {
  const std::string op = "ScaledDotProductAttention";
  for (const auto* t : {&q, &k, &v}) check_defined(op, *t, "q, k and v");
  if (q.ndim() < 2) throw_error(ErrorCode::kInvalidArgument, op, "q must be (..., seq, d_k)");
  const double scale = 1.0 / std::sqrt(double(q.dim(q.ndim() - 1)));
  Tensor scores = mul(matmul(q, transpose(k, -1, -2)), scalar_like(scale, q));
  if (mask.defined() && mask.dtype() == DType::kBool) {
    // A boolean mask says which keys each query may attend to (True = attend), as in Keras's
    // attention_mask and torch's boolean attn_mask; hidden scores get a large negative number
    // (Keras's -1e9, or the float16 minimum), so the softmax gives them ~0.
    const double hide = scores.dtype() == DType::kFloat16 ? -65504.0 : -1e9;
    const Tensor keep = cast(mask, scores.dtype());
    scores = add(scores, mul(sub(scalar_like(1.0, keep), keep), scalar_like(hide, scores)));
  } else if (mask.defined()) {
    scores = add(scores, cast(mask, scores.dtype()));
  }
  return matmul(softmax(scores, -1, false), v);
}

Tensor sparse_softmax_cross_entropy(const Tensor& labels, const Tensor& logits) {
  const std::string op = "SparseSoftmaxCrossEntropyWithLogits";
  check_defined(op, labels, "labels");
  check_defined(op, logits, "logits");
  if (logits.ndim() < 1 || labels.shape() != Shape(logits.shape().begin(), logits.shape().end() - 1)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "labels of shape " + shape_to_string(labels.shape()) +
                    " do not match logits of shape " + shape_to_string(logits.shape()) +
                    " (labels must have the logits' shape without the last axis)");
  }
  const int64_t classes = logits.dim(logits.ndim() - 1);
  check_index_range(op, labels, classes, "labels");
  return softmax_cross_entropy(one_hot(labels, classes, DType::kFloat32), logits);
}

Tensor softmax_cross_entropy(const Tensor& labels, const Tensor& logits) {
  const std::string op = "SoftmaxCrossEntropyWithLogits";
  check_defined(op, labels, "labels");
  check_defined(op, logits, "logits");
  if (labels.shape() != logits.shape()) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "labels of shape " + shape_to_string(labels.shape()) +
                    " do not match logits of shape " + shape_to_string(logits.shape()));
  }
  // Losses are computed in float32 (Keras's mixed-precision rule).
  const Tensor log_probs = softmax(cast(logits, DType::kFloat32), -1, true);
  return neg(reduce_sum(mul(cast(labels, DType::kFloat32), log_probs), {-1}, false));
}

namespace {
// Keras's squeeze_or_expand_to_same_rank: when the ranks differ by one and the larger ends in a
// size-1 axis, a rank-1 smaller operand gains that axis and otherwise the larger loses it, so
// labels (N,) against predictions (N, 1) pair up element by element instead of broadcasting
// to (N, N).
void match_ranks(Tensor& a, Tensor& b) {
  for (int pass = 0; pass < 2; ++pass) {
    Tensor& big = pass == 0 ? a : b;
    Tensor& small = pass == 0 ? b : a;
    if (big.ndim() == small.ndim() + 1 && big.dim(big.ndim() - 1) == 1) {
      if (small.ndim() == 1) {
        small = expand_dims(small, -1);
      } else {
        big = squeeze(big, {-1});
      }
      return;
    }
  }
}
}  // namespace

Tensor mean_squared_error(const Tensor& y_true_in, const Tensor& y_pred_in) {
  const std::string op = "MeanSquaredError";
  check_defined(op, y_true_in, "y_true");
  check_defined(op, y_pred_in, "y_pred");
  Tensor y_true = y_true_in, y_pred = y_pred_in;
  match_ranks(y_true, y_pred);
  const Tensor diff = sub(cast(y_pred, DType::kFloat32), cast(y_true, DType::kFloat32));
  return reduce(ReduceOp::kMean, mul(diff, diff), {-1}, false);
}

}  // namespace gpuaccel
