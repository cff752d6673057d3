// The pooling allocator's mechanics; the rules it follows are listed in pool_allocator.h.
// Chunks live in one vector and refer to each other by 32-bit handles, so splitting, merging
// and list updates never call malloc on the allocate/deallocate path.
#include "memory/pool_allocator.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/errors.h"
#include "memory/allocation_observer.h"
#include "memory/oom_message.h"

namespace gpuaccel {

namespace {

// Classes reach sizes up to 2^64 bytes: 16 exact small classes, then 16 per power of two.
constexpr size_t kNumClasses = kSubClasses + (64 - 8 - kSubClassBits) * kSubClasses;
constexpr size_t kBitmapWords = (kNumClasses + 63) / 64;

size_t round_up(size_t bytes) { return (bytes + kMinChunkBytes - 1) & ~(kMinChunkBytes - 1); }
size_t round_down(size_t bytes) { return bytes & ~(kMinChunkBytes - 1); }
size_t doubled(size_t bytes) { return bytes > SIZE_MAX / 2 ? SIZE_MAX : bytes * 2; }

std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

[[noreturn]] void corrupt(const std::string& what) {
  throw_error(ErrorCode::kInternal, "PoolAllocator", "invariant broken: " + what);
}

}  // namespace

size_t pool_size_class(size_t bytes) {
  const size_t q = bytes / kMinChunkBytes;
  if (q < kSubClasses) return q;
  const int top = 63 - __builtin_clzll(q);
  const size_t sub = (q >> (top - kSubClassBits)) & (kSubClasses - 1);
  return kSubClasses + static_cast<size_t>(top - kSubClassBits) * kSubClasses + sub;
}

size_t pool_size_class_min_bytes(size_t size_class) {
  if (size_class < kSubClasses) return size_class * kMinChunkBytes;
  const size_t top = (size_class - kSubClasses) / kSubClasses + kSubClassBits;
  const size_t sub = (size_class - kSubClasses) % kSubClasses;
  return ((kSubClasses + sub) << (top - kSubClassBits)) * kMinChunkBytes;
}

// Observer events gathered under the lock and delivered after it is released.
struct PoolAllocator::PendingEvents {
  explicit PendingEvents(const PoolAllocator* pool)
      : pool(pool), active(allocation_observer_installed()) {}
  void add(AllocationEventKind kind, uintptr_t ptr, size_t bytes, size_t requested) {
    if (!active) return;
    AllocationEvent e;
    e.kind = kind;
    e.pool = &pool->options_.name;
    e.device = &pool->options_.device_name;
    e.ptr = reinterpret_cast<const void*>(ptr);
    e.bytes = bytes;
    e.requested = requested;
    e.allocated_after = pool->stats_.allocated_bytes.current;
    e.reserved_after = pool->stats_.reserved_bytes.current;
    list.push_back(e);
  }
  void deliver() {
    for (const auto& e : list) notify_allocation_observer(e);
    list.clear();
  }
  const PoolAllocator* pool;
  bool active;
  std::vector<AllocationEvent> list;
};

PoolAllocator::PoolAllocator(std::shared_ptr<SubAllocator> sub_allocator, PoolOptions options)
    : sub_(std::move(sub_allocator)),
      options_(std::move(options)),
      limit_(options_.limit_bytes ? round_down(*options_.limit_bytes) : SIZE_MAX),
      next_region_bytes_(round_up(std::max<size_t>(options_.initial_region_bytes, 1))),
      initial_region_bytes_(next_region_bytes_),
      class_heads_(kNumClasses, kNone),
      class_bitmap_(kBitmapWords, 0) {
  if (!sub_) throw_value_error("PoolAllocator", "a sub-allocator is required");
  options_.max_region_bytes = std::max(round_down(options_.max_region_bytes), kMinChunkBytes);
  stats_.limit_bytes = options_.limit_bytes ? std::optional<int64_t>(limit_) : std::nullopt;
}

PoolAllocator::~PoolAllocator() {
  for (const Region& r : regions_) {
    const Chunk& c = chunks_[r.first];
    if (c.in_use || c.size != r.size) continue;  // live allocations: leak on purpose
    try {
      sub_->free(reinterpret_cast<void*>(r.base), r.size);
    } catch (...) {
      // A destructor must not throw; the device is being torn down anyway.
    }
  }
}

// ---- chunk handles and size-class lists ----

uint32_t PoolAllocator::new_chunk() {
  if (!spare_handles_.empty()) {
    const uint32_t h = spare_handles_.back();
    spare_handles_.pop_back();
    chunks_[h] = Chunk{};
    return h;
  }
  chunks_.emplace_back();
  return static_cast<uint32_t>(chunks_.size() - 1);
}

void PoolAllocator::delete_chunk(uint32_t h) {
  chunks_[h].size = 0;
  spare_handles_.push_back(h);
}

void PoolAllocator::push_free(uint32_t h) {
  Chunk& c = chunks_[h];
  const size_t cls = pool_size_class(c.size);
  c.size_class = static_cast<uint32_t>(cls);
  c.free_prev = kNone;
  c.free_next = class_heads_[cls];
  if (c.free_next != kNone) chunks_[c.free_next].free_prev = h;
  class_heads_[cls] = h;
  class_bitmap_[cls / 64] |= uint64_t{1} << (cls % 64);
  ++free_chunks_;
  free_bytes_ += static_cast<int64_t>(c.size);
}

void PoolAllocator::remove_free(uint32_t h) {
  Chunk& c = chunks_[h];
  const size_t cls = c.size_class;
  if (c.free_prev != kNone) {
    chunks_[c.free_prev].free_next = c.free_next;
  } else {
    class_heads_[cls] = c.free_next;
    if (c.free_next == kNone) class_bitmap_[cls / 64] &= ~(uint64_t{1} << (cls % 64));
  }
  if (c.free_next != kNone) chunks_[c.free_next].free_prev = c.free_prev;
  c.free_prev = c.free_next = kNone;
  --free_chunks_;
  free_bytes_ -= static_cast<int64_t>(c.size);
}

uint32_t PoolAllocator::next_nonempty_class(size_t from) const {
  if (from >= kNumClasses) return kNone;
  size_t word = from / 64;
  uint64_t bits = class_bitmap_[word] & (~uint64_t{0} << (from % 64));
  while (true) {
    if (bits != 0) return static_cast<uint32_t>(word * 64 + __builtin_ctzll(bits));
    if (++word == kBitmapWords) return kNone;
    bits = class_bitmap_[word];
  }
}

uint32_t PoolAllocator::find_best_fit(size_t rounded) const {
  const size_t cls = pool_size_class(rounded);
  uint32_t best = kNone;
  for (uint32_t h = class_heads_[cls]; h != kNone; h = chunks_[h].free_next) {
    const size_t size = chunks_[h].size;
    if (size == rounded) return h;
    if (size > rounded && (best == kNone || size < chunks_[best].size)) best = h;
  }
  if (best != kNone) return best;
  const uint32_t next = next_nonempty_class(cls + 1);
  if (next == kNone) return kNone;
  const size_t floor = pool_size_class_min_bytes(next);
  for (uint32_t h = class_heads_[next]; h != kNone; h = chunks_[h].free_next) {
    if (best == kNone || chunks_[h].size < chunks_[best].size) best = h;
    if (chunks_[best].size == floor) break;
  }
  return best;
}

// ---- allocate / deallocate ----

void* PoolAllocator::take_chunk(uint32_t h, size_t rounded, size_t requested) {
  remove_free(h);
  const size_t remainder = chunks_[h].size - rounded;
  if (remainder >= kMinChunkBytes && remainder * kSplitWasteDivisor >= rounded) {
    const uint32_t t = new_chunk();  // may move chunks_: index afresh below
    Chunk& c = chunks_[h];
    Chunk& tail = chunks_[t];
    tail.addr = c.addr + rounded;
    tail.size = remainder;
    tail.prev = h;
    tail.next = c.next;
    if (c.next != kNone) chunks_[c.next].prev = t;
    c.next = t;
    c.size = rounded;
    push_free(t);
  }
  Chunk& c = chunks_[h];
  c.in_use = true;
  c.requested = requested;
  live_.insert(c.addr, h);
  stats_.allocated_bytes.increase(static_cast<int64_t>(c.size));
  stats_.requested_bytes.increase(static_cast<int64_t>(requested));
  stats_.allocations.increase(1);
  return reinterpret_cast<void*>(c.addr);
}

void* PoolAllocator::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  PendingEvents events(this);
  void* result = nullptr;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (bytes > kMaxAllocationBytes) {
      throw_oom_locked(bytes, bytes, Grow::kOverLimit, "", lock, &events);
    }
    const size_t rounded = round_up(bytes);
    uint32_t h = find_best_fit(rounded);
    if (h == kNone) {
      Grow grown = grow_locked(rounded, &events);
      std::string held;
      if (grown != Grow::kOk) held = regions_held_reason();
      if (grown != Grow::kOk && held.empty() && release_empty_regions_locked(&events) > 0) {
        ++stats_.num_alloc_retries;
        grown = grow_locked(rounded, &events);
      }
      if (grown != Grow::kOk) throw_oom_locked(bytes, rounded, grown, held, lock, &events);
      h = find_best_fit(rounded);
      if (h == kNone) corrupt("a new region did not satisfy the request that made it");
    }
    result = take_chunk(h, rounded, bytes);
    if (events.active) {
      events.add(AllocationEventKind::kAllocate, reinterpret_cast<uintptr_t>(result),
                 chunks_[live_.find(reinterpret_cast<uintptr_t>(result))].size, bytes);
    }
  }
  events.deliver();
  return result;
}

void PoolAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  if (options_.keep_freed_block && options_.keep_freed_block(*this, ptr)) return;  // rule 14
  PendingEvents events(this);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(ptr);
    uint32_t h = live_.erase(addr);
    if (h == PointerMap::kNotFound) {
      throw_error(ErrorCode::kInvalidArgument, "deallocate",
                  "pointer " + hex(addr) + " was not allocated by " + options_.name + " on " +
                      options_.device_name + " (a double free, or memory of another device)");
    }
    const size_t size = chunks_[h].size;
    const size_t requested = chunks_[h].requested;
    stats_.allocated_bytes.decrease(static_cast<int64_t>(size));
    stats_.requested_bytes.decrease(static_cast<int64_t>(requested));
    stats_.allocations.decrease(1);
    chunks_[h].in_use = false;
    chunks_[h].requested = 0;

    const uint32_t next = chunks_[h].next;
    if (next != kNone && !chunks_[next].in_use) {
      remove_free(next);
      chunks_[h].size += chunks_[next].size;
      chunks_[h].next = chunks_[next].next;
      if (chunks_[h].next != kNone) chunks_[chunks_[h].next].prev = h;
      delete_chunk(next);
    }
    const uint32_t prev = chunks_[h].prev;
    if (prev != kNone && !chunks_[prev].in_use) {
      remove_free(prev);
      chunks_[prev].size += chunks_[h].size;
      chunks_[prev].next = chunks_[h].next;
      if (chunks_[prev].next != kNone) chunks_[chunks_[prev].next].prev = prev;
      delete_chunk(h);
      h = prev;
    }
    push_free(h);
    events.add(AllocationEventKind::kDeallocate, addr, size, requested);
  }
  events.deliver();
}

