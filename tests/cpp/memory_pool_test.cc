// The pooling allocator's rules, one at a time, driven by a fake sub-allocator that hands out
// address ranges (so growth, back-off, preallocation, limits and out-of-memory all run on the
// CPU). The random property test against a reference model is in memory_property_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "memory/allocation_observer.h"
#include "memory/direct_allocator.h"
#include "memory/fake_sub_allocator.h"
#include "memory/host_sub_allocator.h"
#include "memory/pointer_map.h"
#include "memory/pool_allocator.h"

namespace gpuaccel {
namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

struct Fixture {
  explicit Fixture(size_t capacity = size_t{1} << 40, PoolOptions options = {},
                   size_t gap = 4096)
      : fake(std::make_shared<FakeSubAllocator>(capacity, uintptr_t{1} << 44, gap)),
        pool(fake, std::move(options)) {}
  std::shared_ptr<FakeSubAllocator> fake;
  PoolAllocator pool;
};

PoolOptions limited(size_t limit, bool gpu = false, bool growth = true) {
  PoolOptions o;
  o.name = gpu ? "GPU_0_pool" : "CPU_0_pool";
  o.device_name = gpu ? "/job:localhost/replica:0/task:0/device:GPU:0"
                      : "/job:localhost/replica:0/task:0/device:CPU:0";
  o.is_gpu = gpu;
  o.memory_growth = growth;
  o.limit_bytes = limit;
  o.limit_source = "memory_limit of the logical device";
  return o;
}

// Runs `f`, expects gpuaccel::Error with `code`, returns its what().
std::string error_text(ErrorCode code, const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(MemoryPool, SizeClassesAreOrderedAndNarrow) {
  size_t previous = 0;
  for (size_t q = 1; q < 200000; q += (q < 4096 ? 1 : q / 64)) {
    const size_t bytes = q * kMinChunkBytes;
    const size_t cls = pool_size_class(bytes);
    ASSERT_GE(cls, previous) << bytes;
    previous = cls;
    ASSERT_LE(pool_size_class_min_bytes(cls), bytes);
    ASSERT_GT(pool_size_class_min_bytes(cls + 1), bytes);
    // Within a class sizes differ by less than 1/16 of its smallest size.
    const size_t width = pool_size_class_min_bytes(cls + 1) - pool_size_class_min_bytes(cls);
    ASSERT_LE(width * kSubClasses, std::max(pool_size_class_min_bytes(cls), kMinChunkBytes * 16));
  }
  EXPECT_EQ(pool_size_class(256), 1u);
  EXPECT_EQ(pool_size_class(15 * 256), 15u);
  EXPECT_EQ(pool_size_class(16 * 256), 16u);
  EXPECT_EQ(pool_size_class(size_t{1} << 50), pool_size_class((size_t{1} << 50) + 256));
}

TEST(MemoryPool, RoundsTo256BytesAndAligns) {
  Fixture f;
  EXPECT_EQ(f.pool.allocate(0), nullptr);
  f.pool.deallocate(nullptr);
  std::vector<void*> ptrs;
  for (size_t n : {size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{1000}}) {
    void* p = f.pool.allocate(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(addr(p) % kAllocatorAlignment, 0u);
    ptrs.push_back(p);
  }
  EXPECT_EQ(f.pool.allocation_size(ptrs[0]), 256u);
  EXPECT_EQ(f.pool.allocation_size(ptrs[1]), 256u);
  EXPECT_EQ(f.pool.allocation_size(ptrs[2]), 256u);
  EXPECT_EQ(f.pool.allocation_size(ptrs[3]), 512u);
  EXPECT_EQ(f.pool.allocation_size(ptrs[4]), 1024u);
  const MemoryStats s = f.pool.stats();
  EXPECT_EQ(s.allocated_bytes.current, 256 * 3 + 512 + 1024);
  EXPECT_EQ(s.requested_bytes.current, 1 + 255 + 256 + 257 + 1000);
  EXPECT_EQ(s.allocations.current, 5);
  for (void* p : ptrs) f.pool.deallocate(p);
  f.pool.check_invariants();
}

TEST(MemoryPool, SplitsThenCoalescesBothWays) {
  Fixture f;
  void* a = f.pool.allocate(1 * KiB);
  void* b = f.pool.allocate(1 * KiB);
  void* c = f.pool.allocate(1 * KiB);
  // Carved from the front of one region, in address order.
  EXPECT_EQ(addr(b), addr(a) + KiB);
  EXPECT_EQ(addr(c), addr(b) + KiB);
  f.pool.deallocate(b);  // hole between two live chunks
  auto snap = f.pool.snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].chunks.size(), 4u);
  EXPECT_FALSE(snap[0].chunks[1].in_use);
  EXPECT_EQ(f.pool.stats().free_chunks, 2);
  f.pool.deallocate(a);  // merges with the hole on its right
  snap = f.pool.snapshot();
  ASSERT_EQ(snap[0].chunks.size(), 3u);
  EXPECT_EQ(snap[0].chunks[0].size, 2 * KiB);
  EXPECT_FALSE(snap[0].chunks[0].in_use);
  f.pool.deallocate(c);  // merges left and right: the region is one free chunk again
  snap = f.pool.snapshot();
  ASSERT_EQ(snap[0].chunks.size(), 1u);
  EXPECT_EQ(snap[0].chunks[0].size, snap[0].size);
  EXPECT_EQ(f.pool.stats().inactive_split, 0);
  f.pool.check_invariants();
}

TEST(MemoryPool, BestFitTakesTheSmallestHoleThatFits) {
  Fixture f;
  // Holes of 4 KiB, 2 KiB and 8 KiB separated by live 256-byte guards.
  std::vector<void*> guards;
  void* h4 = f.pool.allocate(4 * KiB);
  guards.push_back(f.pool.allocate(256));
  void* h2 = f.pool.allocate(2 * KiB);
  guards.push_back(f.pool.allocate(256));
  void* h8 = f.pool.allocate(8 * KiB);
  guards.push_back(f.pool.allocate(256));
  f.pool.deallocate(h4);
  f.pool.deallocate(h2);
  f.pool.deallocate(h8);
  EXPECT_EQ(f.pool.allocate(2 * KiB), h2);      // exact fit
  void* p3 = f.pool.allocate(3 * KiB);           // smallest hole that fits is the 4 KiB one
  EXPECT_EQ(p3, h4);
  EXPECT_EQ(f.pool.allocation_size(p3), 3 * KiB);  // split: the 1 KiB tail is worth keeping
  EXPECT_EQ(f.pool.allocate(5 * KiB), h8);
  f.pool.check_invariants();
}

TEST(MemoryPool, KeepsSmallTailsInsteadOfSplitting) {
  Fixture f;
  void* hole = f.pool.allocate(16 * KiB);
  void* guard = f.pool.allocate(256);
  f.pool.deallocate(hole);
  // 15.5 KiB from the 16 KiB hole leaves 512 B: less than 1/16 of the request, so no split.
  void* p = f.pool.allocate(15 * KiB + 512);
  EXPECT_EQ(p, hole);
  EXPECT_EQ(f.pool.allocation_size(p), 16 * KiB);
  const MemoryStats s = f.pool.stats();
  EXPECT_EQ(s.allocated_bytes.current, static_cast<int64_t>(16 * KiB + 256));
  EXPECT_EQ(s.requested_bytes.current, static_cast<int64_t>(15 * KiB + 512 + 256));
  f.pool.deallocate(p);
  f.pool.deallocate(guard);
  f.pool.check_invariants();
}

TEST(MemoryPool, GrowthStartsAt2MiBAndDoubles) {
  Fixture f;
  EXPECT_EQ(f.pool.stats().reserved_bytes.current, 0);  // nothing until the first allocation
  std::vector<void*> live;
  for (int i = 0; i < 12; ++i) live.push_back(f.pool.allocate(MiB + 512 * KiB));
  const std::vector<size_t> expected = {2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB};
  EXPECT_EQ(f.fake->requests(), expected);
  EXPECT_EQ(f.pool.stats().segments.current, 4);
  EXPECT_EQ(f.pool.stats().reserved_bytes.current, static_cast<int64_t>(30 * MiB));
  // A request larger than the next region doubles the ask until it fits: next is 32 MiB,
  // 40 MiB needs 64 MiB.
  live.push_back(f.pool.allocate(40 * MiB));
  EXPECT_EQ(f.fake->requests().back(), 64 * MiB);
  for (void* p : live) f.pool.deallocate(p);
  f.pool.check_invariants();
  EXPECT_EQ(f.pool.stats().segments.current, 5);  // memory is kept (cached) after frees
}

// Asks the device turned down: every size asked for that did not become a region.
int64_t refused_asks(const Fixture& f) {
  return f.fake->alloc_calls() - static_cast<int64_t>(f.pool.stats().num_device_alloc);
}

TEST(MemoryPool, GrowthBacksOffWhenTheDeviceRefuses) {
  Fixture f;
  f.fake->set_refusal([](size_t bytes) { return bytes > 4 * MiB; });  // no block over 4 MiB
  std::vector<void*> live;
  for (int i = 0; i < 10; ++i) live.push_back(f.pool.allocate(MiB));
  // 2 MiB, 4 MiB, then 8 MiB refused and halved to 4 MiB.
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{2 * MiB, 4 * MiB, 8 * MiB, 4 * MiB}));
  EXPECT_EQ(f.pool.stats().reserved_bytes.current, static_cast<int64_t>(10 * MiB));
  // The next region starts at the 4 MiB that was granted, not at 16 MiB (twice the refused
  // ask): growing on costs no refused ask at all.
  for (int i = 0; i < 8; ++i) live.push_back(f.pool.allocate(MiB));
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{2 * MiB, 4 * MiB, 8 * MiB, 4 * MiB, 4 * MiB, 4 * MiB}));
  EXPECT_EQ(refused_asks(f), 1);
  for (void* p : live) f.pool.deallocate(p);
  f.pool.check_invariants();
}

