// Graph-private arenas (memory/capture_arena.h): their regions are the device pool's memory, a
// block freed after the capture stays the graph's, routing is per thread and per GPU, and no
// region goes back to the device (a cudaFree, which would invalidate the capture) while a
// capture is under way on its GPU, nor from an arena to the device's pool before it dies.
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <thread>

#include "core/errors.h"
#include "memory/capture_arena.h"
#include "memory/fake_sub_allocator.h"
#include "memory/pool_allocator.h"

namespace gpuaccel {
namespace {

std::shared_ptr<PoolAllocator> device_pool() {
  PoolOptions options;
  options.name = "GPU_0_pool";
  options.is_gpu = true;
  return std::make_shared<PoolAllocator>(std::make_shared<FakeSubAllocator>(size_t{256} << 20),
                                         options);
}

LogicalDevice gpu(int physical_index) {
  LogicalDevice d;
  d.type = DeviceType::kGPU;
  d.index = physical_index;
  d.physical_index = physical_index;
  return d;
}

TEST(CaptureArena, ItsRegionsArePoolMemoryAndFreedBlocksStayTheGraphs) {
  auto pool = device_pool();
  auto arena = make_capture_arena(pool);
  EXPECT_EQ(arena->name(), "GPU_0_pool_graph_arena");
  void* activation = arena->allocate(1000);
  // The arena's region is one allocation of the device's pool: the device's stats see it.
  EXPECT_EQ(pool->stats().allocations.current, 1);
  EXPECT_GE(pool->stats().allocated_bytes.current, 1000);
  arena->deallocate(activation);
  // Freed inside the arena: the device's pool still holds it for the graph...
  EXPECT_EQ(pool->stats().allocations.current, 1);
  void* other = pool->allocate(1000);
  EXPECT_NE(other, activation);  // ...so an eager tensor never lands on the graph's memory.
  pool->deallocate(other);
  // A graph destroyed: its regions go back to the device's pool.
  arena.reset();
  EXPECT_EQ(pool->stats().allocations.current, 0);
  pool->check_invariants();
}

TEST(CaptureArena, ADevicePoolThatCannotServeARegionIsTheArenasOutOfMemory) {
  PoolOptions options;
  options.name = "GPU_0_pool";
  options.limit_bytes = size_t{1} << 20;
  auto pool = std::make_shared<PoolAllocator>(std::make_shared<FakeSubAllocator>(size_t{64} << 20),
                                              options);
  auto arena = make_capture_arena(pool);
  try {
    arena->allocate(size_t{8} << 20);
    FAIL() << "expected ResourceExhaustedError";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(e.message().find("GPU_0_pool_graph_arena"), std::string::npos) << e.message();
  }
  EXPECT_EQ(pool->stats().allocations.current, 0);
}

TEST(CaptureArena, RoutingIsPerThreadAndPerGpu) {
  auto arena = make_capture_arena(device_pool());
  EXPECT_EQ(routed_capture_arena(gpu(0)), nullptr);
  begin_capture_routing(0, arena);
  EXPECT_EQ(routed_capture_arena(gpu(0)), arena);
  EXPECT_EQ(routed_capture_arena(gpu(1)), nullptr);  // another GPU
  LogicalDevice cpu;
  EXPECT_EQ(routed_capture_arena(cpu), nullptr);
  LogicalDevice split = gpu(0);  // the second logical device of a split GPU 0
  split.index = 1;
  EXPECT_EQ(routed_capture_arena(split), arena);
  std::shared_ptr<Allocator> seen_elsewhere = arena;
  std::thread pipeline([&] { seen_elsewhere = routed_capture_arena(gpu(0)); });
  pipeline.join();
  EXPECT_EQ(seen_elsewhere, nullptr);  // the data pipeline's thread keeps the device's pool
  EXPECT_THROW(begin_capture_routing(0, arena), Error);  // captures do not nest
  end_capture_routing(0);
  EXPECT_EQ(routed_capture_arena(gpu(0)), nullptr);
}


constexpr size_t kMiB = size_t{1} << 20;

// A GPU pool as MemoryManager makes it: its regions are held while GPU 0 is being captured,
// and blocks the capturing thread frees go to its arena.
std::shared_ptr<PoolAllocator> gpu0_pool(const std::shared_ptr<FakeSubAllocator>& device,
                                         const std::string& name = "GPU_0_pool") {
  PoolOptions options;
  options.name = name;
  options.is_gpu = true;
  options.initial_region_bytes = 4 * kMiB;
  options.regions_held = [] { return capture_holds_regions(0); };
  options.keep_freed_block = [](PoolAllocator& pool, void* block) {
    return keep_for_capture(0, pool, block);
  };
  return std::make_shared<PoolAllocator>(device, options);
}

TEST(CaptureArena, AGpuPoolFreesNoRegionWhileItsGpuIsBeingCaptured) {
  auto device = std::make_shared<FakeSubAllocator>(8 * kMiB);
  auto pool = gpu0_pool(device);
  pool->deallocate(pool->allocate(3 * kMiB));  // one empty 4 MiB region stays reserved
  ASSERT_EQ(device->live_blocks(), 1u);

  auto arena = make_capture_arena(pool);
  // Another thread's capture on GPU 0 holds the pool just the same: the count is process-wide.
  std::promise<void> begun, checked;
  std::thread capturing([&] {
    begin_capture_routing(0, arena);
    begun.set_value();
    checked.get_future().wait();
    end_capture_routing(0);
  });
  begun.get_future().wait();
  EXPECT_TRUE(capture_under_way(0));
  EXPECT_FALSE(capture_under_way(1));
  EXPECT_EQ(pool->empty_cache(), 0u);
  // 6 MiB fits only after the empty region goes back (4 + 6 > 8): refused instead of freeing,
  // with the reason in the out-of-memory report.
  try {
    pool->allocate(6 * kMiB);
    FAIL() << "expected ResourceExhaustedError";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("captured into a CUDA graph on GPU 0"), std::string::npos)
        << e.what();
  }
  // The capturing thread's own request goes through its graph's arena: the arena's report then
  // carries the device pool's answer, reason included.
  try {
    arena->allocate(6 * kMiB);
    FAIL() << "expected ResourceExhaustedError";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU_0_pool_graph_arena"), std::string::npos) << what;
    EXPECT_NE(what.find("captured into a CUDA graph on GPU 0"), std::string::npos) << what;
  }
  EXPECT_EQ(device->free_calls(), 0);
  EXPECT_EQ(pool->stats().num_alloc_retries, 0);
  pool->check_invariants();