// ---- regions ----

PoolAllocator::Grow PoolAllocator::grow_locked(size_t rounded, PendingEvents* events) {
  const size_t reserved = static_cast<size_t>(stats_.reserved_bytes.current);
  const size_t room = limit_ > reserved ? limit_ - reserved : 0;
  if (rounded > room) return Grow::kOverLimit;
  size_t want = next_region_bytes_;
  while (want < rounded) want = doubled(want);
  want = std::min(want, room);
  // Never ask for more than the device has free (as TensorFlow caps growth): that ask is bound
  // to be refused. Below the request, the request itself is still asked for once, so a refusal
  // is the device's own. Not while regions are held (a CUDA graph being captured on this GPU):
  // the query (cudaMemGetInfo) is not one the capture is known to tolerate.
  if (regions_held_reason().empty()) {
    if (const std::optional<size_t> device_free = sub_->free_memory()) {
      want = std::max(rounded, std::min(want, round_down(*device_free)));
    }
  }
  for (size_t attempt = want;;) {
    if (void* ptr = sub_->alloc(attempt)) {
      add_region_locked(ptr, attempt, events);
      // Doubled after a region of the planned size; after a smaller one (the device had less
      // free, or refused more) the next region starts at the size that was granted. Either way
      // it stays below the smallest ask the device refused since regions were last released:
      // starting there would only be refused again.
      size_t next = attempt == want ? doubled(want) : attempt;
      if (next >= smallest_refused_bytes_) next = attempt;
      next_region_bytes_ = std::min(std::max(next, initial_region_bytes_), options_.max_region_bytes);
      return Grow::kOk;
    }
    smallest_refused_bytes_ = std::min(smallest_refused_bytes_, attempt);
    if (attempt == rounded) return Grow::kRefused;
    attempt = std::max(rounded, round_down(attempt / 2));
  }
}

