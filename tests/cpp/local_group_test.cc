// make_local_group (distribute/local_group.h): CPU replicas get the in-process engine, one
// rank each, and so do logical GPUs split from one physical GPU; a group mixing CPUs and GPUs, or with no device, is a typed error. (The GPU path,
// NCCL, needs GPUs: test_collective's gpu-marked tests cover the engine itself.)
#include <gtest/gtest.h>

#include <chrono>

#include "distribute/local_group.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

TEST(LocalGroup, CpuReplicasShareTheInProcessEngine) {
  LogicalDevice cpu0, cpu1;
  cpu1.index = 1;
  const auto group = distribute::make_local_group({cpu0, cpu1}, std::chrono::seconds(5));
  ASSERT_EQ(group.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(group[r]->engine(), "in_process");
    EXPECT_EQ(group[r]->rank(), r);
    EXPECT_EQ(group[r]->world_size(), 2);
  }
}

// A one-GPU machine split into two logical GPUs: NCCL would refuse two ranks on the device
// ("Duplicate GPU detected"), so the group is the in-process engine (no NCCL library needed:
// there is none here, and choosing NCCL would throw).
TEST(LocalGroup, LogicalGpusOfOnePhysicalGpuShareTheInProcessEngine) {
  LogicalDevice gpu0, gpu1;
  gpu0.type = gpu1.type = DeviceType::kGPU;
  gpu1.index = 1;  // both on physical GPU 0
  EXPECT_TRUE(distribute::gpus_share_a_physical_device({gpu0, gpu1}));
  const auto group = distribute::make_local_group({gpu0, gpu1}, std::chrono::seconds(5));
  ASSERT_EQ(group.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(group[r]->engine(), "in_process");
    EXPECT_EQ(group[r]->rank(), r);
  }
  // One logical GPU on each of two physical GPUs: NCCL's case (not built here).
  LogicalDevice other = gpu1;
  other.physical_index = 1;
  EXPECT_FALSE(distribute::gpus_share_a_physical_device({gpu0, other}));
  // Two of three sharing is enough.
  EXPECT_TRUE(distribute::gpus_share_a_physical_device({gpu0, other, gpu1}));
}

TEST(LocalGroup, MixedOrMissingDevicesAreTypedErrors) {
  LogicalDevice cpu, gpu;
  gpu.type = DeviceType::kGPU;
  test::expect_error(ErrorCode::kInvalidArgument, "all be on CPUs or all on GPUs", [&] {
    distribute::make_local_group({cpu, gpu}, std::chrono::seconds(1));
  });
  test::expect_error(ErrorCode::kInvalidArgument, "needs a device", [&] {
    distribute::make_local_group({}, std::chrono::seconds(1));
  });
}

}  // namespace
}  // namespace gpuaccel
