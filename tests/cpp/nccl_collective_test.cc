// The NCCL engine's checks on every machine, and, where a GPU exists, a one-rank communicator
// on GPU 0 (more ranks need more GPUs: one thread per GPU, all with one id), also under the
// overlapped all-reduce, whose buckets come with the compute-stream events recorded when they
// became final.
#include "distribute/nccl_collective.h"

#include <dlfcn.h>

#include <future>

#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/cuda_loader/cuda_library.h"
#include "core/cuda_loader/nccl_library.h"
#include "cuda_test_device.h"
#include "distribute/overlapped_all_reduce.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
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

// The real CUDA library opened directly: its NCCL side needs no GPU to open libnccl and to
// check its arguments, so CI's CUDA build (without a GPU) runs this too.
TEST(NcclLibraryDirect, OpensNcclAndRefusesBadArguments) {
  void* handle = dlopen(GPUACCEL_TEST_CUDA_BACKEND, RTLD_LAZY | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto factory = reinterpret_cast<gpuaccel_cuda_library_factory_fn>(
      dlsym(handle, GPUACCEL_CUDA_LIBRARY_FACTORY));
  ASSERT_NE(factory, nullptr);
  int library_version = 0;
  CudaLibrary* library = factory(kCudaLibraryInterfaceVersion, &library_version);
  ASSERT_NE(library, nullptr);
  NcclLibrary* nccl = library->nccl();
  ASSERT_NE(nccl, nullptr) << "built without nccl.h";
  std::string error;
  // The build found nccl.h beside its libnccl (the CUDA toolkit's), which dlopen then finds.
  EXPECT_GE(nccl->version(&error), 21400) << error;
  void* communicator = nullptr;
  EXPECT_EQ(nccl->init_rank(0, 1, 0, "short", 100, &communicator, &error), NcclStatus::kInvalidArgument);
  EXPECT_NE(error.find("the NCCL id has 5 bytes; expected 128"), std::string::npos) << error;
  EXPECT_EQ(communicator, nullptr);
  NcclBuffer buffer;
  EXPECT_EQ(nccl->all_reduce_sum(nullptr, &buffer, 1, nullptr, 100, &error), NcclStatus::kInvalidArgument);
  EXPECT_NE(error.find("null NCCL communicator"), std::string::npos) << error;
  // A dtype NCCL cannot reduce is refused before anything reaches NCCL (no group to end and
  // poll), so even ahead of the communicator check.
  NcclBuffer flags;
  flags.dtype = DType::kBool;
  flags.count = 4;
  EXPECT_EQ(nccl->all_reduce_sum(nullptr, &flags, 1, nullptr, 100, &error), NcclStatus::kInvalidArgument);
  EXPECT_NE(error.find("NCCL cannot all_reduce_sum tensors of dtype bool"), std::string::npos) << error;
}

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

// Refused before the group starts, the communicator is still usable afterwards.
TEST_F(NcclOnGpu, AnUnsupportedDtypeLeavesTheCommunicatorUsable) {
  LogicalDevice gpu{DeviceType::kGPU, 0, ordinal_};
  auto c = make_nccl_collective(gpu, 0, 1, nccl_unique_id(), 30s);
  Tensor a = on_gpu({1, 2}, 0);
  Tensor flags = cast(on_gpu({1, 0}, 0), DType::kBool);
  test::expect_error(ErrorCode::kInvalidArgument, "NCCL cannot all_reduce_sum tensors of dtype bool",
                     [&] { c->all_reduce_sum({a, flags}); });
  c->all_reduce_sum({a});
  c->barrier();
  EXPECT_EQ(test::read(a), (std::vector<float>{1, 2}));
}

TEST_F(NcclOnGpu, OverlappedBucketsWaitForTheirGradientsOnTheComputeStream) {
  LogicalDevice gpu{DeviceType::kGPU, 0, ordinal_};
  auto c = make_nccl_collective(gpu, 0, 1, nccl_unique_id(), 30s);
  // Three weights of 64 Ki floats, one bucket each: bucket 0 is summed by NCCL while the
  // backward pass still queues the other weights' gradient kernels on the compute stream.
  const int64_t n = int64_t(1) << 16;
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    params.push_back(on_gpu(std::vector<float>(size_t(n), 1.0f + float(i)), 0));
    params.back().impl()->requires_grad = true;
  }
  std::vector<float> x_values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x_values[size_t(i)] = float(i % 7) - 3.0f;
  const Tensor x = on_gpu(x_values, 0);
  auto loss_of = [&] {
    GradModeGuard on(true);
    return reduce(ReduceOp::kSum, mul(params[2], mul(params[1], mul(params[0], x))), {0}, false);
  };
  OverlappedAllReduce overlap(*c, size_t(n) * sizeof(float));
  for (int step = 0; step < 3; ++step) {
    const std::vector<Tensor> sums = overlap.backward_and_all_reduce(loss_of(), params, 1.0);
    ASSERT_EQ(overlap.buckets()->bucket_count(), 3u);
    // One rank, weight 1: the sum is the gradient, d/dw_i = x * (product of the other two).
    const std::vector<float> factor = {2 * 3, 1 * 3, 1 * 2};
    for (size_t i = 0; i < 3; ++i) {
      const std::vector<float> got = test::read(sums[i]);
      for (int64_t k = 0; k < n; k += 4099) {
        ASSERT_EQ(got[size_t(k)], x_values[size_t(k)] * factor[i]) << "weight " << i << ", element " << k;
      }
    }
  }
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