TEST(MemoryPool, GrowthAfterABackOffCountsFewRefusals) {
  // A device that gives no block over 3 MiB: the first growth past it halves once; every later
  // one asks for what was granted. (Before, each growth started at twice the refused size and
  // halved twice.)
  Fixture f;
  f.fake->set_refusal([](size_t bytes) { return bytes > 3 * MiB; });
  std::vector<void*> live;
  for (int i = 0; i < 40; ++i) live.push_back(f.pool.allocate(MiB));
  EXPECT_EQ(f.pool.stats().num_device_alloc, 20);  // 2 MiB each: halving 4 MiB stops at 2
  EXPECT_EQ(refused_asks(f), 1);
  for (void* p : live) f.pool.deallocate(p);
}

TEST(MemoryPool, GrowthIsCappedAtTheDevicesFreeMemory) {
  Fixture f(10 * MiB);  // the device has 10 MiB and says how much is free
  std::vector<void*> live;
  for (int i = 0; i < 10; ++i) live.push_back(f.pool.allocate(MiB));
  // 2 MiB, 4 MiB, then not 8 MiB (only 4 are free) but the 4 MiB that are: nothing refused.
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{2 * MiB, 4 * MiB, 4 * MiB}));
  EXPECT_EQ(refused_asks(f), 0);
  EXPECT_EQ(f.pool.stats().reserved_bytes.current, static_cast<int64_t>(10 * MiB));
  // Full: one ask of the request itself (the device's own refusal), then the report.
  const std::string text = error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(MiB); });
  EXPECT_NE(text.find("refused"), std::string::npos) << text;
  EXPECT_EQ(f.fake->requests().back(), MiB);
  EXPECT_EQ(refused_asks(f), 1);
  for (void* p : live) f.pool.deallocate(p);
  f.pool.check_invariants();
}

