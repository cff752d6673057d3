// The MPI engine's refusals, which need no MPI: a library that cannot be opened or is not of the
// MPI 5.0 standard ABI says what to pip install, and TF_CONFIG workers are told to use mpiexec
// (two ranks of real MPI run in tests/python/test_mpi_engine.py, under mpich's mpiexec). Also the
// dtype groups both CPU engines pack their all-reduce into.
#include "distribute/mpi_collective.h"

#include <cstring>

#include "distribute/cpu_collective_buffers.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel::distribute {
namespace {

using namespace std::chrono_literals;

TEST(MpiCollective, ALibraryThatCannotBeOpenedNamesItAndWhatToInstall) {
  test::expect_error(ErrorCode::kFailedPrecondition, "cannot use '/no/such/libmpi_abi.so.1'",
                     [] { make_mpi_collective("/no/such/libmpi_abi.so.1", ClusterSpec{}, 5s); });
  test::expect_error(ErrorCode::kFailedPrecondition, "pip install mpich",
                     [] { make_mpi_collective("/no/such/libmpi_abi.so.1", ClusterSpec{}, 5s); });
}

TEST(MpiCollective, ALibraryWithoutTheStandardAbiIsRefused) {
  test::expect_error(ErrorCode::kFailedPrecondition,
                     "it has no MPI_Abi_get_version (not an MPI 5.0 standard-ABI library)",
                     [] { make_mpi_collective("libm.so.6", ClusterSpec{}, 5s); });
}

TEST(MpiCollective, TfConfigWorkersAreToldToStartWithMpiexec) {
  ClusterSpec spec = parse_tf_config(
      R"({"cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]}, "task": {"type": "worker", "index": 1}})");
  test::expect_error(ErrorCode::kValue, "which the MPI engine cannot join; start them with MPI's "
                                        "launcher instead, without TF_CONFIG: mpiexec -n 3 python",
                     [&] { make_mpi_collective("", spec, 5s); });
  test::expect_error(ErrorCode::kValue, "timeout 0 ms must be > 0",
                     [] { make_mpi_collective("", ClusterSpec{}, 0s); });
}

TEST(CpuCollectiveBuffers, GroupsByDtypeInFirstAppearanceOrderAndPacksRoundTrip) {
  Tensor a = test::make({1, 2, 3}, Shape{3});
  Tensor i = Tensor::empty(Shape{2}, DType::kInt64, LogicalDevice{});
  int64_t ints[2] = {7, -8};
  std::memcpy(i.data(), ints, sizeof ints);
  Tensor b = test::make({4, 5}, Shape{2});
  std::vector<Tensor> tensors{a, i, b};
  std::vector<DtypeGroup> groups = group_by_dtype(tensors);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].dtype, DType::kFloat32);
  EXPECT_EQ(groups[0].bytes, 5 * sizeof(float));
  ASSERT_EQ(groups[0].tensors.size(), 2u);
  EXPECT_EQ(groups[1].dtype, DType::kInt64);
  EXPECT_EQ(groups[1].bytes, 2 * sizeof(int64_t));

  std::vector<float> packed(5);
  pack(groups[0], reinterpret_cast<char*>(packed.data()));
  EXPECT_EQ(packed, (std::vector<float>{1, 2, 3, 4, 5}));
  for (float& v : packed) v *= 10;
  unpack(groups[0], reinterpret_cast<const char*>(packed.data()));
  EXPECT_EQ(test::read(a), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(test::read(b), (std::vector<float>{40, 50}));
}

TEST(CpuCollectiveBuffers, OnlyContiguousCpuTensors) {
  Tensor a = test::make({1, 2, 3, 4}, Shape{2, 2});
  test::expect_error(ErrorCode::kInvalidArgument, "tensor 1 is not contiguous",
                     [&] { check_cpu_tensors("all_reduce_sum", {a, transpose(a, 0, 1)}, "MPI"); });
}

}  // namespace
}  // namespace gpuaccel::distribute
