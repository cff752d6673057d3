// cpu::rnn_* (onednn_ops.h): the fused recurrent layer on oneDNN's RNN primitives, so a Keras
// LSTM/GRU/SimpleRNN runs its whole sequence in one primitive instead of an unrolled trace of
// per-step ops. One layer, one direction (left2right); the layer code reverses time for
// go_backwards.
//
// Layouts. Keras's kernels already are oneDNN's plain `ldigo` (L = D = 1: input rows, then the
// gate blocks of `units` columns), and the gate orders agree (LSTM i, f, c, o; GRU update,
// reset, candidate = Keras's z, r, h), so the user's weights are given to the primitive as they
// are and reordered (a cached reorder per primitive) only into the layout the primitive picks
// for itself (format `any`). x and y are batch-major `ntc`, the states (batch, units) `ldnc`.
// The bias is oneDNN's `ldgo` for the LSTM and the tanh cell (Keras's layout too); the GRU's is
// Keras's (2, 3*units) (input row, recurrent row) folded into oneDNN's linear-before-reset bias
// of four blocks: z and r take the sum of both rows, the candidate the input row's block, and
// the extra fourth block is the recurrent row's candidate block (added before the reset gate
// multiplies, as Keras's reset_after does).
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;
using tag = dnnl::memory::format_tag;

