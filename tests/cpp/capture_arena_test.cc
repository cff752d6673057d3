// Graph-private arenas (memory/capture_arena.h): their regions are the device pool's memory, a
// block freed after the capture stays the graph's, and routing is per thread and per GPU.
#include <gtest/gtest.h>

#include <memory>
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

}  // namespace
}  // namespace gpuaccel
