// The NCCL engine's checks on every machine, and, where a GPU exists, a one-rank communicator
// on GPU 0 (more ranks need more GPUs: one thread per GPU, all with one id).
#include "distribute/nccl_collective.h"

#include <future>

#include "core/cuda_backend_loader.h"
#include "cuda_test_device.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel::distribute {
namespace {

using namespace std::chrono_literals;

TEST(NcclCollective, RefusesCpuDevicesAndBadRanks) {
  test::expect_error(ErrorCode::kInvalidArgument, "CPU:0 is not a GPU", [] {
    make_nccl_collective(LogicalDevice{}, 0, 1, std::string(128, '\0'), 1s);
  });
  LogicalDevice gpu{DeviceType::kGPU, 0, 0};
  test::expect_error(ErrorCode::kValue, "rank 2 of world size 2 is not valid", [&] {
    make_nccl_collective(gpu, 2, 2, std::string(128, '\0'), 1s);
  });
  test::expect_error(ErrorCode::kValue, "timeout must be > 0", [&] {
    make_nccl_collective(gpu, 0, 1, std::string(128, '\0'), 0ms);
  });
}

TEST(NcclCollective, WithoutAGpuTheErrorSaysWhy) {
  if (cuda_library() != nullptr &&
      !DeviceRegistry::instance().logical_devices(DeviceType::kGPU).empty())
    return;  // the GPU tests below run instead
  test::expect_error(ErrorCode::kFailedPrecondition, "nccl_unique_id", [] { nccl_unique_id(); });
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND

class NcclOnGpu : public CudaDeviceTest {};

Tensor on_gpu(const std::vector<float>& values, int64_t gpu) {
  return from_host(values.data(), Shape{static_cast<int64_t>(values.size())}, DType::kFloat32,
                   LogicalDevice{DeviceType::kGPU, static_cast<int>(gpu), static_cast<int>(gpu)});
}

TEST_F(NcclOnGpu, OneRankCommunicatorSumsToItselfAndBroadcasts) {
  LogicalDevice gpu{DeviceType::kGPU, 0, ordinal_};
  auto c = make_nccl_collective(gpu, 0, 1, nccl_unique_id(), 30s);
  EXPECT_EQ(c->engine(), "nccl");
  Tensor a = on_gpu({1, -2, 3.5f}, 0);
  Tensor b = cast(on_gpu({0.5f, 4}, 0), DType::kBFloat16);
  c->all_reduce_sum({a, b});
  c->broadcast({a}, 0);
  c->barrier();
  EXPECT_EQ(test::read(a), (std::vector<float>{1, -2, 3.5f}));
  EXPECT_EQ(test::read(cast(b, DType::kFloat32)), (std::vector<float>{0.5f, 4}));
  Tensor on_cpu = test::make({1}, Shape{1});
  test::expect_error(ErrorCode::kInvalidArgument, "this NCCL rank's tensors live on GPU:0",
                     [&] { c->all_reduce_sum({on_cpu}); });
}

TEST_F(NcclOnGpu, TwoGpusAsTwoThreadsSum) {
  if (DeviceRegistry::instance().logical_devices(DeviceType::kGPU).size() < 2)
    GTEST_SKIP() << "needs two GPUs";
  std::string id = nccl_unique_id();
  auto rank_main = [&](int rank) {
    auto c = make_nccl_collective(LogicalDevice{DeviceType::kGPU, rank, rank}, rank, 2, id, 60s);
    Tensor t = on_gpu({1.0f + rank, 10}, rank);
    c->all_reduce_sum({t});
    return test::read(t);
  };
  auto other = std::async(std::launch::async, rank_main, 1);
  EXPECT_EQ(rank_main(0), (std::vector<float>{3, 20}));
  EXPECT_EQ(other.get(), (std::vector<float>{3, 20}));
}

#endif

}  // namespace
}  // namespace gpuaccel::distribute