TEST(MemoryPool, NoFreeMemoryQueryWhileRegionsAreHeld) {
  // While a CUDA graph is captured on the GPU (rule 13) the pool does not ask the device how
  // much is free: growth then backs off on refusal, as without the cap.
  PoolOptions o;
  o.regions_held = [] { return std::string("a CUDA graph is being captured"); };
  Fixture f(10 * MiB, o);
  std::vector<void*> live;
  for (int i = 0; i < 10; ++i) live.push_back(f.pool.allocate(MiB));
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{2 * MiB, 4 * MiB, 8 * MiB, 4 * MiB}));
  for (void* p : live) f.pool.deallocate(p);
}

TEST(MemoryPool, PreallocatedPoolNeverCallsTheDeviceAgain) {
  PoolOptions o = limited(90 * MiB, /*gpu=*/true, /*growth=*/false);
  Fixture f(100 * MiB, o);
  EXPECT_EQ(f.pool.preallocate(90 * MiB), 90 * MiB);
  EXPECT_EQ(f.fake->alloc_calls(), 1);
  EXPECT_EQ(f.pool.stats().reserved_bytes.current, static_cast<int64_t>(90 * MiB));
  std::vector<void*> live;
  for (int i = 0; i < 9; ++i) live.push_back(f.pool.allocate(10 * MiB));
  EXPECT_EQ(f.fake->alloc_calls(), 1);
  const std::string text =
      error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(10 * MiB); });
  EXPECT_EQ(f.fake->alloc_calls(), 1);  // over the limit: the device is not even asked
  EXPECT_NE(text.find("set_memory_growth(gpu, True)"), std::string::npos) << text;
  for (void* p : live) f.pool.deallocate(p);
  EXPECT_EQ(f.pool.stats().free_chunks, 1);
}

