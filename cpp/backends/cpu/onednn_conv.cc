// cpu::conv2d_forward / _backward_data / _backward_weights (onednn_ops.h) on oneDNN's
// convolution primitives. Activations stay NHWC (oneDNN's nhwc, which its JIT kernels read
// directly); the Keras (KH, KW, C, F) kernel is oneDNN's hwio (grouped, Conv2dParams::groups: its
// {G, F/G, C/G, KH, KW} view of the same memory), and each primitive picks its own
// weights layout (format `any`), so the user's weights are reordered in (and weight gradients
// reordered out) by a cached reorder: a few KB per layer, against a much slower kernel on plain
// weights. The reordered weights are kept with the weights' storage (tensor/derived_copies.h),
// made once per weights version for each layout the primitives ask for (forward and
// backward-data share one when they agree), so a training step reorders each kernel once per
// layout and inference once in all. f16 is staged through f32. The backward passes pick among
// oneDNN's implementations per shape, backward-weights also between the caller's thread count
// and one thread (onednn_impl_choice.h; set_conv2d_backward_*_impl in onednn_ops.h).
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_conv_common.h"
#include "backends/cpu/onednn_impl_choice.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"
#include "tensor/derived_copies.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;

// ---- shared with onednn_deconv.cc (onednn_conv_common.h) ----

memory::desc nhwc_desc(const TensorView& v) {
  const int64_t n = v.shape[0], h = v.shape[1], w = v.shape[2], c = v.shape[3];
  return strided_desc({n, c, h, w}, v.dtype, {h * w * c, 1, w * c, c});
}

void add_params(KeyBuilder& key, const Conv2dParams& p) {
  key.add(p.stride_h).add(p.stride_w).add(p.dilation_h).add(p.dilation_w);
  key.add(p.pad_top).add(p.pad_bottom).add(p.pad_left).add(p.pad_right).add(p.groups);
}

KeyBuilder forward_key(const char* op, const TensorView& x, const TensorView& w,
                       const TensorView* bias, const TensorView& y, const Conv2dParams& p) {
  KeyBuilder key(op);
  key.add(x).add(w).add(y);
  if (bias != nullptr) key.add(*bias);
  add_params(key, p);
  return key;
}

namespace {

constexpr size_t kSerialReorderBytes = size_t{1} << 20;

std::atomic<int64_t> weights_reorders{0};  // user -> primitive reorders run, for tests

// The derived-copy key of weights in `md`: everything oneDNN lets us query of a blocked layout.
std::string layout_key(const memory::desc& md) {
  std::string key = "onednn_weights:" + std::to_string(static_cast<int>(md.get_data_type()));
  const auto add = [&key](const char* name, const memory::dims& dims) {
    key += name;
    for (memory::dim d : dims) key += std::to_string(d) + ",";
  };
  add(" dims=", md.get_dims());
  add(" padded=", md.get_padded_dims());
  if (md.get_format_kind() == memory::format_kind::blocked) {
    add(" strides=", md.get_strides());
    add(" blocks=", md.get_inner_blks());
    add(" idxs=", md.get_inner_idxs());
  } else {
    key += " kind=" + std::to_string(static_cast<int>(md.get_format_kind()));
  }
  return key;
}

// Weights reordered into a primitive's layout, as kept in the derived-copy cache.
struct ReorderedWeights {
  memory::desc md;
  std::shared_ptr<void> data;  // from the weights' device pool
};

}  // namespace

void WeightsReorder::init(const memory::desc& user, const memory::desc& primitive,
                          bool user_to_primitive) {
  user_md = user;
  prim_md = primitive;
  needed = user != primitive;
  if (!needed) return;
  ScopedOmpThreads serial(small() ? 1 : 0);  // the split is fixed here (cpu_threads.h)
  dnnl::reorder::primitive_desc pd =
      user_to_primitive ? dnnl::reorder::primitive_desc(engine(), user, engine(), primitive)
                        : dnnl::reorder::primitive_desc(engine(), primitive, engine(), user);
  prim = make_primitive<dnnl::reorder>(pd);
}

