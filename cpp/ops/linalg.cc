// Matmul and linear frontends and gradients (see linalg.h).
#include "ops/linalg.h"

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"
#include "ops/post_activation.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {

std::string compact_shape(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// The product of two operands of rank >= 2 with equal batch shapes or a 2-D b.
Tensor batched_product(const Tensor& a, const Tensor& b, const Shape& batch, int64_t m,
                       int64_t k, int64_t n) {
  const int64_t batch_count = shape_numel(batch);
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device(), "MatMul");
  if (out.numel() == 0) return out;
  Backend& backend = backend_for_op(batch.empty() ? "MatMul" : "BatchMatMulV2", a.device());
  if (k == 0) {
    backend.fill(out.view(), 0.0);
    return out;
  }
  // Kernel views: rank 2, or rank 3 with the batch collapsed (operands made contiguous in their
  // batch dimensions; b may be shared by every batch through a stride-0 batch).
  auto as_kernel_view = [&](const Tensor& t, bool shared) {
    TensorView v;
    const int r = t.ndim();
    v.data = t.data();
    v.dtype = t.dtype();
    if (batch.empty()) {
      v.ndim = 2;
      v.shape[0] = t.shape()[r - 2];
      v.shape[1] = t.shape()[r - 1];
      v.strides[0] = t.strides()[r - 2];
      v.strides[1] = t.strides()[r - 1];
      return v;
    }
    v.ndim = 3;
    v.shape[0] = batch_count;
    v.strides[0] = shared ? 0 : t.shape()[r - 2] * t.shape()[r - 1];
    v.shape[1] = t.shape()[r - 2];
    v.shape[2] = t.shape()[r - 1];
    v.strides[1] = t.strides()[r - 2];
    v.strides[2] = t.strides()[r - 1];
    return v;
  };
  const bool b_shared = b.ndim() == 2 && !batch.empty();
  const TensorView va = as_kernel_view(a, false);
  const TensorView vb = as_kernel_view(b, b_shared);
  TensorView vout = as_kernel_view(out, false);
  backend.matmul(va, vb, nullptr, vout);
  return out;
}