TEST(MemoryPool, PreallocationBacksOffToWhatTheDeviceHas) {
  Fixture f(50 * MiB, limited(80 * MiB, true, false));
  EXPECT_EQ(f.pool.preallocate(80 * MiB), 40 * MiB);
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{80 * MiB, 40 * MiB}));
  // Below the limit, the pool may still grow into what is left.
  void* p = f.pool.allocate(45 * MiB);
  EXPECT_NE(p, nullptr);
  f.pool.deallocate(p);
  Fixture tiny(512 * KiB, limited(80 * MiB, true, false));
  EXPECT_EQ(tiny.pool.preallocate(80 * MiB), 0u);  // never below kMinPreallocateBytes
  EXPECT_EQ(tiny.pool.stats().reserved_bytes.current, 0);
}

TEST(MemoryPool, LimitIsAHardCapOnReservedMemory) {
  Fixture f(size_t{1} << 40, limited(10 * MiB));
  std::vector<void*> live;
  for (int i = 0; i < 9; ++i) {
    live.push_back(f.pool.allocate(MiB));
    EXPECT_LE(f.pool.stats().reserved_bytes.current, static_cast<int64_t>(10 * MiB));
  }
  // Regions 2 + 4 + 4 (8 capped by the room left) = 10 MiB.
  EXPECT_EQ(f.fake->requests(), (std::vector<size_t>{2 * MiB, 4 * MiB, 4 * MiB}));
  live.push_back(f.pool.allocate(MiB));  // the last MiB fits
  error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(256); });
  EXPECT_EQ(f.pool.stats().num_ooms, 1);
  EXPECT_EQ(f.pool.stats().limit_bytes, static_cast<int64_t>(10 * MiB));
  for (void* p : live) f.pool.deallocate(p);
}

TEST(MemoryPool, OutOfMemoryMessageCarriesTheNumbersAndAdvice) {
  PoolOptions o = limited(64 * MiB);
  o.initial_region_bytes = 64 * MiB;  // one region, so the numbers below are easy to state
  Fixture f(size_t{1} << 40, o);
  std::vector<void*> live;
  for (int i = 0; i < 6; ++i) live.push_back(f.pool.allocate(10 * MiB));  // 60 MiB in use
  const std::string text =
      error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(20 * MiB + 100); });
  for (const std::string needle :
       {std::string("[allocate] OOM when allocating 20971620 bytes (20.00 MiB)"),
        std::string("/job:localhost/replica:0/task:0/device:CPU:0"),
        std::string("by allocator CPU_0_pool"), std::string("rounded to 20971776"),
        std::string("in use: 62914560 bytes (60.00 MiB) in 6 allocations"),
        std::string("limit: 67108864 bytes (64.00 MiB) (memory_limit of the logical device)"),
        std::string("reserved: "), std::string("largest free chunk: "),
        std::string("reserved: 67108864 bytes (64.00 MiB)"),
        std::string("largest free chunk: 4194304 bytes (4.00 MiB); fragmentation: 0.0%"),
        std::string("cause: the pool's limit would be exceeded"), std::string("smaller batch"),
        std::string("mixed precision"), std::string("empty_cache"),
        std::string("larger memory_limit")}) {
    EXPECT_NE(text.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << text;
  }
  const MemoryStats s = f.pool.stats();
  const std::string reserved = "reserved: " + std::to_string(s.reserved_bytes.current) + " bytes";
  EXPECT_NE(text.find(reserved), std::string::npos) << text;
  const std::string largest = "largest free chunk: " + std::to_string(s.largest_free_chunk);
  EXPECT_NE(text.find(largest), std::string::npos) << text;
  for (void* p : live) f.pool.deallocate(p);
}