// Kernels' weights are small (tens of KB): a parallel region costs more than the copy, and far
// more when the cores are shared and a thread gets descheduled at the barrier, so small
// reorders are made for, and run on, the calling thread alone.
void WeightsReorder::run(void* user_data, void* prim_data, bool user_to_primitive) const {
  memory u = make_memory(user_md, user_data);
  memory q = make_memory(prim_md, prim_data);
  ScopedOmpThreads serial(small() ? 1 : 0);
  if (user_to_primitive) weights_reorders.fetch_add(1, std::memory_order_relaxed);
  if (user_to_primitive) {
    prim.execute(stream(), u, q);
  } else {
    prim.execute(stream(), q, u);
  }
}

bool WeightsReorder::small() const { return user_md.get_size() <= kSerialReorderBytes; }

void* primitive_weights(const TensorView& w, const WeightsReorder& reorder,
                        std::shared_ptr<void>& keep) {
  if (!reorder.needed) return w.data;
  if (w.derived != nullptr && w.derived->is_source(w)) {
    keep = w.derived->get_or_make(layout_key(reorder.prim_md), [&]() -> std::shared_ptr<void> {
      auto copy = std::make_shared<ReorderedWeights>();
      copy->md = reorder.prim_md;
      copy->data = w.derived->allocate(reorder.prim_md.get_size());
      reorder.run(w.data, copy->data.get(), true);
      return copy;
    });
    const auto& copy = *static_cast<const ReorderedWeights*>(keep.get());
    if (copy.md == reorder.prim_md) return copy.data.get();
    keep.reset();  // a layout the key could not tell apart: derive per call
  }
  void* data = thread_buffer(kWeightsSlot, reorder.prim_md.get_size());
  reorder.run(w.data, data, true);
  return data;
}