size_t PoolAllocator::preallocate(size_t bytes) {
  PendingEvents events(this);
  size_t got = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t reserved = static_cast<size_t>(stats_.reserved_bytes.current);
    const size_t room = limit_ > reserved ? limit_ - reserved : 0;
    const size_t want = round_down(std::min(bytes, room));
    for (size_t attempt = want; attempt > 0;) {
      if (void* ptr = sub_->alloc(attempt)) {
        add_region_locked(ptr, attempt, &events);
        next_region_bytes_ = std::min(doubled(attempt), options_.max_region_bytes);
        got = attempt;
        break;
      }
      attempt = round_down(attempt / 2);
      if (attempt < kMinPreallocateBytes) break;
    }
  }
  events.deliver();
  return got;
}

void PoolAllocator::add_region_locked(void* ptr, size_t bytes, PendingEvents* events) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
  if (base % kMinChunkBytes != 0) {
    sub_->free(ptr, bytes);
    throw_error(ErrorCode::kInternal, "PoolAllocator",
                sub_->kind() + " sub-allocator returned a region not aligned to 256 bytes");
  }
  const uint32_t h = new_chunk();
  chunks_[h].addr = base;
  chunks_[h].size = bytes;
  Region region{base, bytes, h};
  auto it = std::lower_bound(regions_.begin(), regions_.end(), base,
                             [](const Region& r, uintptr_t b) { return r.base < b; });
  regions_.insert(it, region);
  push_free(h);
  stats_.reserved_bytes.increase(static_cast<int64_t>(bytes));
  stats_.segments.increase(1);
  ++stats_.num_device_alloc;
  events->add(AllocationEventKind::kReserveRegion, base, bytes, 0);
}

size_t PoolAllocator::release_empty_regions_locked(PendingEvents* events) {
  size_t released = 0;
  for (size_t i = 0; i < regions_.size();) {
    const Region r = regions_[i];
    const Chunk& c = chunks_[r.first];
    if (c.in_use || c.size != r.size) {
      ++i;
      continue;
    }
    sub_->free(reinterpret_cast<void*>(r.base), r.size);
    remove_free(r.first);
    delete_chunk(r.first);
    regions_.erase(regions_.begin() + static_cast<std::ptrdiff_t>(i));
    stats_.reserved_bytes.decrease(static_cast<int64_t>(r.size));
    stats_.segments.decrease(1);
    ++stats_.num_device_free;
    released += r.size;
    events->add(AllocationEventKind::kReleaseRegion, r.base, r.size, 0);
  }
  if (released > 0) smallest_refused_bytes_ = SIZE_MAX;  // the device has more room again
  return released;
}