TEST(MemoryPool, StaysUsableAfterOutOfMemory) {
  Fixture f(size_t{1} << 40, limited(8 * MiB));
  void* a = f.pool.allocate(3 * MiB);
  void* b = f.pool.allocate(3 * MiB);
  const MemoryStats before = f.pool.stats();
  error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(5 * MiB); });
  error_text(ErrorCode::kResourceExhausted, [&] { f.pool.allocate(size_t{1} << 62); });
  f.pool.check_invariants();
  const MemoryStats after = f.pool.stats();
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.reserved_bytes.current, before.reserved_bytes.current);
  EXPECT_EQ(after.allocations.current, before.allocations.current);
  EXPECT_EQ(after.num_ooms, before.num_ooms + 2);
  void* c = f.pool.allocate(MiB);  // smaller requests still work
  f.pool.deallocate(a);
  void* d = f.pool.allocate(3 * MiB);  // and freed memory is reused
  EXPECT_EQ(d, a);
  for (void* p : {b, c, d}) f.pool.deallocate(p);
  f.pool.check_invariants();
  for (const auto& region : f.pool.snapshot()) EXPECT_EQ(region.chunks.size(), 1u);
}

TEST(MemoryPool, ReleasesEmptyRegionsAndRetriesBeforeFailing) {
  Fixture f(size_t{1} << 40, limited(8 * MiB));
  void* a = f.pool.allocate(MiB + 512 * KiB);  // region 1: 2 MiB
  void* b = f.pool.allocate(3 * MiB);          // region 2: 4 MiB (6 MiB reserved)
  f.pool.deallocate(a);                        // region 1 is empty but cached
  // 3 MiB fits nowhere and only 2 MiB of room is left: release region 1, then grow 4 MiB.
  void* c = f.pool.allocate(3 * MiB);
  const MemoryStats s = f.pool.stats();
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_device_free, 1);
  EXPECT_EQ(s.segments.current, 2);
  EXPECT_EQ(s.reserved_bytes.current, static_cast<int64_t>(8 * MiB));
  EXPECT_EQ(f.fake->live_blocks(), 2u);
  f.pool.deallocate(b);
  f.pool.deallocate(c);
  f.pool.check_invariants();
}

TEST(MemoryPool, EmptyCacheReturnsOnlyUnusedRegions) {
  Fixture f;
  void* a = f.pool.allocate(MiB);       // region 2 MiB
  void* b = f.pool.allocate(3 * MiB);   // region 4 MiB
  void* c = f.pool.allocate(5 * MiB);   // region 8 MiB
  f.pool.deallocate(b);
  f.pool.deallocate(c);
  EXPECT_EQ(f.pool.empty_cache(), 12 * MiB);
  EXPECT_EQ(f.fake->live_blocks(), 1u);
  const MemoryStats s = f.pool.stats();
  EXPECT_EQ(s.reserved_bytes.current, static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(s.reserved_bytes.peak, static_cast<int64_t>(14 * MiB));
  EXPECT_EQ(s.inactive_split_bytes, static_cast<int64_t>(MiB));  // tail of the live region
  EXPECT_EQ(f.pool.empty_cache(), 0u);
  f.pool.deallocate(a);
  EXPECT_EQ(f.pool.empty_cache(), 2 * MiB);
  EXPECT_EQ(f.fake->live_blocks(), 0u);
}

TEST(MemoryPool, NeverMergesAcrossAdjacentRegions) {
  Fixture f(size_t{1} << 40, {}, /*gap=*/0);  // regions come back to back
  void* a = f.pool.allocate(2 * MiB);  // fills region 1 exactly
  void* b = f.pool.allocate(4 * MiB);  // fills region 2 exactly, right after region 1
  EXPECT_EQ(addr(b), addr(a) + 2 * MiB);
  f.pool.deallocate(a);
  f.pool.deallocate(b);
  const auto snap = f.pool.snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].chunks.size(), 1u);
  EXPECT_EQ(snap[1].chunks.size(), 1u);
  EXPECT_EQ(f.pool.stats().largest_free_chunk, static_cast<int64_t>(4 * MiB));
  void* c = f.pool.allocate(6 * MiB);  // must not straddle the two regions
  EXPECT_EQ(f.pool.stats().segments.current, 3);
  f.pool.deallocate(c);
  EXPECT_EQ(f.pool.empty_cache(), 14 * MiB);  // and each region goes back whole
  EXPECT_EQ(f.fake->live_blocks(), 0u);
}

