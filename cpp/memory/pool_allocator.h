// The pooling allocator: one design for every device (host, pinned host, each GPU). Devices
// cannot afford a cudaMalloc per tensor (microseconds to milliseconds, and it synchronizes), so
// the pool takes big regions from a SubAllocator and carves them up itself.
//
// The rules (constants below):
//  1. Sizes. A request of n > 0 bytes is rounded up to a multiple of kMinChunkBytes (256 B),
//     which is also every chunk's alignment. 0 bytes gives nullptr.
//  2. Regions. Memory comes from the sub-allocator in regions, kept sorted by address. A region
//     is a list of chunks in address order that tile it exactly; each chunk is free or in use.
//     Chunks never span or merge across regions, even when two regions happen to be adjacent.
//  3. Size classes. Free chunks sit in one list per size class. Below 16 * 256 B every multiple
//     of 256 B is its own class; above, each power of two is cut into kSubClasses (16) equal
//     classes, so the sizes in a class differ by less than 1/16. A bitmap marks nonempty classes.
//  4. Best fit. An allocation takes the smallest free chunk that fits: an exact size match in
//     the request's class first (the most recently freed one, whose memory is warm), else the
//     smallest fitting chunk of that class, else the smallest chunk of the next nonempty class.
//  5. Split. If the chosen chunk is larger than needed, the tail becomes a new free chunk when it
//     is worth keeping: at least kMinChunkBytes and at least 1/kSplitWasteDivisor (1/16) of the
//     rounded request. Otherwise the caller gets the whole chunk (waste < 1/16 of the request).
//  6. Coalesce. A freed chunk merges at once with a free neighbour on either side, so no two
//     free chunks are ever adjacent and a region with nothing in use is one free chunk.
//  7. Growth. When nothing fits, the pool asks for a new region of next_region_bytes (first
//     options.initial_region_bytes, 2 MiB by default), doubled until it holds the request and
//     capped by the room left under the limit and (as TensorFlow caps growth) by the device's
//     free memory, when the sub-allocator knows it and no region is held (rule 13); never
//     below the request. If the device refuses, the ask is halved (never below the request)
//     and retried. After a region of the size asked first, next_region_bytes doubles (up to
//     options.max_region_bytes); after a smaller one it becomes the size granted (at least
//     initial_region_bytes), and it never reaches the smallest ask refused since regions were
//     last released, so later growth does not start with asks bound to be refused.
//  8. Preallocation (TF's GPU default). preallocate(n) takes one region of n bytes up front
//     (halving on refusal down to kMinPreallocateBytes); with limit = n, the pool then never grows.
//  9. Limit. options.limit_bytes (a logical device's memory_limit, or the preallocated size)
//     caps reserved bytes, so it also caps bytes in use.
// 10. Running out. Before failing, the pool gives back every region with nothing in use and
//     tries to grow once more (num_alloc_retries). If that fails too it raises
//     ResourceExhaustedError with the full report (oom_message.h); nothing is changed by a
//     failed allocation, so the pool stays usable.
// 11. Regions are returned to the device only by empty_cache(), the retry of rule 10, or the
//     destructor; memory in use is never returned.
// 12. One mutex guards the pool; the profiler observer is called after it is released.
// 13. Held regions. While options.regions_held() names a reason, no region goes back to the
//     sub-allocator: empty_cache() releases nothing and rule 10's retry is skipped, so the
//     request fails with the usual report plus that reason. A GPU pool holds them while a
//     training step is captured into a CUDA graph on its GPU (a cudaFree then would invalidate
//     the capture, which falls back to eager naming the out-of-memory error); a graph's arena
//     holds them for good (the graph's kernels keep their addresses). The destructor still
//     returns every empty region.
// 14. Kept frees. When options.keep_freed_block takes a block over, deallocate() does nothing
//     else: the block stays in use (and in the stats) until its new owner deallocates it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "memory/allocator.h"
#include "memory/pointer_map.h"
#include "memory/sub_allocator.h"

