// The shape-and-merge Keras layers (cpp/nn/reshape, rescaling, merging) and the concat op they
// use: output shapes with unknown (-1) sizes, forward values against hand-written results,
// concat's gradient (each input gets its slice), and the typed errors.
#include <gtest/gtest.h>

#include <vector>

#include "nn/merging.h"
#include "nn/rescaling.h"
#include "nn/reshape.h"
#include "ops/autograd.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel::nn {
namespace {

using test::expect_error;
using test::make;
using test::read;

TEST(ConcatOp, JoinsAlongAnAxisAndSplitsTheGradient) {
  Tensor a = make({1, 2, 3, 4}, {2, 2});
  Tensor b = make({5, 6}, {2, 1});
  a.impl()->requires_grad = true;
  b.impl()->requires_grad = true;
  const Tensor c = concat({a, b}, -1);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(read(c), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  const Tensor seed = make({10, 20, 30, 40, 50, 60}, {2, 3});
  const auto grads = compute_gradients({c}, {seed}, {a, b});
  EXPECT_EQ(read(grads[0]), (std::vector<float>{10, 20, 40, 50}));
  EXPECT_EQ(read(grads[1]), (std::vector<float>{30, 60}));
  expect_error(ErrorCode::kInvalidArgument, "input 1 has shape", [&] {
    concat({a, make({1, 2, 3}, {3, 1})}, 1);
  });
  expect_error(ErrorCode::kInvalidArgument, "non-empty", [] { concat({}, 0); });
}

TEST(ReshapeLayer, InfersTheMissingSizeAndRejectsBadTargets) {
  Reshape layer("reshape", {3, -1});
  EXPECT_EQ(layer.output_shape({{-1, 2, 3}}), (Shape{-1, 3, 2}));
  EXPECT_EQ(layer.output_shape({{-1, -1, 3}}), (Shape{-1, 3, -1}));
  layer.build({{-1, 6}});
  const Tensor y = layer.call({make({1, 2, 3, 4, 5, 6}, {1, 6})}, false);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 2}));
  expect_error(ErrorCode::kInvalidArgument, "not divisible", [&] {
    (void)layer.output_shape({{-1, 4}});
  });
  expect_error(ErrorCode::kInvalidArgument, "at most one -1", [] { Reshape("r", {-1, -1}); });
}

TEST(RescalingLayer, ScalesAndOffsets) {
  Rescaling layer("rescaling", 0.5, -1.0);
  layer.build({{-1, 2}});
  EXPECT_EQ(read(layer.call({make({2, 4}, {1, 2})}, false)), (std::vector<float>{0, 1}));
}

TEST(MergingLayers, AddAndConcatenateShapesValuesAndErrors) {
  Add add("add");
  EXPECT_EQ(add.output_shape({{-1, 3}, {-1, 3}}), (Shape{-1, 3}));
  add.build({{-1, 2}, {-1, 2}});
  EXPECT_EQ(read(add.call({make({1, 2}, {1, 2}), make({3, 4}, {1, 2})}, false)),
            (std::vector<float>{4, 6}));
  expect_error(ErrorCode::kInvalidArgument, "same shape", [&] {
    (void)add.output_shape({{-1, 3}, {-1, 4}});
  });
  expect_error(ErrorCode::kInvalidArgument, "at least 2 inputs", [&] {
    (void)add.output_shape({{-1, 3}});
  });
  Concatenate cat("concatenate", -1);
  EXPECT_EQ(cat.output_shape({{-1, 2, 3}, {-1, 2, 4}}), (Shape{-1, 2, 7}));
  EXPECT_EQ(cat.output_shape({{-1, 2, -1}, {-1, 2, 4}}), (Shape{-1, 2, -1}));
  expect_error(ErrorCode::kInvalidArgument, "except for the concatenation axis", [&] {
    (void)cat.output_shape({{-1, 2, 3}, {-1, 3, 3}});
  });
  Concatenate batch_axis("bad", 0);
  expect_error(ErrorCode::kInvalidArgument, "batch axis", [&] {
    (void)batch_axis.output_shape({{-1, 2}, {-1, 2}});
  });
}

}  // namespace
}  // namespace gpuaccel::nn
