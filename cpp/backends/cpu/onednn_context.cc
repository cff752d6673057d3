// The engine, stream, primitive cache, scratchpad and staging helpers shared by the oneDNN ops
// (see onednn_context.h), and the two cache counters onednn_ops.h exports.
#include "backends/cpu/onednn_context.h"

#include <oneapi/dnnl/dnnl_debug.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <list>
#include <mutex>
#include <utility>

#include "backends/cpu/onednn_ops.h"
#include "core/cpu_info.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {
namespace onednn {
namespace {

std::atomic<int64_t> g_primitives_created{0};

class PrimitiveCache {
 public:
  static PrimitiveCache& instance() {
    static PrimitiveCache* cache = new PrimitiveCache();  // never destroyed: safe at exit
    return *cache;
  }

  std::shared_ptr<void> lookup(const std::string& key,
                               const std::function<std::shared_ptr<void>()>& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        entries_.splice(entries_.begin(), entries_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<void> made = make();  // may be slow; no lock held
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {  // another thread won the race; use its entry
      entries_.splice(entries_.begin(), entries_, it->second);
      return it->second->second;
    }
    entries_.emplace_front(key, made);
    index_[key] = entries_.begin();
    while (entries_.size() > kPrimitiveCacheCapacity) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    return made;
  }

  std::shared_ptr<void> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : it->second->second;
  }

