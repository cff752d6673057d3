// The per-device policy of MemoryManager over the real device registry with simulated GPUs
// (whose memory is a fake address range of the GPU's size): the host pool grows, a GPU
// preallocates a fraction of its free memory unless memory growth is on, memory_limit is a hard
// cap, GPUACCEL_NO_CACHING=1 bypasses pooling, and reset() forgets everything.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/device_registry.h"
#include "core/device_scope.h"
#include "core/errors.h"
#include "memory/memory_manager.h"
#include "memory/pool_allocator.h"

namespace gpuaccel {
namespace {

constexpr int64_t MiB = int64_t{1} << 20;
constexpr int64_t GiB = int64_t{1} << 30;

const PhysicalDevice kCpu{DeviceType::kCPU, 0};
const PhysicalDevice kGpu0{DeviceType::kGPU, 0};

class MemoryManagerTest : public ::testing::Test {
 protected:
  void SetUp() override { reset(2); }
  void TearDown() override {
    unsetenv("GPUACCEL_NO_CACHING");
    unsetenv("GPUACCEL_GPU_MEMORY_FRACTION");
    MemoryManager::instance().reset();
    DeviceRegistry::reset_instance(nullptr);
  }
  void reset(int gpus) {
    MemoryManager::instance().reset();
    std::vector<GpuInfo> list(gpus, GpuInfo{"Tesla T4", 16 * GiB, 7, 5, 40, 256, 5001000, ""});
    DeviceRegistry::reset_instance(std::make_unique<SimulatedGpuProvider>(list));
  }
  DeviceRegistry& registry() { return DeviceRegistry::instance(); }
  MemoryManager& manager() { return MemoryManager::instance(); }
  LogicalDevice device(const std::string& name) {
    return resolve_logical_device(parse_device_name(name), name);
  }
};

TEST_F(MemoryManagerTest, HostPoolStartsEmptyAndGrows) {
  auto cpu = manager().allocator_for(device("/CPU:0"));
  EXPECT_TRUE(cpu->caching());
  EXPECT_EQ(cpu->name(), "CPU_0_pool");
  EXPECT_EQ(cpu->device_name(), "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(cpu->stats().reserved_bytes.current, 0);
  void* p = cpu->allocate(1000);
  EXPECT_EQ(cpu->stats().reserved_bytes.current, 2 * MiB);
  void* q = cpu->allocate(3 * MiB);
  EXPECT_EQ(cpu->stats().reserved_bytes.current, 6 * MiB);
  EXPECT_FALSE(cpu->stats().limit_bytes.has_value());
  cpu->deallocate(p);
  cpu->deallocate(q);
  EXPECT_EQ(manager().allocator_for(device("cpu")), cpu);  // one allocator per device
}

TEST_F(MemoryManagerTest, CpuMemoryLimitIsAHardCap) {
  registry().set_logical_device_configuration(kCpu, {{64, std::nullopt, std::nullopt}});
  auto cpu = manager().allocator_for(device("/device:CPU:0"));
  EXPECT_EQ(cpu->stats().limit_bytes, 64 * MiB);
  void* p = cpu->allocate(40 * MiB);
  try {
    cpu->allocate(30 * MiB);
    FAIL() << "expected ResourceExhaustedError";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    const std::string text = e.what();
    EXPECT_NE(text.find("31457280 bytes"), std::string::npos) << text;
    EXPECT_NE(text.find("limit: 67108864 bytes (64.00 MiB) (memory_limit of the logical device)"),
              std::string::npos)
        << text;
  }
  cpu->deallocate(p);
}

TEST_F(MemoryManagerTest, GpuPreallocatesMostOfItsFreeMemory) {
  EXPECT_EQ(manager().find(device("/GPU:0")), nullptr);  // nothing until asked for
  auto gpu = manager().allocator_for(device("/GPU:0"));
  const MemoryStats s = gpu->stats();
  const int64_t expected = static_cast<int64_t>(16 * GiB * kDefaultGpuMemoryFraction) / 256 * 256;
  EXPECT_EQ(s.reserved_bytes.current, expected);
  EXPECT_EQ(s.segments.current, 1);
  EXPECT_EQ(s.limit_bytes, expected);
  void* p = gpu->allocate(GiB);
  EXPECT_EQ(gpu->stats().segments.current, 1);  // served from the preallocated region
  gpu->deallocate(p);
  // The other GPU is untouched until used.
  EXPECT_EQ(manager().find(device("cuda:1")), nullptr);
}

TEST_F(MemoryManagerTest, GpuMemoryFractionIsConfigurable) {
  setenv("GPUACCEL_GPU_MEMORY_FRACTION", "0.25", 1);
  EXPECT_EQ(manager().allocator_for(device("/GPU:0"))->stats().reserved_bytes.current, 4 * GiB);
  manager().set_gpu_memory_fraction(0.5);
  EXPECT_EQ(manager().allocator_for(device("/GPU:1"))->stats().reserved_bytes.current, 8 * GiB);
  EXPECT_THROW(manager().set_gpu_memory_fraction(0.0), Error);
  EXPECT_THROW(manager().set_gpu_memory_fraction(1.5), Error);
  manager().set_gpu_memory_fraction(kDefaultGpuMemoryFraction);
}

TEST_F(MemoryManagerTest, GpuWithMemoryGrowthStartsSmall) {
  registry().set_memory_growth(kGpu0, true);
  registry().set_memory_growth({DeviceType::kGPU, 1}, true);
  auto gpu = manager().allocator_for(device("/GPU:0"));
  EXPECT_EQ(gpu->stats().reserved_bytes.current, 0);
  void* p = gpu->allocate(1000);
  EXPECT_EQ(gpu->stats().reserved_bytes.current, 2 * MiB);
  void* q = gpu->allocate(5 * MiB);
  EXPECT_EQ(gpu->stats().reserved_bytes.current, 10 * MiB);  // 2 MiB + 8 MiB
  gpu->deallocate(p);
  gpu->deallocate(q);
}

TEST_F(MemoryManagerTest, GpuMemoryLimitIsPreallocatedAndCapped) {
  registry().set_logical_device_configuration(
      kGpu0, {{1024, std::nullopt, std::nullopt}, {1024, std::nullopt, std::nullopt}});
  auto a = manager().allocator_for(device("/GPU:0"));
  auto b = manager().allocator_for(device("/GPU:1"));  // the second logical GPU, same chip
  EXPECT_EQ(a->stats().reserved_bytes.current, GiB);
  EXPECT_EQ(b->stats().reserved_bytes.current, GiB);
  EXPECT_NE(a, b);
  EXPECT_THROW(a->allocate(GiB + 1), Error);
  void* p = a->allocate(GiB);
  a->deallocate(p);
}

TEST_F(MemoryManagerTest, LogicalGpusShareTheirChipsMemory) {
  // Two 10 GiB logical devices on a 16 GiB chip: the second gets what is left (halving).
  registry().set_logical_device_configuration(
      kGpu0, {{10240, std::nullopt, std::nullopt}, {10240, std::nullopt, std::nullopt}});
  EXPECT_EQ(manager().allocator_for(device("/GPU:0"))->stats().reserved_bytes.current, 10 * GiB);
  EXPECT_EQ(manager().allocator_for(device("/GPU:1"))->stats().reserved_bytes.current, 5 * GiB);
}

TEST_F(MemoryManagerTest, NoCachingBypassesThePool) {
  setenv("GPUACCEL_NO_CACHING", "1", 1);
  registry().set_logical_device_configuration(kCpu, {{1, std::nullopt, std::nullopt}});
  auto cpu = manager().allocator_for(device("/CPU:0"));
  EXPECT_FALSE(cpu->caching());
  void* p = cpu->allocate(1000);
  EXPECT_EQ(cpu->stats().reserved_bytes.current, 1000);
  EXPECT_THROW(cpu->allocate(MiB), Error);  // the limit still holds
  cpu->deallocate(p);
  EXPECT_EQ(cpu->stats().reserved_bytes.current, 0);
  auto gpu = manager().allocator_for(device("/GPU:0"));
  EXPECT_FALSE(gpu->caching());
  EXPECT_EQ(gpu->stats().reserved_bytes.current, 0);  // no preallocation either
}

TEST_F(MemoryManagerTest, ResolvesDefaultsScopesAndBadNames) {
  EXPECT_EQ(resolve_logical_device(std::nullopt, "None").name(), "/device:GPU:0");
  {
    DeviceScope scope(parse_device_name("/CPU:0"));
    EXPECT_EQ(resolve_logical_device(std::nullopt, "None").name(), "/device:CPU:0");
  }
  EXPECT_EQ(device("cuda").name(), "/device:GPU:0");
  EXPECT_EQ(device("cuda:1").name(), "/device:GPU:1");
  try {
    device("/GPU:7");
    FAIL() << "expected ValueError";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kValue);
    EXPECT_NE(std::string(e.what()).find("'/GPU:7'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/device:GPU:1"), std::string::npos) << e.what();
  }
  reset(0);
  EXPECT_EQ(resolve_logical_device(std::nullopt, "None").name(), "/device:CPU:0");
}

TEST_F(MemoryManagerTest, ResetForgetsPoolsButHeldOnesStayUsable) {
  auto cpu = manager().allocator_for(device("/CPU:0"));
  void* p = cpu->allocate(100);
  manager().reset();
  EXPECT_EQ(manager().find(device("/CPU:0")), nullptr);
  EXPECT_TRUE(manager().allocators().empty());
  cpu->deallocate(p);  // the old pool lives while it is referenced
  auto fresh = manager().allocator_for(device("/CPU:0"));
  EXPECT_NE(fresh, cpu);
  EXPECT_EQ(fresh->stats().allocations.allocated, 0);
}

TEST_F(MemoryManagerTest, PinnedHostNeedsTheCudaBackend) {
  // No CUDA backend is loaded in the tests; the error says why instead of crashing.
  try {
    manager().pinned_host_allocator();
    SUCCEED() << "a CUDA backend is present on this machine";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << e.what();
  }
}

}  // namespace
}  // namespace gpuaccel