namespace {

constexpr auto kF32 = memory::data_type::f32;

struct RnnShape {
  int64_t batch, time, input, units, gates;
  int64_t bias_gates() const { return gates == 3 ? 4 : gates; }  // lbr_gru's extra block
};

RnnShape shape_of(const RnnParams& p, const TensorView& x, const TensorView& recurrent_kernel) {
  return {x.shape[0], x.shape[1], x.shape[2], recurrent_kernel.shape[0], rnn_gates(p.cell)};
}

memory::desc sequence_desc(const RnnShape& s, int64_t channels) {
  return memory::desc({s.time, s.batch, channels}, kF32, tag::ntc);
}
memory::desc state_desc(const RnnShape& s) {
  return memory::desc({1, 1, s.batch, s.units}, kF32, tag::ldnc);
}
memory::desc weights_desc(const RnnShape& s, int64_t rows, tag layout) {
  return memory::desc({1, 1, rows, s.gates, s.units}, kF32, layout);
}
memory::desc bias_desc(const RnnShape& s) {
  return memory::desc({1, 1, s.bias_gates(), s.units}, kF32, tag::ldgo);
}

// The descriptors of one primitive: `any` weights (the primitive picks), plain everything else.
struct RnnDescs {
  memory::desc x, h, w_layer, w_iter, bias, y;
};
RnnDescs descs_of(const RnnShape& s) {
  return {sequence_desc(s, s.input), state_desc(s), weights_desc(s, s.input, tag::any),
          weights_desc(s, s.units, tag::any), bias_desc(s), sequence_desc(s, s.units)};
}

using Prop = dnnl::prop_kind;

dnnl::rnn_primitive_desc_base forward_pd(RnnCell cell, Prop prop, const RnnDescs& d) {
  const auto dir = dnnl::rnn_direction::unidirectional_left2right;
  switch (cell) {
    case RnnCell::kLstm:
      return dnnl::lstm_forward::primitive_desc(engine(), prop, dir, d.x, d.h, d.h, d.w_layer,
                                                d.w_iter, d.bias, d.y, d.h, d.h,
                                                default_attr());
    case RnnCell::kGru:
      return dnnl::lbr_gru_forward::primitive_desc(engine(), prop, dir, d.x, d.h, d.w_layer,
                                                   d.w_iter, d.bias, d.y, d.h, default_attr());
    case RnnCell::kTanh:
      break;
  }
  return dnnl::vanilla_rnn_forward::primitive_desc(engine(), prop,
                                                   dnnl::algorithm::eltwise_tanh, dir, d.x, d.h,
                                                   d.w_layer, d.w_iter, d.bias, d.y, d.h,
                                                   default_attr());
}

dnnl::rnn_primitive_desc_base backward_pd(RnnCell cell, const RnnDescs& d) {
  const auto dir = dnnl::rnn_direction::unidirectional_left2right;
  const Prop bwd = Prop::backward;
  switch (cell) {
    case RnnCell::kLstm: {
      const dnnl::lstm_forward::primitive_desc hint(
          engine(), Prop::forward_training, dir, d.x, d.h, d.h, d.w_layer, d.w_iter, d.bias,
          d.y, d.h, d.h, default_attr());
      return dnnl::lstm_backward::primitive_desc(
          engine(), bwd, dir, d.x, d.h, d.h, d.w_layer, d.w_iter, d.bias, d.y, d.h, d.h, d.x,
          d.h, d.h, d.w_layer, d.w_iter, d.bias, d.y, d.h, d.h, hint, default_attr());
    }
    case RnnCell::kGru: {
      const dnnl::lbr_gru_forward::primitive_desc hint(engine(), Prop::forward_training, dir,
                                                       d.x, d.h, d.w_layer, d.w_iter, d.bias,
                                                       d.y, d.h, default_attr());
      return dnnl::lbr_gru_backward::primitive_desc(
          engine(), bwd, dir, d.x, d.h, d.w_layer, d.w_iter, d.bias, d.y, d.h, d.x, d.h,
          d.w_layer, d.w_iter, d.bias, d.y, d.h, hint, default_attr());
    }
    case RnnCell::kTanh:
      break;
  }
  const auto tanh = dnnl::algorithm::eltwise_tanh;
  const dnnl::vanilla_rnn_forward::primitive_desc hint(engine(), Prop::forward_training, tanh,
                                                       dir, d.x, d.h, d.w_layer, d.w_iter,
                                                       d.bias, d.y, d.h, default_attr());
  return dnnl::vanilla_rnn_backward::primitive_desc(
      engine(), bwd, tanh, dir, d.x, d.h, d.w_layer, d.w_iter, d.bias, d.y, d.h, d.x, d.h,
      d.w_layer, d.w_iter, d.bias, d.y, d.h, hint, default_attr());
}

// A reorder between the user's plain ldigo weights and the layout a primitive chose; empty
// when they agree.
struct WeightsReorder {
  memory::desc user, primitive;
  std::optional<dnnl::reorder> reorder;
};
WeightsReorder weights_reorder(const memory::desc& user, const memory::desc& primitive,
                               bool user_to_primitive) {
  WeightsReorder r{user, primitive, std::nullopt};
  if (user == primitive) return r;
  r.reorder = make_primitive<dnnl::reorder>(
      user_to_primitive ? dnnl::reorder::primitive_desc(engine(), user, engine(), primitive)
                        : dnnl::reorder::primitive_desc(engine(), primitive, engine(), user));
  return r;
}

// A cached RNN primitive with its descriptor and the weight reorders it needs: into its
// layout (weights in) and, for the backward, out of it (weight gradients out).
struct RnnEntry {
  dnnl::rnn_primitive_desc_base pd;
  dnnl::primitive prim;
  WeightsReorder layer_in, iter_in, layer_out, iter_out;
};

KeyBuilder rnn_key(const char* op, const RnnParams& p, const RnnShape& s) {
  KeyBuilder key(op);
  key.add(static_cast<int64_t>(p.cell)).add(s.batch).add(s.time).add(s.input).add(s.units);
  return key;
}

std::shared_ptr<RnnEntry> forward_entry(const RnnParams& p, const RnnShape& s, bool training) {
  KeyBuilder key = rnn_key("rnn_fwd", p, s);
  key.add(static_cast<int64_t>(training));
  return cached<RnnEntry>(key.str(), [&] {
    auto e = std::make_shared<RnnEntry>();
    e->pd = forward_pd(p.cell, training ? Prop::forward_training : Prop::forward_inference,
                       descs_of(s));
    e->prim = make_primitive<dnnl::primitive>(e->pd);
    e->layer_in = weights_reorder(weights_desc(s, s.input, tag::ldigo),
                                  e->pd.weights_layer_desc(), true);
    e->iter_in = weights_reorder(weights_desc(s, s.units, tag::ldigo),
                                 e->pd.weights_iter_desc(), true);
    return e;
  });
}

std::shared_ptr<RnnEntry> backward_entry(const RnnParams& p, const RnnShape& s) {
  return cached<RnnEntry>(rnn_key("rnn_bwd", p, s).str(), [&] {
    auto e = std::make_shared<RnnEntry>();
    e->pd = backward_pd(p.cell, descs_of(s));
    e->prim = make_primitive<dnnl::primitive>(e->pd);
    e->layer_in = weights_reorder(weights_desc(s, s.input, tag::ldigo),
                                  e->pd.weights_layer_desc(), true);
    e->iter_in = weights_reorder(weights_desc(s, s.units, tag::ldigo),
                                 e->pd.weights_iter_desc(), true);
    e->layer_out = weights_reorder(weights_desc(s, s.input, tag::ldigo),
                                   e->pd.diff_weights_layer_desc(), false);
    e->iter_out = weights_reorder(weights_desc(s, s.units, tag::ldigo),
                                  e->pd.diff_weights_iter_desc(), false);
    return e;
  });
}

// Per-call temporaries (weights in the primitive's layout, the folded GRU bias): a vector of
// floats rounded up from bytes, 64-byte aligned by oversizing.
class Temporary {
 public:
  explicit Temporary(size_t bytes) : data_(bytes / sizeof(float) + 16 + 1) {}
  void* data() {
    auto p = reinterpret_cast<uintptr_t>(data_.data());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  float* floats() { return static_cast<float*>(data()); }

 private:
  std::vector<float> data_;
};

// The weights `user` holds, in the layout the primitive reads: the user's memory itself when
// the layouts agree, else reordered into `buffer`.
memory weights_in(const WeightsReorder& r, const void* user, std::optional<Temporary>& buffer) {
  memory user_memory = make_memory(r.user, user);
  if (!r.reorder) return user_memory;
  buffer.emplace(r.primitive.get_size());
  memory out = make_memory(r.primitive, buffer->data());
  r.reorder->execute(stream(), user_memory, out);
  return out;
}

// Where the primitive writes a weight gradient: the user's memory when the layouts agree, else
// `buffer` (weights_out copies it back).
memory gradient_target(const WeightsReorder& r, void* user, std::optional<Temporary>& buffer) {
  if (!r.reorder) return make_memory(r.user, user);
  buffer.emplace(r.primitive.get_size());
  return make_memory(r.primitive, buffer->data());
}
void weights_out(const WeightsReorder& r, memory written, void* user) {
  if (!r.reorder) return;
  memory user_memory = make_memory(r.user, user);
  r.reorder->execute(stream(), written, user_memory);
}

// Keras's (2, 3u) GRU bias folded into lbr_gru's four blocks (see the top of the file); the
// other cells' bias is oneDNN's as it is.
void fold_gru_bias(const float* keras, int64_t units, float* onednn) {
  const float* input = keras;
  const float* recurrent = keras + 3 * units;
  for (int64_t i = 0; i < 2 * units; ++i) onednn[i] = input[i] + recurrent[i];
  std::memcpy(onednn + 2 * units, input + 2 * units, sizeof(float) * units);
  std::memcpy(onednn + 3 * units, recurrent + 2 * units, sizeof(float) * units);
}
// The gradient of the folded bias back in Keras's layout: the z and r blocks of both rows get
// the same gradient (their sum was the primitive's bias).
void unfold_gru_bias_gradient(const float* onednn, int64_t units, float* keras) {
  float* input = keras;
  float* recurrent = keras + 3 * units;
  std::memcpy(input, onednn, sizeof(float) * 3 * units);
  std::memcpy(recurrent, onednn, sizeof(float) * 2 * units);
  std::memcpy(recurrent + 2 * units, onednn + 3 * units, sizeof(float) * units);
}

memory bias_in(const RnnParams& p, const RnnShape& s, const TensorView& bias,
               std::optional<Temporary>& folded) {
  if (p.cell != RnnCell::kGru) return make_memory(bias_desc(s), bias.data);
  folded.emplace(sizeof(float) * 4 * s.units);
  fold_gru_bias(static_cast<const float*>(bias.data), s.units, folded->floats());
  return make_memory(bias_desc(s), folded->data());
}

// The temporaries of one call: weights in the primitive's layout, the folded GRU bias.
struct CallBuffers {
  std::optional<Temporary> w_layer, w_iter, bias;
};

// The arguments the forward and the backward primitive share: the sequences, states, weights
// and bias (the LSTM's cell states too).
std::unordered_map<int, memory> shared_arguments(
    const RnnParams& p, const RnnShape& s, const RnnEntry& e, const TensorView& x,
    const TensorView& h0, const TensorView& c0, const TensorView& kernel,
    const TensorView& recurrent_kernel, const TensorView& bias, const TensorView& y,
    const TensorView& h_last, const TensorView& c_last, CallBuffers& buffers) {
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC_LAYER, make_memory(sequence_desc(s, s.input), x.data)},
      {DNNL_ARG_SRC_ITER, make_memory(state_desc(s), h0.data)},
      {DNNL_ARG_WEIGHTS_LAYER, weights_in(e.layer_in, kernel.data, buffers.w_layer)},
      {DNNL_ARG_WEIGHTS_ITER, weights_in(e.iter_in, recurrent_kernel.data, buffers.w_iter)},
      {DNNL_ARG_BIAS, bias_in(p, s, bias, buffers.bias)},
      {DNNL_ARG_DST_LAYER, make_memory(sequence_desc(s, s.units), y.data)},
      {DNNL_ARG_DST_ITER, make_memory(state_desc(s), h_last.data)},
      {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e.pd)}};
  if (p.cell == RnnCell::kLstm) {
    args.emplace(DNNL_ARG_SRC_ITER_C, make_memory(state_desc(s), c0.data));
    args.emplace(DNNL_ARG_DST_ITER_C, make_memory(state_desc(s), c_last.data));
  }
  return args;
}

}  // namespace