namespace gpuaccel {

constexpr size_t kMinChunkBytes = 256;
constexpr int kSubClassBits = 4;
constexpr size_t kSubClasses = size_t{1} << kSubClassBits;  // 16
constexpr size_t kSplitWasteDivisor = 16;
constexpr size_t kDefaultInitialRegionBytes = size_t{2} << 20;  // 2 MiB, TF's growth start
constexpr size_t kMinPreallocateBytes = size_t{1} << 20;        // 1 MiB
// Larger requests fail at once (they would overflow the rounding arithmetic).
constexpr size_t kMaxAllocationBytes = size_t{1} << 50;

// Size-class index of a chunk of `bytes` (a multiple of kMinChunkBytes), and the smallest size
// of a class. Exposed for tests.
size_t pool_size_class(size_t bytes);
size_t pool_size_class_min_bytes(size_t size_class);

class PoolAllocator;

struct PoolOptions {
  std::string name = "pool";           // "GPU_0_pool"
  std::string device_name = "device";  // "/job:localhost/replica:0/task:0/device:GPU:0"
  bool is_gpu = false;                 // for the advice in the OOM message
  bool memory_growth = true;           // GPU pools: false when preallocated (for the advice)
  std::optional<size_t> limit_bytes;   // hard cap of reserved bytes (rounded down to 256 B)
  std::string limit_source;            // why there is a limit, for the OOM message
  size_t initial_region_bytes = kDefaultInitialRegionBytes;
  size_t max_region_bytes = SIZE_MAX;  // growth stops doubling here (a request may exceed it)
  // Rule 13: why empty regions must stay reserved right now ("" or unset: they need not).
  // Called under the pool's lock, so it must not call back into the pool.
  std::function<std::string()> regions_held;
  // Rule 14: asked first by every deallocate(), outside the lock, so it must be cheap when it
  // declines; returning true means it has taken the block over (after checking that it is a
  // live block of `pool`) and will deallocate() it later (a CUDA graph being captured on this
  // thread keeps a block freed during the capture: capture_arena.h).
  std::function<bool(PoolAllocator& pool, void* ptr)> keep_freed_block;
};

class PoolAllocator final : public Allocator {
 public:
  PoolAllocator(std::shared_ptr<SubAllocator> sub_allocator, PoolOptions options);
  // Returns every region with nothing in use; regions that still hold live allocations are
  // deliberately leaked so stray pointers keep pointing at valid memory.
  ~PoolAllocator() override;
  PoolAllocator(const PoolAllocator&) = delete;
  PoolAllocator& operator=(const PoolAllocator&) = delete;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr) override;
  MemoryStats stats() const override;
  void reset_peak_stats() override;
  void reset_accumulated_stats() override;
  size_t empty_cache() override;
  const std::string& name() const override { return options_.name; }
  const std::string& device_name() const override { return options_.device_name; }
  bool caching() const override { return true; }

  // Rule 8. Returns the bytes reserved (0 if the device would not give kMinPreallocateBytes).
  size_t preallocate(size_t bytes);
  // The chunk size behind a live allocation (>= the request), or 0 if `ptr` is not one.
  size_t allocation_size(const void* ptr) const;
  const PoolOptions& options() const { return options_; }
  const std::shared_ptr<SubAllocator>& sub_allocator() const { return sub_; }

  // --- test support ---
  struct ChunkView {
    uintptr_t addr;
    size_t size;
    bool in_use;
    size_t requested;
  };
  struct RegionView {
    uintptr_t base;
    size_t size;
    std::vector<ChunkView> chunks;  // address order
  };
  std::vector<RegionView> snapshot() const;
  // Walks every structure and throws InternalError on the first broken invariant.
  void check_invariants() const;

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  struct Chunk {
    uintptr_t addr = 0;
    size_t size = 0;
    size_t requested = 0;
    uint32_t prev = kNone;  // address neighbours within the region
    uint32_t next = kNone;
    uint32_t free_prev = kNone;  // size-class list links (free chunks only)
    uint32_t free_next = kNone;
    uint32_t size_class = 0;
    bool in_use = false;
  };
  struct Region {
    uintptr_t base = 0;
    size_t size = 0;
    uint32_t first = kNone;  // its first chunk; never merged away, so stable
  };
  enum class Grow { kOk, kOverLimit, kRefused };
  struct PendingEvents;

  uint32_t new_chunk();
  void delete_chunk(uint32_t h);
  void push_free(uint32_t h);
  void remove_free(uint32_t h);
  uint32_t find_best_fit(size_t rounded) const;
  uint32_t next_nonempty_class(size_t from) const;
  void* take_chunk(uint32_t h, size_t rounded, size_t requested);
  Grow grow_locked(size_t rounded, PendingEvents* events);
  void add_region_locked(void* ptr, size_t bytes, PendingEvents* events);
  size_t release_empty_regions_locked(PendingEvents* events);
  int64_t largest_free_locked() const;
  MemoryStats stats_locked() const;
  std::string regions_held_reason() const;
  [[noreturn]] void throw_oom_locked(size_t requested, size_t rounded, Grow cause,
                                     const std::string& held, std::unique_lock<std::mutex>& lock,
                                     PendingEvents* events);

  std::shared_ptr<SubAllocator> sub_;
  PoolOptions options_;
  size_t limit_;  // options_.limit_bytes rounded down, or SIZE_MAX
  size_t next_region_bytes_;
  size_t initial_region_bytes_;  // next_region_bytes_ never shrinks below it
  size_t smallest_refused_bytes_ = SIZE_MAX;  // since regions were last released (rule 7)

  mutable std::mutex mutex_;
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> spare_handles_;
  std::vector<Region> regions_;  // sorted by base
  std::vector<uint32_t> class_heads_;
  std::vector<uint64_t> class_bitmap_;
  PointerMap live_;
  int64_t free_chunks_ = 0;
  int64_t free_bytes_ = 0;
  MemoryStats stats_;
};

}  // namespace gpuaccel
