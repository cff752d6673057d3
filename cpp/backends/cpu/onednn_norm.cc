// cpu::batch_norm_* and cpu::layer_norm_* (onednn_ops.h) on oneDNN's batch_normalization and
// layer_normalization primitives with separate f32 scale (gamma) and shift (beta). Both see
// the tensor as (rows, C): batch norm normalizes each of the C columns over all rows (NHWC or
// (N, C)), layer norm each row over its C values. Statistics are f32 and biased, as Keras
// normalizes. f16 is staged through f32.
#include <cstring>
#include <unordered_map>

#include "backends/cpu/channel_moments.h"
#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;
using dnnl::normalization_flags;

namespace {

int64_t channels_of(const TensorView& v) { return v.ndim == 0 ? 1 : v.shape[v.ndim - 1]; }
int64_t rows_of(const TensorView& v) {
  const int64_t c = channels_of(v);
  return c == 0 ? 0 : v.numel() / c;
}
// Layer norm: (rows, C) row-major.
memory::desc rows_desc(const TensorView& v) {
  return dense_desc({rows_of(v), channels_of(v)}, v.dtype);
}
// Batch norm: the same bytes as oneDNN {rows, C, 1, 1} in nhwc, which its JIT kernels take
// (a 2-D {rows, C} descriptor gets a slower plain-C++ implementation).
memory::desc bn_desc(const TensorView& v) {
  const int64_t c = channels_of(v);
  return strided_desc({rows_of(v), c, 1, 1}, v.dtype, {c, 1, c, c});
}
memory::desc vector_desc(int64_t n) { return dense_desc({n}, DType::kFloat32); }

// oneDNN 3.2's layer normalization backward counts the shift (beta) among its inputs although
// the gradients do not depend on it (execution fails with "bad number of inputs" without it;
// batch normalization's backward rejects it instead); the interface does not pass beta there,
// so give it zeros.
void* zero_shift(int64_t c) {
  void* p = thread_buffer(kZeroShiftSlot, static_cast<size_t>(c) * sizeof(float));
  std::memset(p, 0, static_cast<size_t>(c) * sizeof(float));
  return p;
}

const normalization_flags kScaleShift = normalization_flags::use_scale | normalization_flags::use_shift;

// Runs a forward normalization primitive (batch or layer norm): x -> y with scale gamma and
// shift beta. mean and var are what the primitive's flags make them: written in training,
// read in batch norm's inference.
template <class Prim>
void execute_forward(const PrimitiveEntry<Prim>& e, const TensorView& x, const TensorView& gamma,
                     const TensorView& beta, const TensorView& mean, const TensorView& var,
                     const TensorView& y) {
  const int64_t c = channels_of(x);
  e.prim.execute(stream(), {{DNNL_ARG_SRC, make_memory(e.pd.src_desc(), x.data)},
                            {DNNL_ARG_DST, make_memory(e.pd.dst_desc(), y.data)},
                            {DNNL_ARG_SCALE, make_memory(vector_desc(c), gamma.data)},
                            {DNNL_ARG_SHIFT, make_memory(vector_desc(c), beta.data)},
                            {DNNL_ARG_MEAN, make_memory(e.pd.mean_desc(), mean.data)},
                            {DNNL_ARG_VARIANCE, make_memory(e.pd.variance_desc(), var.data)},
                            {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e.pd)}});
  stream().wait();
}

