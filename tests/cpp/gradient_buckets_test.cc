// The bucket plan of the overlapped all-reduce (distribute/gradient_buckets.h): buckets fill
// from the last weight backwards up to the byte threshold, start strictly in bucket order
// whatever order gradients arrive in, a gradient that never arrives (an unused weight) is
// marked by mark_rest_ready so its bucket still starts, and misuse is a typed error.
#include <gtest/gtest.h>

#include <vector>

#include "distribute/gradient_buckets.h"
#include "ops/creation.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using distribute::GradientBuckets;

std::vector<Tensor> params_of_sizes(const std::vector<int64_t>& elements) {
  std::vector<Tensor> out;
  for (int64_t n : elements) out.push_back(zeros({n}, DType::kFloat32, LogicalDevice{}));
  return out;
}

TEST(GradientBuckets, FillFromTheLastWeightUpToTheThreshold) {
  // float32: 40, 400, 200, 120, 80 bytes; threshold 200 bytes.
  GradientBuckets plan(params_of_sizes({10, 100, 50, 30, 20}), 200);
  ASSERT_EQ(plan.bucket_count(), 4u);
  EXPECT_EQ(plan.bucket(0), (std::vector<size_t>{4, 3}));  // 80 + 120 = 200: full
  EXPECT_EQ(plan.bucket(1), (std::vector<size_t>{2}));     // 200 on its own
  EXPECT_EQ(plan.bucket(2), (std::vector<size_t>{1}));     // larger than the threshold
  EXPECT_EQ(plan.bucket(3), (std::vector<size_t>{0}));     // the rest
  EXPECT_EQ(plan.bucket_of(3), 0u);
  EXPECT_EQ(plan.bucket_of(0), 3u);
}

TEST(GradientBuckets, OneBucketWhenEverythingFits) {
  GradientBuckets plan(params_of_sizes({3, 4, 5}), size_t(1) << 20);
  ASSERT_EQ(plan.bucket_count(), 1u);
  EXPECT_EQ(plan.bucket(0), (std::vector<size_t>{2, 1, 0}));
  EXPECT_TRUE(GradientBuckets(params_of_sizes({}), 8).all_started());  // no weights: nothing to do
}

TEST(GradientBuckets, BucketsStartInOrderWhateverOrderGradientsArrive) {
  GradientBuckets plan(params_of_sizes({10, 100, 50, 30, 20}), 200);
  EXPECT_TRUE(plan.mark_ready(2).empty());  // bucket 1 is complete, but bucket 0 is not
  EXPECT_TRUE(plan.mark_ready(4).empty());
  EXPECT_EQ(plan.mark_ready(3), (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(plan.mark_ready(0).empty());  // bucket 3 waits for bucket 2
  EXPECT_EQ(plan.mark_ready(1), (std::vector<size_t>{2, 3}));
  EXPECT_TRUE(plan.all_started());
  plan.reset();  // the next step starts from nothing
  EXPECT_FALSE(plan.all_started());
  EXPECT_FALSE(plan.ready(4));
  EXPECT_EQ(plan.mark_ready(4), std::vector<size_t>{});
}

TEST(GradientBuckets, AGradientThatNeverArrivesIsMarkedAtTheEnd) {
  GradientBuckets plan(params_of_sizes({10, 100, 50, 30, 20}), 200);
  EXPECT_TRUE(plan.mark_ready(4).empty());  // weight 3 (bucket 0) is unused this step
  EXPECT_TRUE(plan.mark_ready(2).empty());
  EXPECT_TRUE(plan.mark_ready(1).empty());
  EXPECT_TRUE(plan.mark_ready(0).empty());
  EXPECT_FALSE(plan.ready(3));
  EXPECT_EQ(plan.mark_rest_ready(), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(plan.ready(3));
  EXPECT_TRUE(plan.all_started());
  EXPECT_TRUE(plan.mark_rest_ready().empty());  // nothing left
}

TEST(GradientBuckets, MatchesOnlyTheSameShapesAndDtypes) {
  const auto params = params_of_sizes({3, 4});
  GradientBuckets plan(params, 8);
  EXPECT_TRUE(plan.matches(params_of_sizes({3, 4})));
  EXPECT_FALSE(plan.matches(params_of_sizes({3, 5})));
  EXPECT_FALSE(plan.matches(params_of_sizes({3})));
  EXPECT_FALSE(plan.matches({params[0], zeros({4}, DType::kFloat16, LogicalDevice{})}));
}

TEST(GradientBuckets, MisuseIsATypedError) {
  test::expect_error(ErrorCode::kValue, "bucket_bytes must be > 0",
                     [] { GradientBuckets(params_of_sizes({1}), 0); });
  GradientBuckets plan(params_of_sizes({1, 2}), 4);
  plan.mark_ready(1);
  test::expect_error(ErrorCode::kInternal, "reported twice", [&] { plan.mark_ready(1); });
  test::expect_error(ErrorCode::kInternal, "there are 2 weights", [&] { plan.mark_ready(2); });
}

}  // namespace
}  // namespace gpuaccel