namespace {

// w: (KH, KW, C / groups, F) as oneDNN's weights: {F, C, KH, KW} in hwio, or, grouped,
// {G, F / G, C / G, KH, KW} with the same memory (filter f = g * F / G + o, Keras's and
// torch's grouping).
memory::desc hwio_desc(const TensorView& w, int64_t groups) {
  const int64_t kh = w.shape[0], kw = w.shape[1], c = w.shape[2], f = w.shape[3];
  if (groups == 1) return strided_desc({f, c, kh, kw}, w.dtype, {1, f, kw * c * f, c * f});
  return strided_desc({groups, f / groups, c, kh, kw}, w.dtype,
                      {f / groups, 1, f, kw * c * f, c * f});
}

memory::desc any_weights_desc(const TensorView& w, DType dtype, int64_t groups) {
  const int64_t kh = w.shape[0], kw = w.shape[1], c = w.shape[2], f = w.shape[3];
  if (groups == 1) return memory::desc({f, c, kh, kw}, to_dnnl(dtype), memory::format_tag::any);
  return memory::desc({groups, f / groups, c, kh, kw}, to_dnnl(dtype), memory::format_tag::any);
}

// The forward primitive descriptor: cached primitives get default_attr(); the hints that
// backward descriptors need are created with oneDNN's default attributes.
dnnl::convolution_forward::primitive_desc forward_pd(
    const memory::desc& x_md, const memory::desc& w_md, const memory::desc* b_md,
    const memory::desc& y_md, const Geometry& g,
    const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
  if (b_md != nullptr) {
    return dnnl::convolution_forward::primitive_desc(
        engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x_md,
        w_md, *b_md, y_md, g.strides, g.dilates, g.pad_l, g.pad_r, attr);
  }
  return dnnl::convolution_forward::primitive_desc(
      engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x_md, w_md,
      y_md, g.strides, g.dilates, g.pad_l, g.pad_r, attr);
}

using ForwardEntry = ForwardPrimitive<dnnl::convolution_forward>;

struct BackwardDataEntry {
  dnnl::convolution_backward_data::primitive_desc pd;
  dnnl::convolution_backward_data prim;
  WeightsReorder weights;
};

struct BackwardWeightsEntry {
  dnnl::convolution_backward_weights::primitive_desc pd;
  dnnl::convolution_backward_weights prim;
  WeightsReorder weights;  // primitive -> user
  int threads = 0;         // OpenMP threads it was created for and runs on (0: the caller's)
};

void forward_native(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, PostActivation activation, const TensorView& y) {
  KeyBuilder key = forward_key("conv_fwd", x, w, bias, y, p);
  key.add(static_cast<int64_t>(activation));
  auto e = cached<ForwardEntry>(key.str(), [&] {
    auto entry = std::make_shared<ForwardEntry>();
    const Geometry g(p);
    memory::desc b_md;
    if (bias != nullptr) b_md = dense_desc({bias->shape[0]}, bias->dtype);
    entry->pd = forward_pd(nhwc_desc(x), any_weights_desc(w, w.dtype, p.groups),
                           bias != nullptr ? &b_md : nullptr, nhwc_desc(y), g,
                           activation_attr(activation));
    entry->prim = make_primitive<dnnl::convolution_forward>(entry->pd);
    entry->weights.init(hwio_desc(w, p.groups), entry->pd.weights_desc(), true);
    return entry;
  });
  run_forward(*e, x, w, bias, y);
}

// ---- implementation choice (onednn_impl_choice.h) ----
// Each backward pass's setting (onednn_ops.h, set_conv2d_backward_*_impl) is part of its cache
// key, so a changed setting gets its own entries and a repeated call never chooses again.

ImplSetting& backward_data_setting() {
  static ImplSetting setting("GPUACCEL_ONEDNN_CONV_BWD_DATA", "Conv2DBackpropInput");
  return setting;
}

ImplSetting& backward_weights_setting() {
  static ImplSetting setting("GPUACCEL_ONEDNN_CONV_BWD_WEIGHTS", "Conv2DBackpropFilter");
  return setting;
}

std::atomic<int64_t> g_backward_data_choices{0};
std::atomic<int64_t> g_backward_weights_choices{0};

// A page-aligned buffer of `bytes` (trial weights, so that a candidate is not timed on
// worse-aligned data than the real call's pool-allocated weights).
struct AlignedBuffer {
  static constexpr size_t kAlignment = 4096;
  std::vector<uint8_t> storage;
  void* data = nullptr;
  explicit AlignedBuffer(size_t bytes) : storage(bytes + kAlignment) {
    const auto address = reinterpret_cast<uintptr_t>(storage.data());
    data = reinterpret_cast<void*>((address + kAlignment - 1) / kAlignment * kAlignment);
  }
};

// ---- backward data ----

std::string backward_data_key(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                              const TensorView& dx, const std::string& setting) {
  KeyBuilder key("conv_bwd_data");
  key.add(dy).add(w).add(dx);
  add_params(key, p);
  key.add(setting.c_str());
  return key.str();
}

// oneDNN's descriptor for the operation, at its own first pick of implementation, with the
// forward hint it was made from: next_impl() reads the hint, so it must outlive the iteration.
struct BackwardDataPd {
  dnnl::convolution_forward::primitive_desc hint;
  dnnl::convolution_backward_data::primitive_desc pd;
};

BackwardDataPd backward_data_pd(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                                const TensorView& dx) {
  const Geometry g(p);
  const memory::desc dx_md = nhwc_desc(dx), dy_md = nhwc_desc(dy);
  const memory::desc w_any = any_weights_desc(w, w.dtype, p.groups);
  BackwardDataPd made;
  made.hint = forward_pd(dx_md, w_any, nullptr, dy_md, g);
  made.pd = dnnl::convolution_backward_data::primitive_desc(
      engine(), dnnl::algorithm::convolution_direct, dx_md, w_any, dy_md, g.strides, g.dilates,
      g.pad_l, g.pad_r, made.hint, default_attr());
  return made;
}

using BackwardDataChoice = ImplChoice<dnnl::convolution_backward_data::primitive_desc>;

// The implementation the setting selects. A measured candidate runs on this call's own operands
// (dx is overwritten by every run and again by the real call after), with its own page-aligned
// copy of the weights in its layout, reordered before the timing, as the real call's are.
BackwardDataChoice backward_data_choice(const std::string& setting, const TensorView& dy,
                                        const TensorView& w, const Conv2dParams& p,
                                        const TensorView& dx) {
  using Pd = dnnl::convolution_backward_data::primitive_desc;
  return choose_implementation(
      setting, /*one_thread_variants=*/false, [&] { return backward_data_pd(dy, w, p, dx); },
      [&](const BackwardDataChoice& c) -> std::function<void()> {
        struct Trial {
          Pd pd;
          dnnl::convolution_backward_data prim;
          AlignedBuffer storage;
          memory weights;
        };
        auto t = std::make_shared<Trial>(
            Trial{c.pd, make_primitive<dnnl::convolution_backward_data>(c.pd),
                  AlignedBuffer(c.pd.weights_desc().get_size()), memory()});
        t->weights = make_memory(c.pd.weights_desc(), t->storage.data);
        memory user_w = make_memory(hwio_desc(w, p.groups), w.data);
        dnnl::reorder(user_w, t->weights).execute(stream(), user_w, t->weights);
        stream().wait();
        return [t, &dy, &dx] {
          t->prim.execute(stream(),
                          {{DNNL_ARG_DIFF_DST, make_memory(t->pd.diff_dst_desc(), dy.data)},
                           {DNNL_ARG_WEIGHTS, t->weights},
                           {DNNL_ARG_DIFF_SRC, make_memory(t->pd.diff_src_desc(), dx.data)},
                           {DNNL_ARG_SCRATCHPAD, scratchpad_memory(t->pd)}});
          stream().wait();
        };
      });
}

void backward_data_native(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                          const TensorView& dx) {
  const std::string setting = backward_data_setting().get();
  auto e = cached<BackwardDataEntry>(backward_data_key(dy, w, p, dx, setting), [&] {
    auto entry = std::make_shared<BackwardDataEntry>();
    const BackwardDataChoice choice = backward_data_choice(setting, dy, w, p, dx);
    entry->pd = choice.pd;
    g_backward_data_choices.fetch_add(1, std::memory_order_relaxed);
    entry->prim = make_primitive<dnnl::convolution_backward_data>(entry->pd);
    entry->weights.init(hwio_desc(w, p.groups), entry->pd.weights_desc(), true);
    return entry;
  });
  std::shared_ptr<void> keep_weights;
  void* w_data = primitive_weights(w, e->weights, keep_weights);
  e->prim.execute(stream(), {{DNNL_ARG_DIFF_DST, make_memory(e->pd.diff_dst_desc(), dy.data)},
                             {DNNL_ARG_WEIGHTS, make_memory(e->pd.weights_desc(), w_data)},
                             {DNNL_ARG_DIFF_SRC, make_memory(e->pd.diff_src_desc(), dx.data)},
                             {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e->pd)}});
  stream().wait();
}