int64_t rnn_workspace_bytes(const RnnParams& p, const TensorView& x,
                            const TensorView& recurrent_kernel) {
  int64_t bytes = 0;
  guarded("CudnnRNN", [&] {
    bytes = static_cast<int64_t>(
        forward_entry(p, shape_of(p, x, recurrent_kernel), true)->pd.workspace_desc().get_size());
  });
  return bytes;
}

void rnn_forward(const RnnParams& p, const TensorView& x, const TensorView& h0,
                 const TensorView& c0, const TensorView& kernel,
                 const TensorView& recurrent_kernel, const TensorView& bias, const TensorView& y,
                 const TensorView& h_last, const TensorView& c_last, void* workspace) {
  guarded("CudnnRNN", [&] {
    const RnnShape s = shape_of(p, x, recurrent_kernel);
    const auto e = forward_entry(p, s, workspace != nullptr);
    CallBuffers buffers;
    std::unordered_map<int, memory> args = shared_arguments(
        p, s, *e, x, h0, c0, kernel, recurrent_kernel, bias, y, h_last, c_last, buffers);
    if (workspace != nullptr) {
      args.emplace(DNNL_ARG_WORKSPACE, make_memory(e->pd.workspace_desc(), workspace));
    }
    e->prim.execute(stream(), args);
    stream().wait();
  });
}

