// Shared plumbing of the oneDNN-backed CPU kernels (onednn_ops.h): the process-wide engine and
// stream, the bounded thread-safe primitive cache every op looks its primitives up in, the
// user-managed scratchpad, the dtype mapping, the f16 <-> f32 staging for CPUs without f16
// compute, and the translation of dnnl::error into gpuaccel::Error. Only the onednn_*.cc files
// include this header. Written against the oneDNN 3.x API (cmake/onednn.cmake finds it).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/op_kinds.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu::onednn {

// Bound on cached entries; the least recently used one goes first.
constexpr size_t kPrimitiveCacheCapacity = 1024;

// The CPU engine. Creating it turns oneDNN's own primitive cache off: every primitive we run is
// kept in ours (cache_lookup), and oneDNN 3.2's cache, which tells implementations apart only
// by their position in the descriptor's implementation list, handed one thread the primitive
// of another implementation that a second thread had made for the same shape (docs/
// reliability.md, "Concurrent implementation measurements").
dnnl::engine& engine();
dnnl::stream& stream();

// Passes GPUACCEL_MAX_CPU_ISA (core/cpu_info.h) to our oneDNN with dnnl::set_max_cpu_isa, once,
// before oneDNN first looks at the CPU. engine() calls it; so must any oneDNN entry point used
// without the engine (dnnl_sgemm).
void apply_isa_ceiling_once();

// Cache keys: a compact text of op kind, dims, strides, dtypes and parameters.
class KeyBuilder {
 public:
  explicit KeyBuilder(const char* op) : text_(op) {}
  KeyBuilder& add(int64_t v);
  KeyBuilder& add(double v);
  KeyBuilder& add(const char* s);
  // dtype, ndim, shape and strides.
  KeyBuilder& add(const TensorView& v);
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

// Looks `key` up; on a miss calls `make` (outside the lock) and inserts its result. Entries
// are shared, so an entry evicted while another thread executes it stays alive.
std::shared_ptr<void> cache_lookup(const std::string& key,
                                   const std::function<std::shared_ptr<void>()>& make);

// The entry cached under `key`, or null; never creates one.
std::shared_ptr<void> cache_find(const std::string& key);

template <class T>
std::shared_ptr<T> cached(const std::string& key, const std::function<std::shared_ptr<T>()>& make) {
  return std::static_pointer_cast<T>(
      cache_lookup(key, [&]() -> std::shared_ptr<void> { return make(); }));
}

void note_primitive_created();

// Throws gpuaccel::Error(kInternal) unless `prim` runs the implementation named `wanted` (its
// descriptor's impl_info_str): the scratchpad size and weights layout we give a primitive are
// read from the descriptor it was made from, so a primitive of another implementation would
// overrun the scratchpad or read the weights in the wrong layout.
void check_primitive_implementation(const dnnl::primitive& prim, const char* wanted);

// Creates a primitive from its descriptor and counts it (onednn_primitives_created()).
template <class Prim, class Pd>
Prim make_primitive(const Pd& pd) {
  note_primitive_created();
  Prim prim(pd);
  check_primitive_implementation(prim, pd.impl_info_str());
  return prim;
}

// A cached primitive with the descriptor it was made from (whose memory descriptors give the
// layouts to execute it with).
template <class Prim>
struct PrimitiveEntry {
  typename Prim::primitive_desc pd;
  Prim prim;
};

// The primitive cached under `key`; on a miss it is made (make_primitive) from make_pd()'s
// descriptor.
template <class Prim, class MakePd>
std::shared_ptr<PrimitiveEntry<Prim>> cached_primitive(const KeyBuilder& key, const MakePd& make_pd) {
  return cached<PrimitiveEntry<Prim>>(key.str(), [&] {
    auto entry = std::make_shared<PrimitiveEntry<Prim>>();
    entry->pd = make_pd();
    entry->prim = make_primitive<Prim>(entry->pd);
    return entry;
  });
}

// Attributes every cached primitive is created with: user-managed scratchpad, so concurrent
// calls of one cached primitive from several threads never share a library-owned buffer.
dnnl::primitive_attr default_attr();
// default_attr() with `activation` as an eltwise post-op (applied in f32 before the output is
// rounded to its dtype, so relu commutes with that rounding). relu maps NaN to 0: use it only
// where fused_relu_is_exact says no NaN can arise.
dnnl::primitive_attr activation_attr(PostActivation activation);

// Per-thread grow-only byte buffers (slot 0: scratchpad; others: temporaries of one call).
void* thread_buffer(int slot, size_t bytes);
constexpr int kScratchpadSlot = 0;
constexpr int kWeightsSlot = 1;
constexpr int kZeroShiftSlot = 2;

// The scratchpad memory for `pd` (from this thread's buffer).
dnnl::memory scratchpad_memory(const dnnl::primitive_desc_base& pd);

dnnl::memory::data_type to_dnnl(DType dtype);

// A plain descriptor with explicit element strides.
dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, DType dtype,
                                const dnnl::memory::dims& strides);
// Row-major contiguous descriptor.
dnnl::memory::desc dense_desc(const dnnl::memory::dims& dims, DType dtype);

dnnl::memory make_memory(const dnnl::memory::desc& md, const void* data);

// Runs `fn`; a dnnl::error becomes gpuaccel::Error(kInternal, op, ... "dnnl status ...").
void guarded(const char* op, const std::function<void()>& fn);

// Whether matmul/conv in `dtype` must be staged through f32: always for f16 (oneDNN's CPU f16
// kernels need AVX512-FP16 or AMX-FP16, which the course's machines lack; one staged path keeps
// results alike everywhere), and for bf16 on CPUs without AVX-512 (oneDNN's bf16 kernels start
// at avx512_core; below it only slow reference kernels, or "unimplemented"). The numbers match
// a bf16 kernel's (bf16 inputs, f32 accumulation, one rounding at the end).
bool staged_through_f32(DType dtype);

// f16 staging. An f32 copy of a view; dimensions with stride 0 stay broadcast (stride 0,
// copied once), all others become row-major.
struct F32Copy {
  std::vector<float> data;
  TensorView view;
};
F32Copy to_f32(const TensorView& v);
// A contiguous f32 buffer shaped like `v` (for outputs), uninitialised contents.
F32Copy f32_like(const TensorView& v);
// Writes a contiguous f32 buffer into the contiguous view `dst` (any float dtype).
void store_from_f32(const float* src, const TensorView& dst);

// Bytes per element of the view's dtype.
size_t elem_size(const TensorView& v);

}  // namespace gpuaccel::cpu::onednn