// The view the native (unstaged) path sees: f32 and row-major when `v`'s dtype is staged
// through f32 (the data pointer is not read; only for cache keys and descriptors).
TensorView native_view(const TensorView& v) {
  if (!staged_through_f32(v.dtype)) return v;
  TensorView f = v;
  f.dtype = DType::kFloat32;
  int64_t n = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    f.strides[d] = n;
    n *= v.shape[d];
  }
  return f;
}

// ---- backward weights ----
// The choice includes the thread count: 3.2's kernels split a small layer's reduction over the
// threads so that 2 threads are slower than 1 (onednn_impl_choice.h).

std::string backward_weights_key(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                                 const TensorView& dw, const TensorView* dbias,
                                 const std::string& setting) {
  KeyBuilder key("conv_bwd_weights");
  key.add(x).add(dy).add(dw);
  if (dbias != nullptr) key.add(*dbias);
  add_params(key, p);
  key.add(setting.c_str());
  return key.str();
}

struct BackwardWeightsPd {
  dnnl::convolution_forward::primitive_desc hint;  // read by next_impl(): outlives the iteration
  dnnl::convolution_backward_weights::primitive_desc pd;
};

BackwardWeightsPd backward_weights_pd(const TensorView& x, const TensorView& dy,
                                      const Conv2dParams& p, const TensorView& dw,
                                      const TensorView* dbias) {
  const Geometry g(p);
  const memory::desc x_md = nhwc_desc(x), dy_md = nhwc_desc(dy);
  const memory::desc w_any = any_weights_desc(dw, dw.dtype, p.groups);
  memory::desc b_md;
  if (dbias != nullptr) b_md = dense_desc({dbias->shape[0]}, dbias->dtype);
  BackwardWeightsPd made;
  made.hint = forward_pd(x_md, any_weights_desc(dw, x.dtype, p.groups), dbias != nullptr ? &b_md : nullptr,
                         dy_md, g);
  if (dbias != nullptr) {
    made.pd = dnnl::convolution_backward_weights::primitive_desc(
        engine(), dnnl::algorithm::convolution_direct, x_md, w_any, b_md, dy_md, g.strides,
        g.dilates, g.pad_l, g.pad_r, made.hint, default_attr());
  } else {
    made.pd = dnnl::convolution_backward_weights::primitive_desc(
        engine(), dnnl::algorithm::convolution_direct, x_md, w_any, dy_md, g.strides, g.dilates,
        g.pad_l, g.pad_r, made.hint, default_attr());
  }
  return made;
}