TEST(MemoryPool, RejectsForeignPointersAndDoubleFrees) {
  Fixture f;
  void* p = f.pool.allocate(1000);
  int local = 0;
  std::string text = error_text(ErrorCode::kInvalidArgument, [&] { f.pool.deallocate(&local); });
  EXPECT_NE(text.find("was not allocated by pool"), std::string::npos) << text;
  f.pool.deallocate(p);
  error_text(ErrorCode::kInvalidArgument, [&] { f.pool.deallocate(p); });
  f.pool.check_invariants();
}

TEST(MemoryPool, PeaksAndCountersResetOnRequest) {
  Fixture f;
  void* a = f.pool.allocate(10 * KiB);
  void* b = f.pool.allocate(20 * KiB);
  f.pool.deallocate(b);
  MemoryStats s = f.pool.stats();
  EXPECT_EQ(s.allocated_bytes.peak, static_cast<int64_t>(30 * KiB));
  EXPECT_EQ(s.allocated_bytes.current, static_cast<int64_t>(10 * KiB));
  EXPECT_EQ(s.allocated_bytes.allocated, static_cast<int64_t>(30 * KiB));
  EXPECT_EQ(s.allocated_bytes.freed, static_cast<int64_t>(20 * KiB));
  EXPECT_EQ(s.allocations.peak, 2);
  f.pool.reset_peak_stats();
  s = f.pool.stats();
  EXPECT_EQ(s.allocated_bytes.peak, static_cast<int64_t>(10 * KiB));
  EXPECT_EQ(s.allocations.peak, 1);
  EXPECT_EQ(s.allocated_bytes.allocated, static_cast<int64_t>(30 * KiB));
  f.pool.reset_accumulated_stats();
  s = f.pool.stats();
  EXPECT_EQ(s.allocated_bytes.allocated, 0);
  EXPECT_EQ(s.allocated_bytes.freed, 0);
  EXPECT_EQ(s.allocated_bytes.current, static_cast<int64_t>(10 * KiB));
  f.pool.deallocate(a);
}

TEST(MemoryPool, ObserverHearsEveryEvent) {
  std::vector<std::pair<AllocationEventKind, size_t>> events;
  std::string pool_name;
  set_allocation_observer([&](const AllocationEvent& e) {
    events.emplace_back(e.kind, e.bytes);
    pool_name = *e.pool;
  });
  {
    Fixture f;
    void* p = f.pool.allocate(1000);
    f.pool.deallocate(p);
    f.pool.empty_cache();
  }
  set_allocation_observer(nullptr);
  EXPECT_FALSE(allocation_observer_installed());
  const std::vector<std::pair<AllocationEventKind, size_t>> expected = {
      {AllocationEventKind::kReserveRegion, 2 * MiB},
      {AllocationEventKind::kAllocate, 1024},
      {AllocationEventKind::kDeallocate, 1024},
      {AllocationEventKind::kReleaseRegion, 2 * MiB}};
  EXPECT_EQ(events, expected);
  EXPECT_EQ(pool_name, "pool");
}

