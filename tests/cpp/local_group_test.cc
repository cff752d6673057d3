// make_local_group (distribute/local_group.h): CPU replicas get the in-process engine, one
// rank each; a group mixing CPUs and GPUs, or with no device, is a typed error. (The GPU path,
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