// Runs `e` once: dw (and dbias) written as the op's result, through this thread's buffer and
// the reorder out when the primitive's diff_weights layout is not the user's. Used by the real
// call and by every measured candidate, so each is timed writing what the real call writes.
void run_backward_weights(const BackwardWeightsEntry& e, const TensorView& x,
                          const TensorView& dy, const TensorView& dw, const TensorView* dbias) {
  ScopedOmpThreads scope(e.threads);
  void* dw_data = dw.data;
  if (e.weights.needed) dw_data = thread_buffer(kWeightsSlot, e.pd.diff_weights_desc().get_size());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, make_memory(e.pd.src_desc(), x.data)},
      {DNNL_ARG_DIFF_DST, make_memory(e.pd.diff_dst_desc(), dy.data)},
      {DNNL_ARG_DIFF_WEIGHTS, make_memory(e.pd.diff_weights_desc(), dw_data)},
      {DNNL_ARG_SCRATCHPAD, scratchpad_memory(e.pd)}};
  if (dbias != nullptr) {
    args[DNNL_ARG_DIFF_BIAS] = make_memory(e.pd.diff_bias_desc(), dbias->data);
  }
  e.prim.execute(stream(), args);
  if (e.weights.needed) e.weights.run(dw.data, dw_data, false);
  stream().wait();
}

// The primitive (and dw reorder) of `choice`; call under its thread count.
std::shared_ptr<BackwardWeightsEntry> backward_weights_entry(
    const ImplChoice<dnnl::convolution_backward_weights::primitive_desc>& choice,
    const TensorView& dw, int64_t groups) {
  auto entry = std::make_shared<BackwardWeightsEntry>();
  entry->pd = choice.pd;
  entry->threads = choice.threads;
  entry->prim = make_primitive<dnnl::convolution_backward_weights>(entry->pd);
  entry->weights.init(hwio_desc(dw, groups), entry->pd.diff_weights_desc(), false);
  return entry;
}

void backward_weights_native(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                             const TensorView& dw, const TensorView* dbias) {
  using Choice = ImplChoice<dnnl::convolution_backward_weights::primitive_desc>;
  const std::string setting = backward_weights_setting().get();
  auto e = cached<BackwardWeightsEntry>(
      backward_weights_key(x, dy, p, dw, dbias, setting), [&] {
        // A measured candidate overwrites dw and dbias, as the real call does after it.
        const Choice choice = choose_implementation(
            setting, /*one_thread_variants=*/true,
            [&] { return backward_weights_pd(x, dy, p, dw, dbias); },
            [&](const Choice& c) -> std::function<void()> {
              std::shared_ptr<BackwardWeightsEntry> trial = backward_weights_entry(c, dw, p.groups);
              return [trial, &x, &dy, &dw, dbias] {
                run_backward_weights(*trial, x, dy, dw, dbias);
              };
            });
        g_backward_weights_choices.fetch_add(1, std::memory_order_relaxed);
        ScopedOmpThreads scope(choice.threads);
        return backward_weights_entry(choice, dw, p.groups);
      });
  run_backward_weights(*e, x, dy, dw, dbias);
}

}  // namespace

int64_t conv_weights_reorders() { return weights_reorders.load(std::memory_order_relaxed); }

void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y, PostActivation activation) {
  if (y.numel() == 0) return;
  guarded("Conv2D", [&] {
    if (!staged_through_f32(x.dtype)) {
      forward_native(x, w, bias, p, activation, y);
      return;
    }
    F32Copy x32 = to_f32(x), w32 = to_f32(w), y32 = f32_like(y), b32;
    if (bias != nullptr) b32 = to_f32(*bias);
    forward_native(x32.view, w32.view, bias != nullptr ? &b32.view : nullptr, p, activation,
                   y32.view);
    store_from_f32(y32.data.data(), y);
  });
}