std::string PoolAllocator::regions_held_reason() const {
  return options_.regions_held ? options_.regions_held() : std::string();
}

size_t PoolAllocator::empty_cache() {
  PendingEvents events(this);
  size_t released = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (regions_held_reason().empty()) released = release_empty_regions_locked(&events);
  }
  events.deliver();
  return released;
}

// ---- stats and reports ----

int64_t PoolAllocator::largest_free_locked() const {
  for (size_t word = kBitmapWords; word-- > 0;) {
    const uint64_t bits = class_bitmap_[word];
    if (bits == 0) continue;
    const size_t cls = word * 64 + 63 - __builtin_clzll(bits);
    size_t largest = 0;
    for (uint32_t h = class_heads_[cls]; h != kNone; h = chunks_[h].free_next) {
      largest = std::max(largest, chunks_[h].size);
    }
    return static_cast<int64_t>(largest);
  }
  return 0;
}

MemoryStats PoolAllocator::stats_locked() const {
  MemoryStats s = stats_;
  s.free_chunks = free_chunks_;
  s.free_bytes = free_bytes_;
  s.largest_free_chunk = largest_free_locked();
  int64_t empty_regions = 0, empty_bytes = 0;
  for (const Region& r : regions_) {
    const Chunk& c = chunks_[r.first];
    if (!c.in_use && c.size == r.size) {
      ++empty_regions;
      empty_bytes += static_cast<int64_t>(r.size);
    }
  }
  s.inactive_split = free_chunks_ - empty_regions;
  s.inactive_split_bytes = free_bytes_ - empty_bytes;
  return s;
}

MemoryStats PoolAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_locked();
}

void PoolAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void PoolAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

size_t PoolAllocator::allocation_size(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t h = live_.find(reinterpret_cast<uintptr_t>(ptr));
  return h == PointerMap::kNotFound ? 0 : chunks_[h].size;
}

void PoolAllocator::throw_oom_locked(size_t requested, size_t rounded, Grow cause,
                                     const std::string& held, std::unique_lock<std::mutex>& lock,
                                     PendingEvents* events) {
  ++stats_.num_ooms;
  const MemoryStats s = stats_locked();
  OomReport r;
  r.device_name = options_.device_name;
  r.pool_name = options_.name;
  r.is_gpu = options_.is_gpu;
  r.memory_growth = options_.memory_growth;
  r.requested = requested;
  r.rounded = rounded;
  r.in_use = s.allocated_bytes.current;
  r.allocations = s.allocations.current;
  r.reserved = s.reserved_bytes.current;
  r.limit = s.limit_bytes;
  r.limit_source = options_.limit_source;
  r.largest_free_chunk = s.largest_free_chunk;
  r.free_bytes = s.free_bytes;
  r.device_free = sub_->free_memory();
  r.cause = cause == Grow::kRefused ? OomCause::kDeviceRefused : OomCause::kLimit;
  std::string message = format_oom_message(r);
  const int64_t empty_bytes = s.free_bytes - s.inactive_split_bytes;
  if (!held.empty() && empty_bytes > 0) {
    message += "\n" + std::to_string(empty_bytes) + " bytes of empty regions were not given back to the "
               "device first, because " + held + ".";
  }
  if (cause == Grow::kRefused) {
    const std::string refusal = sub_->last_refusal();
    if (!refusal.empty()) message += "\nThe pool its regions come from refused with: " + refusal;
  }
  lock.unlock();
  events->deliver();
  throw_error(ErrorCode::kResourceExhausted, "allocate", message);
}

// ---- test support ----

std::vector<PoolAllocator::RegionView> PoolAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<RegionView> out;
  for (const Region& r : regions_) {
    RegionView view{r.base, r.size, {}};
    for (uint32_t h = r.first; h != kNone; h = chunks_[h].next) {
      const Chunk& c = chunks_[h];
      view.chunks.push_back({c.addr, c.size, c.in_use, c.requested});
    }
    out.push_back(std::move(view));
  }
  return out;
}