  int64_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(entries_.size());
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<void>>;
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

float read_as_float(const void* base, DType dtype, int64_t offset) {
  switch (dtype) {
    case DType::kFloat32: return static_cast<const float*>(base)[offset];
    case DType::kFloat16: {
      uint32_t bits = half_bits_to_float_bits(static_cast<const uint16_t*>(base)[offset]);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    case DType::kBFloat16: {
      uint32_t bits = bfloat16_bits_to_float_bits(static_cast<const uint16_t*>(base)[offset]);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    default:
      throw_error(ErrorCode::kInternal, "oneDNN", std::string("no float view of dtype ") +
                                                      dtype_name(dtype));
  }
}

}  // namespace

void note_primitive_created() { g_primitives_created.fetch_add(1, std::memory_order_relaxed); }

void check_primitive_implementation(const dnnl::primitive& prim, const char* wanted) {
  const char* running = nullptr;
  dnnl_primitive_desc_query(prim.get_primitive_desc(), dnnl_query_impl_info_str, 0, &running);
  if (running == nullptr || std::strcmp(running, wanted) != 0) {
    throw_error(ErrorCode::kInternal, "oneDNN",
                std::string("asked for a primitive of implementation '") + wanted +
                    "' and got one of '" + (running == nullptr ? "?" : running) + "'");
  }
}

dnnl::cpu_isa dnnl_isa_of(IsaCeiling ceiling) {
  switch (ceiling) {
    case IsaCeiling::kNone: return dnnl::cpu_isa::isa_default;
    case IsaCeiling::kSse41: return dnnl::cpu_isa::sse41;
    case IsaCeiling::kAvx: return dnnl::cpu_isa::avx;
    case IsaCeiling::kAvx2: return dnnl::cpu_isa::avx2;
    case IsaCeiling::kAvx2Vnni: return dnnl::cpu_isa::avx2_vnni;
    case IsaCeiling::kAvx2Vnni2: return dnnl::cpu_isa::avx2_vnni_2;
    case IsaCeiling::kAvx512Core: return dnnl::cpu_isa::avx512_core;
    case IsaCeiling::kAvx512CoreVnni: return dnnl::cpu_isa::avx512_core_vnni;
    case IsaCeiling::kAvx512CoreBf16: return dnnl::cpu_isa::avx512_core_bf16;
    case IsaCeiling::kAvx512CoreFp16: return dnnl::cpu_isa::avx512_core_fp16;
    case IsaCeiling::kAvx512CoreAmx: return dnnl::cpu_isa::avx512_core_amx;
    case IsaCeiling::kAvx512CoreAmxFp16: return dnnl::cpu_isa::avx512_core_amx_fp16;
  }
  return dnnl::cpu_isa::isa_default;
}

void apply_isa_ceiling_once() {
  static const bool applied = [] {
    const CpuInfo info = cpu_info();
    if (info.isa_cap_variable != "GPUACCEL_MAX_CPU_ISA" || !info.isa_cap_recognized) return false;
    try {
      dnnl::set_max_cpu_isa(dnnl_isa_of(info.isa_ceiling));
    } catch (const dnnl::error& e) {
      // oneDNN accepts it only before its first look at the CPU; say so rather than run uncapped
      // while `gpuaccel.info` reports the cap.
      std::fprintf(stderr, "gpuaccel: GPUACCEL_MAX_CPU_ISA=%s not applied to oneDNN: %s\n",
                   info.isa_cap.c_str(), e.what());
      return false;
    }
    return true;
  }();
  (void)applied;
}

dnnl::engine& engine() {
  static dnnl::engine* e = [] {
    dnnl::engine* made = nullptr;
    apply_isa_ceiling_once();
    guarded("oneDNN", [&] {
      dnnl::set_primitive_cache_capacity(0);
      made = new dnnl::engine(dnnl::engine::kind::cpu, 0);
    });
    return made;
  }();
  return *e;
}

dnnl::stream& stream() {
  static dnnl::stream* s = [] {
    dnnl::stream* made = nullptr;
    guarded("oneDNN", [&] { made = new dnnl::stream(engine()); });
    return made;
  }();
  return *s;
}

KeyBuilder& KeyBuilder::add(int64_t v) {
  text_ += '|';
  text_ += std::to_string(v);
  return *this;
}

KeyBuilder& KeyBuilder::add(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "|%.9g", v);
  text_ += buf;
  return *this;
}

KeyBuilder& KeyBuilder::add(const char* s) {
  text_ += '|';
  text_ += s;
  return *this;
}

KeyBuilder& KeyBuilder::add(const TensorView& v) {
  text_ += '|';
  text_ += dtype_name(v.dtype);
  for (int d = 0; d < v.ndim; ++d) {
    text_ += (d == 0 ? ':' : ',');
    text_ += std::to_string(v.shape[d]);
  }
  for (int d = 0; d < v.ndim; ++d) {
    text_ += (d == 0 ? '/' : ',');
    text_ += std::to_string(v.strides[d]);
  }
  return *this;
}

namespace {
// oneDNN fixes a primitive's thread count when it is created (its jit kernels split the work
// for omp_get_max_threads() of the creating thread, and its own cache keys on that count), so an
// entry made at one count must not serve a caller at another: a replica thread limited to one
// thread would otherwise run a two-thread primitive (oversubscribing the cores), and a student
// who raises the thread count after a first call would keep running single-threaded.
std::string thread_scoped(const std::string& key) {
  return key + "|threads=" + std::to_string(omp_get_max_threads());
}
}  // namespace

std::shared_ptr<void> cache_lookup(const std::string& key,
                                   const std::function<std::shared_ptr<void>()>& make) {
  return PrimitiveCache::instance().lookup(thread_scoped(key), make);
}

std::shared_ptr<void> cache_find(const std::string& key) {
  return PrimitiveCache::instance().find(thread_scoped(key));
}

dnnl::primitive_attr default_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::primitive_attr activation_attr(PostActivation activation) {
  dnnl::primitive_attr attr = default_attr();
  if (activation == PostActivation::kRelu) {
    dnnl::post_ops ops;
    // A max with 0: a NaN output becomes 0 (callers check that none can arise, see
    // fused_relu_guard.h). elu with alpha -0 would keep NaN, but its exp made the course CNN's
    // first convolution 3x slower than conv + separate relu (measured), the guard costs a read of
    // the input.
    ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

void* thread_buffer(int slot, size_t bytes) {
  // Page-aligned: oneDNN's blocked weights and scratchpads are read with full-width vector
  // loads, and a malloc-aligned (16-byte) buffer splits cache lines (measured: +25% on a
  // weight-bound 3x3 convolution).
  constexpr size_t kAlignment = 4096;
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  constexpr int kSlots = 4;
  thread_local Buffer buffers[kSlots];
  Buffer& b = buffers[slot];
  if (b.size < bytes || b.data == nullptr) {
    const size_t size = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, size);
    if (p == nullptr) {
      throw_error(ErrorCode::kResourceExhausted, "oneDNN",
                  "could not allocate " + std::to_string(size) + " bytes of scratch memory");
    }
    std::free(b.data);
    b.data = p;
    b.size = size;
  }
  return b.data;
}

dnnl::memory scratchpad_memory(const dnnl::primitive_desc_base& pd) {
  dnnl::memory::desc md = pd.scratchpad_desc();
  return dnnl::memory(md, engine(), thread_buffer(kScratchpadSlot, md.get_size()));
}

dnnl::memory::data_type to_dnnl(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return dnnl::memory::data_type::f32;
    case DType::kBFloat16: return dnnl::memory::data_type::bf16;
    case DType::kFloat16: return dnnl::memory::data_type::f16;
    case DType::kInt32: return dnnl::memory::data_type::s32;
    case DType::kUInt8: return dnnl::memory::data_type::u8;
    case DType::kInt8: return dnnl::memory::data_type::s8;
    case DType::kFloat64:
      throw_error(ErrorCode::kInvalidArgument, "oneDNN",
                  "float64 has no oneDNN kernel on the CPU: cast to float32 first");
    default:
      throw_error(ErrorCode::kInternal, "oneDNN",
                  std::string("dtype ") + dtype_name(dtype) + " has no oneDNN equivalent");
  }
}

dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, DType dtype,
                                const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, to_dnnl(dtype), strides);
}

dnnl::memory::desc dense_desc(const dnnl::memory::dims& dims, DType dtype) {
  dnnl::memory::dims strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  return strided_desc(dims, dtype, strides);
}

dnnl::memory make_memory(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, engine(), const_cast<void*>(data));
}