TEST(MemoryPool, DestructorReturnsRegionsThatHoldNothing) {
  auto fake = std::make_shared<FakeSubAllocator>(size_t{1} << 40);
  {
    PoolAllocator pool(fake, {});
    void* a = pool.allocate(MiB);
    void* b = pool.allocate(3 * MiB);  // second region
    pool.deallocate(b);
    (void)a;  // leaked on purpose: its region must stay allocated
  }
  EXPECT_EQ(fake->live_blocks(), 1u);
  EXPECT_EQ(fake->free_calls(), 1);
}

TEST(MemoryDirect, PassesExactSizesAndKeepsStats) {
  auto fake = std::make_shared<FakeSubAllocator>(size_t{1} << 40);
  DirectAllocator direct(fake, limited(MiB));
  EXPECT_FALSE(direct.caching());
  EXPECT_EQ(direct.allocate(0), nullptr);
  void* a = direct.allocate(1000);
  void* b = direct.allocate(3000);
  EXPECT_EQ(fake->requests(), (std::vector<size_t>{1000, 3000}));
  MemoryStats s = direct.stats();
  EXPECT_EQ(s.allocated_bytes.current, 4000);
  EXPECT_EQ(s.reserved_bytes.current, 4000);
  EXPECT_EQ(s.allocations.current, 2);
  const std::string text = error_text(ErrorCode::kResourceExhausted, [&] { direct.allocate(MiB); });
  EXPECT_NE(text.find("GPUACCEL_NO_CACHING"), std::string::npos) << text;
  direct.deallocate(a);
  EXPECT_EQ(fake->live_blocks(), 1u);  // returned at once
  error_text(ErrorCode::kInvalidArgument, [&] { direct.deallocate(a); });
  direct.deallocate(b);
  s = direct.stats();
  EXPECT_EQ(s.allocated_bytes.current, 0);
  EXPECT_EQ(s.allocated_bytes.peak, 4000);
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(direct.empty_cache(), 0u);
}

TEST(MemoryHost, BlocksAreAlignedAndWritable) {
  HostSubAllocator host;
  for (size_t n : {size_t{1}, size_t{100}, size_t{4096}, 3 * MiB}) {
    void* p = host.alloc(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(addr(p) % 256, 0u);
    std::memset(p, 0xab, n);
    host.free(p, n);
  }
  // A pool over real host memory: allocations can be written end to end.
  PoolAllocator pool(std::make_shared<HostSubAllocator>(), {});
  std::vector<std::pair<unsigned char*, size_t>> live;
  for (size_t i = 1; i <= 64; ++i) {
    const size_t n = i * 3001;
    auto* p = static_cast<unsigned char*>(pool.allocate(n));
    std::memset(p, static_cast<int>(i), n);
    live.emplace_back(p, n);
  }
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(live[i].first[0], static_cast<unsigned char>(i + 1));
    EXPECT_EQ(live[i].first[live[i].second - 1], static_cast<unsigned char>(i + 1));
    pool.deallocate(live[i].first);
  }
  pool.check_invariants();
}

TEST(MemoryPointerMap, AgreesWithUnorderedMap) {
  PointerMap map;
  std::unordered_map<uintptr_t, uint32_t> reference;
  std::mt19937_64 rng(7);
  std::vector<uintptr_t> keys;
  for (int op = 0; op < 200000; ++op) {
    if (keys.empty() || rng() % 100 < 55) {
      // Clustered 256-aligned keys stress long probe runs.
      const uintptr_t key = (uintptr_t{1} << 40) + (rng() % 50000) * 256;
      if (reference.count(key)) continue;
      const auto value = static_cast<uint32_t>(rng());
      map.insert(key, value);
      reference[key] = value;
      keys.push_back(key);
    } else {
      const size_t i = rng() % keys.size();
      const uintptr_t key = keys[i];
      keys[i] = keys.back();
      keys.pop_back();
      ASSERT_EQ(map.erase(key), reference[key]);
      reference.erase(key);
      ASSERT_EQ(map.find(key), PointerMap::kNotFound);
    }
    if (op % 1000 == 0) {
      ASSERT_EQ(map.size(), reference.size());
      for (const auto& [k, v] : reference) ASSERT_EQ(map.find(k), v);
    }
  }
  EXPECT_EQ(map.erase(12345 * 256), PointerMap::kNotFound);
}

}  // namespace
}  // namespace gpuaccel