void rnn_backward(const RnnParams& p, const TensorView& x, const TensorView& h0,
                  const TensorView& c0, const TensorView& kernel,
                  const TensorView& recurrent_kernel, const TensorView& bias,
                  const TensorView& y, const TensorView& h_last, const TensorView& c_last,
                  const void* workspace, const TensorView& dy, const TensorView& dh_last,
                  const TensorView& dc_last, const TensorView& dx, const TensorView& dh0,
                  const TensorView& dc0, const TensorView& dkernel,
                  const TensorView& drecurrent_kernel, const TensorView& dbias) {
  guarded("CudnnRNNBackprop", [&] {
    const RnnShape s = shape_of(p, x, recurrent_kernel);
    const auto fwd = forward_entry(p, s, true);  // the workspace's layout
    const auto e = backward_entry(p, s);
    std::optional<Temporary> dw_layer, dw_iter, dbias_folded;
    // oneDNN's RNN backward accumulates into the weight and bias gradients.
    const memory dw_layer_memory = gradient_target(e->layer_out, dkernel.data, dw_layer);
    const memory dw_iter_memory = gradient_target(e->iter_out, drecurrent_kernel.data, dw_iter);
    std::memset(dw_layer_memory.get_data_handle(), 0, dw_layer_memory.get_desc().get_size());
    std::memset(dw_iter_memory.get_data_handle(), 0, dw_iter_memory.get_desc().get_size());
    void* dbias_target = dbias.data;
    if (p.cell == RnnCell::kGru) {
      dbias_folded.emplace(sizeof(float) * 4 * s.units);
      dbias_target = dbias_folded->data();
    }
    std::memset(dbias_target, 0, bias_desc(s).get_size());
    CallBuffers buffers;
    std::unordered_map<int, memory> args = shared_arguments(
        p, s, *e, x, h0, c0, kernel, recurrent_kernel, bias, y, h_last, c_last, buffers);
    args.emplace(DNNL_ARG_WORKSPACE, make_memory(fwd->pd.workspace_desc(), workspace));
    args.emplace(DNNL_ARG_DIFF_SRC_LAYER, make_memory(sequence_desc(s, s.input), dx.data));
    args.emplace(DNNL_ARG_DIFF_SRC_ITER, make_memory(state_desc(s), dh0.data));
    args.emplace(DNNL_ARG_DIFF_WEIGHTS_LAYER, dw_layer_memory);
    args.emplace(DNNL_ARG_DIFF_WEIGHTS_ITER, dw_iter_memory);
    args.emplace(DNNL_ARG_DIFF_BIAS, make_memory(bias_desc(s), dbias_target));
    args.emplace(DNNL_ARG_DIFF_DST_LAYER, make_memory(sequence_desc(s, s.units), dy.data));
    args.emplace(DNNL_ARG_DIFF_DST_ITER, make_memory(state_desc(s), dh_last.data));
    if (p.cell == RnnCell::kLstm) {
      args.emplace(DNNL_ARG_DIFF_SRC_ITER_C, make_memory(state_desc(s), dc0.data));
      args.emplace(DNNL_ARG_DIFF_DST_ITER_C, make_memory(state_desc(s), dc_last.data));
    }
    e->prim.execute(stream(), args);
    weights_out(e->layer_out, dw_layer_memory, dkernel.data);
    weights_out(e->iter_out, dw_iter_memory, drecurrent_kernel.data);
    stream().wait();
    if (p.cell == RnnCell::kGru) {
      unfold_gru_bias_gradient(dbias_folded->floats(), s.units,
                               static_cast<float*>(dbias.data));
    }
  });
}

}  // namespace gpuaccel::cpu
