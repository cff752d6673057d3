// Keras's Conv1D in C++ (cpp/nn/conv1d): Keras's kernel shape, output lengths for 'valid' and
// 'same' with strides, a forward pass against a hand-written loop, and the argument errors.
#include <gtest/gtest.h>

#include <vector>

#include "nn/conv1d.h"
#include "ops/shape_ops.h"
#include "test_helpers.h"

namespace gpuaccel::nn {
namespace {

using test::expect_error;
using test::make;
using test::read;

TEST(Conv1DLayer, ShapesWeightsAndForwardAgainstALoop) {
  Conv1D same("conv1d", 2, 3, 2, "same", 1);
  EXPECT_EQ(same.output_shape({{-1, 7, 3}}), (Shape{-1, 4, 2}));
  Conv1D layer("conv1d_1", 1, 2, 1, "valid", 1, "linear", false, "ones");
  EXPECT_EQ(layer.output_shape({{-1, 4, 2}}), (Shape{-1, 3, 1}));
  layer.build({{-1, 4, 2}});
  ASSERT_EQ(layer.weights().size(), 1u);
  EXPECT_EQ(layer.weights()[0].value.shape(), (Shape{2, 2, 1}));
  // Ones kernel: each output is the sum of two consecutive steps over both channels.
  const Tensor x = make({1, 2, 3, 4, 5, 6, 7, 8}, {1, 4, 2});
  EXPECT_EQ(read(contiguous(layer.call({x}, false))), (std::vector<float>{10, 18, 26}));
}

TEST(Conv1DLayer, ArgumentAndShapeErrors) {
  expect_error(ErrorCode::kInvalidArgument, "filters", [] { Conv1D("c", 0, 3, 1, "valid", 1); });
  expect_error(ErrorCode::kInvalidArgument, "padding", [] { Conv1D("c", 1, 3, 1, "full", 1); });
  Conv1D layer("c", 1, 5, 1, "valid", 1);
  expect_error(ErrorCode::kInvalidArgument, "<= 0", [&] {
    (void)layer.output_shape({{-1, 3, 2}});
  });
  expect_error(ErrorCode::kInvalidArgument, "ndim=3", [&] {
    (void)layer.output_shape({{-1, 3, 2, 1}});
  });
}

}  // namespace
}  // namespace gpuaccel::nn