// Runs a backward normalization primitive. `shift` is null for batch norm, whose backward
// rejects a shift, and zero_shift() for layer norm, whose backward requires one.
template <class Prim>
void execute_backward(const PrimitiveEntry<Prim>& e, const TensorView& x, const TensorView& dy,
                      const TensorView& gamma, const void* shift, const TensorView& mean,
                      const TensorView& var, const TensorView& dx, const TensorView& dgamma,
                      const TensorView& dbeta) {
  const int64_t c = channels_of(x);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, make_memory(e.pd.src_desc(), x.data)},
      {DNNL_ARG_DIFF_DST, make_memory(e.pd.diff_dst_desc(), dy.data)},
      {DNNL_ARG_SCALE, make_memory(vector_desc(c), gamma.data)},
      {DNNL_ARG_MEAN, make_memory(e.pd.mean_desc(), mean.data)},
      {DNNL_ARG_VARIANCE, make_memory(e.pd.variance_desc(), var.data)},
      {DNNL_ARG_DIFF_SRC, make_memory(e.pd.diff_src_desc(), dx.data)},
      {DNNL_ARG_DIFF_SCALE, make_memory(vector_desc(c), dgamma.data)},
      {DNNL_ARG_DIFF_SHIFT, make_memory(vector_desc(c), dbeta.data)},
      {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e.pd)}};
  if (shift != nullptr) args.emplace(DNNL_ARG_SHIFT, make_memory(vector_desc(c), shift));
  e.prim.execute(stream(), args);
  stream().wait();
}

// The cache key of a backward primitive: the views and epsilon.
KeyBuilder backward_key(const char* op, const TensorView& x, const TensorView& dy,
                        const TensorView& dx, float eps) {
  KeyBuilder key(op);
  key.add(x).add(dy).add(dx).add(static_cast<double>(eps));
  return key;
}

// ---- batch normalization ----

// x and y share bn_desc's layout (y is x's shape, contiguous).
dnnl::batch_normalization_forward::primitive_desc bn_forward_pd(
    const memory::desc& x_md, float eps, bool training,
    const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
  if (training) {
    return dnnl::batch_normalization_forward::primitive_desc(
        engine(), dnnl::prop_kind::forward_training, x_md, x_md, eps, kScaleShift, attr);
  }
  return dnnl::batch_normalization_forward::primitive_desc(
      engine(), dnnl::prop_kind::forward_inference, x_md, x_md, eps,
      kScaleShift | normalization_flags::use_global_stats, attr);
}

void bn_forward_native(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                       const TensorView& mean, const TensorView& var, double epsilon,
                       bool training, const TensorView& y) {
  const float eps = static_cast<float>(epsilon);
  // Training: the batch statistics are ours (channel_moments.h says why), written into mean and
  // var as oneDNN's forward_training would; the normalization with them is oneDNN's
  // use_global_stats pass either way.
  if (training) channel_moments(x, mean, var);
  KeyBuilder key("bn_fwd");
  key.add(x).add(y).add(static_cast<double>(eps));
  auto e = cached_primitive<dnnl::batch_normalization_forward>(
      key, [&] { return bn_forward_pd(bn_desc(x), eps, false, default_attr()); });
  execute_forward(*e, x, gamma, beta, mean, var, y);
}

void bn_backward_native(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                        const TensorView& mean, const TensorView& var, double epsilon,
                        const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta) {
  const float eps = static_cast<float>(epsilon);
  auto e = cached_primitive<dnnl::batch_normalization_backward>(
      backward_key("bn_bwd", x, dy, dx, eps), [&] {
        const memory::desc x_md = bn_desc(x);
        const auto hint = bn_forward_pd(x_md, eps, true);
        return dnnl::batch_normalization_backward::primitive_desc(
            engine(), dnnl::prop_kind::backward, bn_desc(dx), bn_desc(dy), x_md, eps,
            kScaleShift, hint, default_attr());
      });
  execute_backward(*e, x, dy, gamma, nullptr, mean, var, dx, dgamma, dbeta);
}

// ---- layer normalization ----

dnnl::layer_normalization_forward::primitive_desc ln_forward_pd(
    const memory::desc& x_md, int64_t rows, float eps,
    const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
  return dnnl::layer_normalization_forward::primitive_desc(
      engine(), dnnl::prop_kind::forward_training, x_md, x_md, vector_desc(rows), eps,
      kScaleShift, attr);
}