  end_capture_routing(0);  // this thread has no route on GPU 0: nothing ends
  EXPECT_TRUE(capture_under_way(0));
  // The capture ends: the same request frees the empty region and fits.
  checked.set_value();
  capturing.join();
  EXPECT_FALSE(capture_under_way(0));
  void* big = pool->allocate(6 * kMiB);
  EXPECT_EQ(device->free_calls(), 1);
  EXPECT_EQ(pool->stats().num_alloc_retries, 1);
  pool->deallocate(big);
  EXPECT_GT(pool->empty_cache(), 0u);
}

TEST(CaptureArena, ACaptureOnAnotherGpuHoldsNothing) {
  auto device = std::make_shared<FakeSubAllocator>(8 * kMiB);
  auto pool = gpu0_pool(device);
  pool->deallocate(pool->allocate(kMiB));
  begin_capture_routing(1, make_capture_arena(pool));
  EXPECT_EQ(pool->empty_cache(), 4 * kMiB);
  EXPECT_EQ(device->free_calls(), 1);
  end_capture_routing(1);
  EXPECT_FALSE(capture_under_way(1));
}

TEST(CaptureArena, AnArenaGivesNoRegionBackToTheDevicePoolBeforeItDies) {
  PoolOptions options;
  options.name = "GPU_0_pool";
  options.limit_bytes = 8 * kMiB;
  auto pool = std::make_shared<PoolAllocator>(std::make_shared<FakeSubAllocator>(64 * kMiB), options);
  auto arena = make_capture_arena(pool);
  // The graph's temporaries: one 4 MiB arena region, emptied again later in the capture.
  arena->deallocate(arena->allocate(3 * kMiB));
  ASSERT_EQ(pool->stats().allocations.current, 1);
  EXPECT_EQ(arena->empty_cache(), 0u);
  // A request the device's pool can serve only if the arena returned that region: the arena
  // reports out of memory rather than hand the graph's addresses to the device's pool.
  EXPECT_THROW(arena->allocate(6 * kMiB), Error);
  EXPECT_EQ(pool->stats().allocations.current, 1);
  void* eager = pool->allocate(3 * kMiB);
  EXPECT_EQ(pool->stats().allocations.current, 2);  // the graph's region is still its own
  pool->deallocate(eager);
  arena.reset();  // the graph is destroyed: now its region goes back
  EXPECT_EQ(pool->stats().allocations.current, 0);
  pool->check_invariants();
}

TEST(CaptureArena, ABlockFreedDuringTheCaptureStaysReservedUntilTheGraphDies) {
  auto pool = gpu0_pool(std::make_shared<FakeSubAllocator>(size_t{256} << 20));
  void* previous_output = pool->allocate(4096);  // made eagerly, before the capture
  auto arena = make_capture_arena(pool);
  begin_capture_routing(0, arena);
  pool->deallocate(previous_output);  // the captured step replaces it
  end_capture_routing(0);
  // Still in use: an eager tensor must not get the address the graph may read or write.
  EXPECT_EQ(pool->allocation_size(previous_output), size_t{4096});
  void* eager = pool->allocate(4096);
  EXPECT_NE(eager, previous_output);
  pool->deallocate(eager);
  EXPECT_EQ(pool->allocation_size(eager), size_t{0});  // frees after the capture are plain
  arena.reset();  // the graph is destroyed
  EXPECT_EQ(pool->allocation_size(previous_output), size_t{0});
  EXPECT_EQ(pool->stats().allocations.current, 0);
  pool->check_invariants();
}

TEST(CaptureArena, OnlyTheCapturingThreadsFreesOfItsOwnPoolAreKept) {
  auto pool = gpu0_pool(std::make_shared<FakeSubAllocator>(size_t{256} << 20));
  auto other_pool = gpu0_pool(std::make_shared<FakeSubAllocator>(size_t{256} << 20),
                               "GPU_0_second_logical_pool");
  void* pipelines = pool->allocate(1024);
  void* other = other_pool->allocate(1024);
  auto arena = make_capture_arena(pool);
  begin_capture_routing(0, arena);
  std::thread([&] { pool->deallocate(pipelines); }).join();  // the data pipeline's thread
  other_pool->deallocate(other);  // not the arena's pool: nothing to give it back to later
  end_capture_routing(0);
  EXPECT_EQ(pool->allocation_size(pipelines), size_t{0});
  EXPECT_EQ(other_pool->allocation_size(other), size_t{0});
  // A pointer the pool never made is still the pool's double-free error, capture or not.
  begin_capture_routing(0, arena);
  int not_pool_memory = 0;
  EXPECT_THROW(pool->deallocate(&not_pool_memory), Error);
  end_capture_routing(0);
  arena.reset();
  pool->check_invariants();
  other_pool->check_invariants();
}

}  // namespace
}  // namespace gpuaccel
