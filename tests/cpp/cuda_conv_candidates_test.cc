// The order in which the CUDA backend tries a convolution's algorithms and the walk down it
// (backends/cuda/conv_candidates.h), with cuDNN's numbering but no cuDNN: the heuristic's
// supported algorithms first (float32: those reported with FMA math before the others, all run
// with FMA), then the general fallbacks, none twice; a refused candidate is passed over, and a
// walk resumed after a refused launch goes on with the rest.
#include "backends/cuda/conv_candidates.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace gpuaccel::cuda {
namespace {

// cuDNN's values: CUDNN_DEFAULT_MATH 0, CUDNN_TENSOR_OP_MATH 1, CUDNN_FMA_MATH 3.
constexpr int kDefault = 0, kTensorOp = 1, kFma = 3;

TEST(CudaConvCandidates, Float32RunsEveryCandidateWithFmaAndPrefersThoseReportedSo) {
  // As the heuristic may answer for NHWC float32 with C = 1 on sm_80+: its first picks would use
  // TF32 (default math), one is unsupported, and an FMA one comes late.
  const std::vector<ReportedConvAlgorithm> reported = {
      {1, true, kDefault}, {6, false, kFma}, {2, true, kDefault}, {0, true, kFma}, {1, true, kFma}};
  const std::vector<ConvCandidate> fallbacks = {{0, kFma}, {1, kFma}, {2, kFma}};
  const std::vector<ConvCandidate> got = conv_candidates(reported, true, kFma, fallbacks);
  const std::vector<ConvCandidate> want = {{0, kFma}, {1, kFma}, {2, kFma}};
  EXPECT_EQ(got, want);
}

TEST(CudaConvCandidates, TheFallbacksFollowWhenTheHeuristicSupportsNothing) {
  const std::vector<ReportedConvAlgorithm> reported = {{5, false, kFma}, {7, false, kFma}};
  const std::vector<ConvCandidate> fallbacks = {{0, kFma}, {1, kFma}};
  EXPECT_EQ(conv_candidates(reported, true, kFma, fallbacks), fallbacks);
  EXPECT_EQ(conv_candidates({}, true, kFma, fallbacks), fallbacks);
}

TEST(CudaConvCandidates, SixteenBitKeepsTheReportedMathTypesAndOrder) {
  const std::vector<ReportedConvAlgorithm> reported = {
      {1, true, kTensorOp}, {1, true, kDefault}, {4, false, kTensorOp}, {0, true, kTensorOp}};
  const std::vector<ConvCandidate> fallbacks = {{0, kTensorOp}, {0, kDefault}, {1, kTensorOp}};
  const std::vector<ConvCandidate> want = {{1, kTensorOp}, {1, kDefault}, {0, kTensorOp}, {0, kDefault}};
  EXPECT_EQ(conv_candidates(reported, false, kFma, fallbacks), want);
}

TEST(CudaConvCandidates, TheWalkPassesOverRefusalsAndResumesAfterTheLastPick) {
  const std::vector<ConvCandidate> candidates = {{1, kFma}, {2, kFma}, {0, kFma}, {5, kFma}};
  std::vector<int> asked;
  auto accepts = [&](const ConvCandidate& c, size_t* bytes) {
    asked.push_back(c.algorithm);
    *bytes = static_cast<size_t>(c.algorithm) * 100;
    return c.algorithm != 1;  // the workspace query refuses algorithm 1
  };
  size_t next = 0, bytes = 0;
  auto first = next_accepted(candidates, &next, accepts, &bytes);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->algorithm, 2);
  EXPECT_EQ(bytes, 200u);
  EXPECT_EQ(next, 2u);
  // Algorithm 2 is then refused at launch: the walk goes on from 0, never back to 1 or 2.
  auto second = next_accepted(candidates, &next, accepts, &bytes);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->algorithm, 0);
  EXPECT_EQ(bytes, 0u);
  auto third = next_accepted(candidates, &next, accepts, &bytes);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->algorithm, 5);
  EXPECT_FALSE(next_accepted(candidates, &next, accepts, &bytes).has_value());
  EXPECT_EQ(asked, (std::vector<int>{1, 2, 0, 5}));
}

// After the pool could not give a workspace, only candidates needing less are taken; the others
// are passed over, and reported.
TEST(CudaConvCandidates, AWalkBoundedByARefusedWorkspaceTakesOnlySmallerOnes) {
  const std::vector<ConvCandidate> candidates = {{1, kFma}, {2, kFma}, {0, kFma}, {5, kFma}};
  const std::vector<size_t> workspace = {0, 4096, 8192, 100, 0, 0};  // by algorithm
  auto accepts = [&](const ConvCandidate& c, size_t* bytes) {
    *bytes = workspace[c.algorithm];
    return true;
  };
  std::vector<int> too_large;
  auto report = [&](const ConvCandidate& c, size_t bytes) {
    too_large.push_back(c.algorithm);
    EXPECT_EQ(bytes, workspace[c.algorithm]);
  };
  size_t next = 1, bytes = 0;  // algorithm 1 (4096 bytes) was chosen; the pool refused its workspace
  auto got = next_accepted(candidates, &next, accepts, &bytes, 4096, report);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->algorithm, 0);  // 2 needs 8192, 0 needs 0
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(too_large, (std::vector<int>{2}));
  // Bounded below every remaining candidate: none is left, each reported.
  too_large.clear();
  EXPECT_FALSE(next_accepted(candidates, &next, accepts, &bytes, 0, report).has_value());
  EXPECT_EQ(too_large, (std::vector<int>{5}));
  // Unbounded, a large workspace is taken as before.
  next = 1;
  got = next_accepted(candidates, &next, accepts, &bytes, kAnyWorkspace, report);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->algorithm, 2);
  EXPECT_EQ(bytes, 8192u);
}

TEST(CudaConvCandidates, AFailureOtherThanARefusalStopsTheWalk) {
  const std::vector<ConvCandidate> candidates = {{1, kFma}, {0, kFma}};
  size_t next = 0, bytes = 0;
  auto broken = [](const ConvCandidate&, size_t*) -> bool { throw std::runtime_error("CUDNN_STATUS_INTERNAL_ERROR"); };
  EXPECT_THROW(next_accepted(candidates, &next, broken, &bytes), std::runtime_error);
  EXPECT_EQ(next, 1u);
}

TEST(CudaConvCandidates, MessagesListEveryCandidate) {
  EXPECT_EQ(describe_candidates({{1, kFma}, {0, kTensorOp}}), "algorithm 1 (math 3), algorithm 0 (math 1)");
  EXPECT_EQ(describe_candidates({}), "none");
}

}  // namespace
}  // namespace gpuaccel::cuda