// Makes the batch dimensions of `t` (all but the last two) dense so they collapse into one.
Tensor dense_batch(const Tensor& t) {
  if (t.ndim() <= 2) return t;
  const int r = t.ndim();
  int64_t expected = t.shape()[r - 2] * t.shape()[r - 1];
  bool matrix_dense = (t.strides()[r - 1] == 1 && t.strides()[r - 2] == t.shape()[r - 1]) ||
                      (t.strides()[r - 2] == 1 && t.strides()[r - 1] == t.shape()[r - 2]);
  if (!matrix_dense) return contiguous(t);
  for (int d = r - 3; d >= 0; --d) {
    if (t.shape()[d] != 1 && t.strides()[d] != expected) return contiguous(t);
    expected *= t.shape()[d];
  }
  return t;
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_defined("matmul", a_in, "a");
  check_defined("matmul", b_in, "b");
  common_device("matmul", {a_in, b_in});
  common_dtype("matmul", {a_in, b_in});
  check_floating("matmul", a_in, "a");
  if (a_in.ndim() == 0 || b_in.ndim() == 0) {
    throw_error(ErrorCode::kInvalidArgument, "matmul",
                "both operands need at least one dimension; use * for scalars");
  }
  // NumPy's 1-D promotion: (k,) is a row for a and a column for b; the added dim is removed.
  const Tensor a = a_in.ndim() == 1 ? reshape(a_in, {1, a_in.shape()[0]}) : a_in;
  const Tensor b = b_in.ndim() == 1 ? reshape(b_in, {b_in.shape()[0], 1}) : b_in;
  const int64_t m = a.shape()[a.ndim() - 2], k = a.shape()[a.ndim() - 1];
  const int64_t kb = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (k != kb) {
    throw_error(ErrorCode::kInvalidArgument, "matmul",
                "shapes " + compact_shape(a_in.shape()) + " and " + compact_shape(b_in.shape()) +
                    " are not aligned: " + std::to_string(k) + " != " + std::to_string(kb));
  }
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");

  Tensor a_full = a, b_full = b;
  if (a_batch != batch) {
    Shape s = batch;
    s.push_back(m);
    s.push_back(k);
    a_full = broadcast_to(a, s);
  }
  if (b_batch != batch && !b_batch.empty()) {
    Shape s = batch;
    s.push_back(k);
    s.push_back(n);
    b_full = broadcast_to(b, s);
  }
  a_full = dense_batch(a_full);
  b_full = dense_batch(b_full);
  Tensor out = batched_product(a_full, b_full, batch, m, k, n);

  const Tensor x = a_full, y = b_full;
  record(batch.empty() ? "MatMul" : "BatchMatMulV2", {a_full, b_full}, {out},
         [x, y](const std::vector<Tensor>& g) {
           const Tensor& dz = g[0];
           Tensor dx = matmul(dz, transpose(y, -1, -2));
           Tensor dy = matmul(transpose(x, -1, -2), dz);
           return std::vector<Tensor>{sum_to_shape(dx, x.shape()), sum_to_shape(dy, y.shape())};
         });
  // Undo the 1-D promotion.
  Shape result_shape = batch;
  if (a_in.ndim() > 1) result_shape.push_back(m);
  if (b_in.ndim() > 1) result_shape.push_back(n);
  return result_shape == out.shape() ? out : reshape(out, result_shape);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias, PostActivation activation) {
  check_defined("linear", x, "x");
  check_defined("linear", w, "kernel");
  if (w.ndim() != 2) {
    throw_error(ErrorCode::kInvalidArgument, "linear",
                "kernel must have shape (in, out), got " + shape_to_string(w.shape()));
  }
  if (bias.defined() && (bias.ndim() != 1 || bias.shape()[0] != w.shape()[1])) {
    throw_error(ErrorCode::kInvalidArgument, "linear",
                "bias must have shape (" + std::to_string(w.shape()[1]) + ",), got " +
                    shape_to_string(bias.shape()));
  }
  const bool fusable = (bias.defined() || activation != PostActivation::kNone) && x.ndim() >= 2 &&
                       x.shape().back() == w.shape()[0] && w.shape()[0] > 0;
  if (!fusable) {
    // matmul's own checks and errors; the rare shapes the fused path leaves out.
    Tensor y = matmul(x, w);
    if (bias.defined()) y = add(y, bias);
    return activation == PostActivation::kRelu ? unary(UnaryOp::kRelu, y) : y;
  }
  std::vector<Tensor> all = {x, w};
  if (bias.defined()) all.push_back(bias);
  common_device("linear", all);
  common_dtype("linear", all);
  check_floating("linear", x, "x");
  // One product (M, K) @ (K, N) over the flattened leading dimensions, bias and activation
  // fused into it, and one autograd node.
  const int64_t k = w.shape()[0], n = w.shape()[1];
  const Shape lead(x.shape().begin(), x.shape().end() - 1);
  const Tensor x2 = reshape(contiguous(x), {shape_numel(lead), k});
  const Tensor wc = contiguous(w);
  const Tensor bc = bias.defined() ? contiguous(bias) : Tensor();
  Tensor out = Tensor::empty({x2.shape()[0], n}, x2.dtype(), x2.device(), "MatMul");
  if (out.numel() > 0) {
    const TensorView bv = bc.defined() ? bc.view() : TensorView();
    const TensorView* b = bc.defined() ? &bv : nullptr;
    Backend& backend = backend_for_op("MatMul", x2.device());
    if (activation == PostActivation::kNone) {
      backend.matmul(x2.view(), wc.view(), b, out.view());
    } else {
      backend.matmul_activation(x2.view(), wc.view(), b, activation, out.view());
    }
  }
  std::vector<Tensor> inputs = {x2, wc};
  if (bc.defined()) inputs.push_back(bc);
  if (grad_mode_enabled() && any_needs_grad(inputs)) {
    const bool want_dx = needs_grad(x2);
    // The activated output as a detached alias (see conv2d in nn.cc).
    const Tensor out_saved = activation != PostActivation::kNone ? detach(out) : Tensor();
    record("MatMul", inputs, {out}, [x2, wc, bc, activation, want_dx, out_saved](const std::vector<Tensor>& g) {
      const Tensor dz = post_activation_backward(activation, out_saved, g[0]);
      std::vector<Tensor> grads = {want_dx ? matmul(dz, transpose(wc, 0, 1)) : Tensor(),
                                   matmul(transpose(x2, 0, 1), dz)};
      if (bc.defined()) grads.push_back(reduce(ReduceOp::kSum, dz, {0}, false));
      return grads;
    });
  }
  Shape out_shape = lead;
  out_shape.push_back(n);
  return out_shape == out.shape() ? out : reshape(out, out_shape);
}

}  // namespace gpuaccel