void guarded(const char* op, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const dnnl::error& e) {
    throw_error(ErrorCode::kInternal, op,
                std::string("oneDNN failed: ") + e.what() + " (dnnl status " +
                    dnnl_status2str(e.status) + " = " + std::to_string(static_cast<int>(e.status)) +
                    ")");
  }
}

size_t elem_size(const TensorView& v) { return dtype_size(v.dtype); }

bool staged_through_f32(DType dtype) {
  if (dtype == DType::kFloat16) return true;
  if (dtype != DType::kBFloat16) return false;
  static const bool native_bf16 = cpu_info().avx512f;
  return !native_bf16;
}

F32Copy to_f32(const TensorView& v) {
  F32Copy c;
  c.view.dtype = DType::kFloat32;
  c.view.ndim = v.ndim;
  int64_t n = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    const bool broadcast = v.strides[d] == 0 && v.shape[d] > 1;
    c.view.shape[d] = v.shape[d];
    c.view.strides[d] = broadcast ? 0 : n;
    if (!broadcast) n *= v.shape[d];
  }
  c.data.resize(static_cast<size_t>(n));
  c.view.data = c.data.data();
  if (n == 0) return c;
  if (v.dtype == DType::kFloat16 && v.is_contiguous()) {
    convert_f16_to_f32(static_cast<const uint16_t*>(v.data), c.data.data(), n);
    return c;
  }
  if (v.dtype == DType::kBFloat16 && v.is_contiguous()) {
    convert_bf16_to_f32(static_cast<const uint16_t*>(v.data), c.data.data(), n);
    return c;
  }
  // Strided gather over the non-broadcast dimensions.
  int64_t idx[kMaxDims] = {0};
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int d = 0; d < v.ndim; ++d) off += idx[d] * v.strides[d];
    c.data[static_cast<size_t>(i)] = read_as_float(v.data, v.dtype, off);
    for (int d = v.ndim - 1; d >= 0; --d) {
      if (c.view.strides[d] == 0) continue;  // broadcast: copied once
      if (++idx[d] < v.shape[d]) break;
      idx[d] = 0;
    }
  }
  return c;
}

F32Copy f32_like(const TensorView& v) {
  F32Copy c;
  c.view = v;
  c.view.dtype = DType::kFloat32;
  int64_t n = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    c.view.strides[d] = n;
    n *= v.shape[d];
  }
  c.data.resize(static_cast<size_t>(n));
  c.view.data = c.data.data();
  return c;
}

void store_from_f32(const float* src, const TensorView& dst) {
  const size_t n = static_cast<size_t>(dst.numel());
  switch (dst.dtype) {
    case DType::kFloat32: std::memcpy(dst.data, src, n * sizeof(float)); break;
    case DType::kFloat16: convert_f32_to_f16(src, static_cast<uint16_t*>(dst.data), n); break;
    case DType::kBFloat16: convert_f32_to_bf16(src, static_cast<uint16_t*>(dst.data), n); break;
    default: throw_error(ErrorCode::kInternal, "oneDNN", "store_from_f32: not a float dtype");
  }
}

}  // namespace onednn

int64_t onednn_primitive_cache_size() { return onednn::PrimitiveCache::instance().size(); }
int64_t onednn_primitives_created() {
  return onednn::g_primitives_created.load(std::memory_order_relaxed);
}

}  // namespace gpuaccel::cpu
