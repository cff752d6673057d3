// The fused recurrent op's frontend (see rnn.h): checks, outputs, the training forward's
// workspace and the gradient through Backend::rnn_backward.
#include "ops/rnn.h"

#include <string>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {

constexpr const char* kOp = "CudnnRNN";
constexpr const char* kBackwardOp = "CudnnRNNBackprop";

void check_shape(const Tensor& t, const Shape& expected, const char* what, RnnCell cell) {
  if (t.shape() != expected || t.dtype() != DType::kFloat32) {
    throw_error(ErrorCode::kInvalidArgument, kOp,
                std::string(what) + " of the fused " + rnn_cell_name(cell) +
                    " must be float32 of shape " + shape_to_string(expected) + ", got " +
                    t.describe());
  }
}

// The same bytes under another TensorImpl: the op's outputs are aliases of the tensors its
// backward keeps, so the backward holds no output (whose grad_fn would hold the backward).
Tensor alias(const Tensor& t) { return t.as_strided(t.shape(), t.strides(), t.offset()); }

Tensor zeros_if_undefined(const Tensor& grad, const Tensor& like) {
  return grad.defined() ? contiguous(grad) : zeros(like.shape(), like.dtype(), like.device());
}

}  // namespace

std::vector<Tensor> fused_rnn(RnnCell cell, const Tensor& x, const Tensor& h0, const Tensor& c0,
                              const Tensor& kernel, const Tensor& recurrent_kernel,
                              const Tensor& bias) {
  const bool lstm = cell == RnnCell::kLstm;
  check_defined(kOp, x, "input");
  check_defined(kOp, h0, "initial state h");
  if (lstm) check_defined(kOp, c0, "initial state c");
  check_defined(kOp, kernel, "kernel");
  check_defined(kOp, recurrent_kernel, "recurrent_kernel");
  check_defined(kOp, bias, "bias");
  if (x.ndim() != 3 || x.dtype() != DType::kFloat32 || x.dim(0) < 1 || x.dim(1) < 1) {
    throw_error(ErrorCode::kInvalidArgument, kOp,
                "input must be float32 (batch, time, features) with batch and time >= 1, got " +
                    x.describe());
  }
  if (recurrent_kernel.ndim() != 2) {
    throw_error(ErrorCode::kInvalidArgument, kOp,
                "recurrent_kernel must be (units, gates * units), got " +
                    recurrent_kernel.describe());
  }
  const int64_t batch = x.dim(0), input = x.dim(2), units = recurrent_kernel.dim(0);
  const int64_t width = rnn_gates(cell) * units;
  check_shape(recurrent_kernel, {units, width}, "recurrent_kernel", cell);
  check_shape(kernel, {input, width}, "kernel", cell);
  check_shape(bias, cell == RnnCell::kGru ? Shape{2, width} : Shape{width}, "bias", cell);
  check_shape(h0, {batch, units}, "initial state h", cell);
  std::vector<Tensor> inputs = {contiguous(x), contiguous(h0)};
  if (lstm) {
    check_shape(c0, {batch, units}, "initial state c", cell);
    inputs.push_back(contiguous(c0));
  } else if (c0.defined()) {
    throw_error(ErrorCode::kInvalidArgument, kOp,
                std::string("the fused ") + rnn_cell_name(cell) + " has no cell state c");
  }
  inputs.push_back(contiguous(kernel));
  inputs.push_back(contiguous(recurrent_kernel));
  inputs.push_back(contiguous(bias));
  const LogicalDevice& device = common_device(kOp, inputs);

  const Tensor& xc = inputs[0];
  const Tensor& h0c = inputs[1];
  const Tensor c0c = lstm ? inputs[2] : Tensor();
  const Tensor& kc = inputs[lstm ? 3 : 2];
  const Tensor& rkc = inputs[lstm ? 4 : 3];
  const Tensor& bc = inputs[lstm ? 5 : 4];
  const RnnParams params{cell};
  Backend& backend = backend_for_op(kOp, device);
  const bool training = grad_mode_enabled() && any_needs_grad(inputs);
  Tensor workspace;
  if (training) {
    const int64_t bytes = backend.rnn_workspace_bytes(params, xc.view(), rkc.view());
    workspace = Tensor::empty({bytes}, DType::kUInt8, device, kOp);
  }
  const Tensor y = Tensor::empty({batch, x.dim(1), units}, DType::kFloat32, device, kOp);
  const Tensor h_last = Tensor::empty({batch, units}, DType::kFloat32, device, kOp);
  const Tensor c_last = lstm ? Tensor::empty({batch, units}, DType::kFloat32, device, kOp)
                             : Tensor();
  const TensorView no_state{};
  backend.rnn_forward(params, xc.view(), h0c.view(), lstm ? c0c.view() : no_state, kc.view(),
                      rkc.view(), bc.view(), y.view(), h_last.view(),
                      lstm ? c_last.view() : no_state, training ? workspace.data() : nullptr);

  std::vector<Tensor> outputs = {alias(y), alias(h_last)};
  if (lstm) outputs.push_back(alias(c_last));
  if (!training) return outputs;
  record(kOp, inputs, outputs,
         [params, lstm, xc, h0c, c0c, kc, rkc, bc, y, h_last, c_last,
          workspace](const std::vector<Tensor>& g) {
           const LogicalDevice& dev = xc.device();
           const Tensor dy = zeros_if_undefined(g[0], y);
           const Tensor dh_last = zeros_if_undefined(g[1], h_last);
           const Tensor dc_last = lstm ? zeros_if_undefined(g[2], c_last) : Tensor();
           Tensor dx = Tensor::empty(xc.shape(), DType::kFloat32, dev, kBackwardOp);
           Tensor dh0 = Tensor::empty(h0c.shape(), DType::kFloat32, dev, kBackwardOp);
           Tensor dc0 = lstm ? Tensor::empty(c0c.shape(), DType::kFloat32, dev, kBackwardOp)
                             : Tensor();
           Tensor dk = Tensor::empty(kc.shape(), DType::kFloat32, dev, kBackwardOp);
           Tensor drk = Tensor::empty(rkc.shape(), DType::kFloat32, dev, kBackwardOp);
           Tensor db = Tensor::empty(bc.shape(), DType::kFloat32, dev, kBackwardOp);
           const TensorView none{};
           backend_for(dev).rnn_backward(
               params, xc.view(), h0c.view(), lstm ? c0c.view() : none, kc.view(), rkc.view(),
               bc.view(), y.view(), h_last.view(), lstm ? c_last.view() : none, workspace.data(),
               dy.view(), dh_last.view(), lstm ? dc_last.view() : none, dx.view(), dh0.view(),
               lstm ? dc0.view() : none, dk.view(), drk.view(), db.view());
           std::vector<Tensor> grads = {dx, dh0};
           if (lstm) grads.push_back(dc0);
           grads.insert(grads.end(), {dk, drk, db});
           return grads;
         });
  return outputs;
}

}  // namespace gpuaccel