void ln_forward_native(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                       double epsilon, const TensorView& y, const TensorView& mean,
                       const TensorView& var) {
  const float eps = static_cast<float>(epsilon);
  KeyBuilder key("ln_fwd");
  key.add(x).add(y).add(static_cast<double>(eps));
  auto e = cached_primitive<dnnl::layer_normalization_forward>(
      key, [&] { return ln_forward_pd(rows_desc(x), rows_of(x), eps, default_attr()); });
  execute_forward(*e, x, gamma, beta, mean, var, y);
}

void ln_backward_native(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                        const TensorView& mean, const TensorView& var, double epsilon,
                        const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta) {
  const float eps = static_cast<float>(epsilon);
  auto e = cached_primitive<dnnl::layer_normalization_backward>(
      backward_key("ln_bwd", x, dy, dx, eps), [&] {
        const memory::desc x_md = rows_desc(x);
        const int64_t rows = rows_of(x);
        const auto hint = ln_forward_pd(x_md, rows, eps);
        return dnnl::layer_normalization_backward::primitive_desc(
            engine(), dnnl::prop_kind::backward, rows_desc(dx), rows_desc(dy), x_md,
            vector_desc(rows), eps, kScaleShift, hint, default_attr());
      });
  execute_backward(*e, x, dy, gamma, zero_shift(channels_of(x)), mean, var, dx, dgamma, dbeta);
}

// ---- f16/bf16 staging, shared by both norms ----

void zero_f32(const TensorView& v) {
  std::memset(v.data, 0, static_cast<size_t>(v.numel()) * sizeof(float));
}

// Runs native(x, y) on x's own dtype, or on f32 copies where that dtype is staged through f32.
template <class Native>
void forward_staged(const char* op, const TensorView& x, const TensorView& y,
                    const Native& native) {
  if (x.numel() == 0) return;
  guarded(op, [&] {
    if (!staged_through_f32(x.dtype)) {
      native(x, y);
      return;
    }
    F32Copy x32 = to_f32(x), y32 = f32_like(y);
    native(x32.view, y32.view);
    store_from_f32(y32.data.data(), y);
  });
}

// Runs native(x, dy, dx) likewise; an empty x has zero parameter gradients (dgamma, dbeta are
// f32).
template <class Native>
void backward_staged(const char* op, const TensorView& x, const TensorView& dy,
                     const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta,
                     const Native& native) {
  if (x.numel() == 0) {
    zero_f32(dgamma);
    zero_f32(dbeta);
    return;
  }
  guarded(op, [&] {
    if (!staged_through_f32(x.dtype)) {
      native(x, dy, dx);
      return;
    }
    F32Copy x32 = to_f32(x), dy32 = to_f32(dy), dx32 = f32_like(dx);
    native(x32.view, dy32.view, dx32.view);
    store_from_f32(dx32.data.data(), dx);
  });
}

}  // namespace

void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        const TensorView& mean, const TensorView& var, double epsilon,
                        bool training, const TensorView& y) {
  forward_staged("FusedBatchNorm", x, y, [&](const TensorView& xs, const TensorView& ys) {
    bn_forward_native(xs, gamma, beta, mean, var, epsilon, training, ys);
  });
}

void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon,
                         const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta) {
  backward_staged("FusedBatchNormGrad", x, dy, dx, dgamma, dbeta,
                  [&](const TensorView& xs, const TensorView& dys, const TensorView& dxs) {
                    bn_backward_native(xs, dys, gamma, mean, var, epsilon, dxs, dgamma, dbeta);
                  });
}

void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        double epsilon, const TensorView& y, const TensorView& mean,
                        const TensorView& var) {
  forward_staged("LayerNorm", x, y, [&](const TensorView& xs, const TensorView& ys) {
    ln_forward_native(xs, gamma, beta, epsilon, ys, mean, var);
  });
}

void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon,
                         const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta) {
  backward_staged("LayerNormGrad", x, dy, dx, dgamma, dbeta,
                  [&](const TensorView& xs, const TensorView& dys, const TensorView& dxs) {
                    ln_backward_native(xs, dys, gamma, mean, var, epsilon, dxs, dgamma, dbeta);
                  });
}

}  // namespace gpuaccel::cpu