void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                          const TensorView& dx) {
  if (dx.numel() == 0) return;
  guarded("Conv2DBackpropInput", [&] {
    if (!staged_through_f32(dy.dtype)) {
      backward_data_native(dy, w, p, dx);
      return;
    }
    F32Copy dy32 = to_f32(dy), w32 = to_f32(w), dx32 = f32_like(dx);
    backward_data_native(dy32.view, w32.view, p, dx32.view);
    store_from_f32(dx32.data.data(), dx);
  });
}

void set_conv2d_backward_data_impl(const std::string& setting) {
  backward_data_setting().set(setting);
}

std::string conv2d_backward_data_impl_setting() { return backward_data_setting().get(); }

std::vector<std::string> conv2d_backward_data_impls(const TensorView& dy, const TensorView& w,
                                                    const Conv2dParams& p,
                                                    const TensorView& dx) {
  std::vector<std::string> names;
  guarded("Conv2DBackpropInput", [&] {
    const auto make = [&] {
      return backward_data_pd(native_view(dy), native_view(w), p, native_view(dx));
    };
    for (const auto& c : implementation_choices(make, false)) names.push_back(c.name());
  });
  return names;
}

std::string conv2d_backward_data_impl_used(const TensorView& dy, const TensorView& w,
                                           const Conv2dParams& p, const TensorView& dx) {
  const auto found = std::static_pointer_cast<BackwardDataEntry>(
      cache_find(backward_data_key(native_view(dy), native_view(w), p, native_view(dx),
                                   backward_data_setting().get())));
  return found == nullptr ? std::string() : std::string(found->pd.impl_info_str());
}

int64_t onednn_conv2d_backward_data_choices() {
  return g_backward_data_choices.load(std::memory_order_relaxed);
}

void set_conv2d_backward_weights_impl(const std::string& setting) {
  backward_weights_setting().set(setting);
}

std::string conv2d_backward_weights_impl_setting() { return backward_weights_setting().get(); }

std::vector<std::string> conv2d_backward_weights_impls(const TensorView& x, const TensorView& dy,
                                                       const Conv2dParams& p,
                                                       const TensorView& dw,
                                                       const TensorView* dbias) {
  std::vector<std::string> names;
  guarded("Conv2DBackpropFilter", [&] {
    const TensorView db = dbias != nullptr ? native_view(*dbias) : TensorView();
    const auto make = [&] {
      return backward_weights_pd(native_view(x), native_view(dy), p, native_view(dw),
                                 dbias != nullptr ? &db : nullptr);
    };
    for (const auto& c : implementation_choices(make, true)) names.push_back(c.name());
  });
  return names;
}

std::string conv2d_backward_weights_impl_used(const TensorView& x, const TensorView& dy,
                                              const Conv2dParams& p, const TensorView& dw,
                                              const TensorView* dbias) {
  const TensorView db = dbias != nullptr ? native_view(*dbias) : TensorView();
  const auto found = std::static_pointer_cast<BackwardWeightsEntry>(cache_find(
      backward_weights_key(native_view(x), native_view(dy), p, native_view(dw),
                           dbias != nullptr ? &db : nullptr, backward_weights_setting().get())));
  if (found == nullptr) return std::string();
  return ImplChoice<dnnl::convolution_backward_weights::primitive_desc>{found->pd, found->threads,
                                                                        nullptr}
      .name();
}

int64_t onednn_conv2d_backward_weights_choices() {
  return g_backward_weights_choices.load(std::memory_order_relaxed);
}

void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                             const TensorView& dw, const TensorView* dbias) {
  if (dw.numel() == 0) return;
  guarded("Conv2DBackpropFilter", [&] {
    if (!staged_through_f32(x.dtype)) {
      backward_weights_native(x, dy, p, dw, dbias);
      return;
    }
    F32Copy x32 = to_f32(x), dy32 = to_f32(dy), dw32 = f32_like(dw), db32;
    if (dbias != nullptr) db32 = f32_like(*dbias);
    backward_weights_native(x32.view, dy32.view, p, dw32.view,
                            dbias != nullptr ? &db32.view : nullptr);
    store_from_f32(dw32.data.data(), dw);
    if (dbias != nullptr) store_from_f32(db32.data.data(), *dbias);
  });
}

}  // namespace gpuaccel::cpu
