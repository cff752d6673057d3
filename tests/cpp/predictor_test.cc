// The Predictor (train/predictor.h): predict's step needs no loss or optimizer, runs the graph's
// inference forward, and never hands back a tensor that shares memory with its input batch
// (on a GPU that batch is an upload slot, refilled two batches later).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/errors.h"
#include "nn/layer_graph.h"
#include "train/predictor.h"

#include "scale_layer.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::make;
using test::ScaleLayer;
using test::read;

TEST(Predictor, RunsTheForwardPassWithoutACompiledTrainer) {
  auto layer = std::make_shared<ScaleLayer>("scale");
  layer->build({{-1, 1}});
  static_cast<float*>(layer->weights()[0].value.data())[0] = 3.0f;
  auto graph = std::make_shared<nn::LayerGraph>(1);
  graph->set_outputs({graph->add_node(layer, {0})});
  train::Predictor predictor(graph);
  for (int step = 0; step < 3; ++step) {
    const std::vector<Tensor> out = predictor.predict_step({make({1, 2, float(step)}, {3, 1})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(read(out[0]), (std::vector<float>{3, 6, 3.0f * float(step)}));
  }
  EXPECT_EQ(predictor.batches().copy_stream_uploads(), 0);  // a CPU model: nothing to upload
  test::expect_error(ErrorCode::kInvalidArgument, "inputs must have a batch dimension",
                     [&] { predictor.predict_step({}); });
}

TEST(Predictor, AnOutputThatPassesTheInputThroughIsItsOwnCopy) {
  auto graph = std::make_shared<nn::LayerGraph>(1);
  graph->set_outputs({0});  // the model's output is its input
  train::Predictor predictor(graph);
  const Tensor x = make({1, 2, 3}, {3});
  const std::vector<Tensor> out = predictor.predict_step({x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].storage(), x.storage());
  EXPECT_EQ(read(out[0]), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace gpuaccel