void PoolAllocator::check_invariants() const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Pass 1: the size-class lists and their bitmap; mark every listed chunk.
  std::vector<uint8_t> listed(chunks_.size(), 0);
  int64_t free_count = 0, free_bytes = 0;
  for (size_t cls = 0; cls < kNumClasses; ++cls) {
    const bool bit = (class_bitmap_[cls / 64] >> (cls % 64)) & 1;
    if (bit != (class_heads_[cls] != kNone)) corrupt("class bitmap disagrees with its lists");
    uint32_t prev = kNone;
    for (uint32_t f = class_heads_[cls]; f != kNone; f = chunks_[f].free_next) {
      const Chunk& c = chunks_[f];
      if (c.in_use) corrupt("a chunk in use sits in a free list");
      if (c.size_class != cls || pool_size_class(c.size) != cls) corrupt("free chunk in the wrong class");
      if (c.free_prev != prev) corrupt("broken free-list link");
      if (listed[f]) corrupt("free chunk listed twice");
      listed[f] = 1;
      ++free_count;
      free_bytes += static_cast<int64_t>(c.size);
      prev = f;
    }
  }
  // Pass 2: regions tile exactly, neighbours link both ways, free chunks never touch.
  int64_t in_use_count = 0, in_use_bytes = 0, requested_bytes = 0, free_seen = 0, reserved = 0;
  uintptr_t previous_end = 0;
  for (const Region& r : regions_) {
    if (r.base < previous_end) corrupt("regions overlap or are out of order");
    previous_end = r.base + r.size;
    reserved += static_cast<int64_t>(r.size);
    uintptr_t expected = r.base;
    uint32_t prev = kNone;
    bool prev_free = false;
    for (uint32_t h = r.first; h != kNone; h = chunks_[h].next) {
      const Chunk& c = chunks_[h];
      if (c.addr != expected) corrupt("chunks do not tile region " + hex(r.base));
      if (c.prev != prev) corrupt("broken prev link at " + hex(c.addr));
      if (c.size == 0 || c.size % kMinChunkBytes != 0) corrupt("bad chunk size at " + hex(c.addr));
      if (c.in_use) {
        ++in_use_count;
        in_use_bytes += static_cast<int64_t>(c.size);
        requested_bytes += static_cast<int64_t>(c.requested);
        if (c.requested == 0 || c.requested > c.size) corrupt("bad requested size at " + hex(c.addr));
        if (live_.find(c.addr) != h) corrupt("live chunk missing from the pointer map");
        prev_free = false;
      } else {
        if (prev_free) corrupt("two adjacent free chunks at " + hex(c.addr));
        if (!listed[h]) corrupt("free chunk missing from its class list at " + hex(c.addr));
        ++free_seen;
        prev_free = true;
      }
      expected += c.size;
      prev = h;
    }
    if (expected != r.base + r.size) corrupt("chunks do not cover region " + hex(r.base));
  }
  if (free_seen != free_count) corrupt("a listed free chunk belongs to no region");
  if (in_use_count != static_cast<int64_t>(live_.size())) corrupt("pointer map size");
  if (in_use_count != stats_.allocations.current) corrupt("allocation count");
  if (in_use_bytes != stats_.allocated_bytes.current) corrupt("allocated bytes");
  if (requested_bytes != stats_.requested_bytes.current) corrupt("requested bytes");
  if (free_count != free_chunks_ || free_bytes != free_bytes_) corrupt("free chunk totals");
  if (reserved != stats_.reserved_bytes.current) corrupt("reserved bytes");
  if (static_cast<int64_t>(regions_.size()) != stats_.segments.current) corrupt("segment count");
  if (in_use_bytes + free_bytes != reserved) corrupt("bytes unaccounted for");
  if (static_cast<size_t>(reserved) > limit_) corrupt("reserved exceeds the limit");
}

}  // namespace gpuaccel
