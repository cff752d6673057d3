// The training core without the Keras layers: losses against closed forms, metrics' running
// means, the layer graph's wiring and errors, the Trainer fitting a one-weight model with
// plain SGD (each step checked against the update written out by hand), and the sync-free step:
// a counting backend proves steps copy nothing to the host and results() reads once.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "backends/backend_interposer.h"
#include "core/errors.h"
#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "train/trainer.h"

#include "counting_backend.h"
#include "scale_layer.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

LogicalDevice cpu() { return creation_device("Const", DeviceSpec{DeviceType::kCPU, 0}); }

Tensor host(const std::vector<float>& values, const Shape& shape) {
  return from_host(values.data(), shape, DType::kFloat32, cpu());
}

Tensor host_ids(const std::vector<int64_t>& values) {
  return from_host(values.data(), {int64_t(values.size())}, DType::kInt64, cpu());
}

float at(const Tensor& t, int64_t i) { return static_cast<const float*>(t.data())[i]; }

using test::ScaleLayer;

TEST(TrainingLoss, SparseCrossentropyFromLogitsMatchesClosedForm) {
  nn::Loss loss({nn::LossKind::kSparseCategoricalCrossentropy, true, 0.0});
  const Tensor logits = host({1, 2, 3, 0, 0, 0}, {2, 3});
  const Tensor value = loss(host_ids({2, 0}), logits);
  const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const double row1 = std::log(3.0);
  EXPECT_NEAR(nn::scalar_value(value), (row0 + row1) / 2, 1e-5);  // float32 log-sum-exp
}

TEST(TrainingLoss, ProbabilitiesAreClippedSoSaturationStaysFinite) {
  nn::Loss loss({nn::LossKind::kSparseCategoricalCrossentropy, false, 0.0});
  const Tensor value = loss(host_ids({1}), host({1, 0}, {1, 2}));
  EXPECT_NEAR(nn::scalar_value(value), -std::log(1e-7), 1e-3);
}

TEST(TrainingLoss, BinaryFromLogitsIsStableForLargeLogits) {
  nn::Loss loss({nn::LossKind::kBinaryCrossentropy, true, 0.0});
  const Tensor value = loss(host({0, 1}, {2, 1}), host({100, -100}, {2, 1}));
  EXPECT_NEAR(nn::scalar_value(value), 100.0, 1e-3);
}

TEST(TrainingLoss, ShapeErrorsNameBothShapes) {
  nn::Loss loss({nn::LossKind::kCategoricalCrossentropy, true, 0.0});
  try {
    loss(host({1, 0}, {1, 2}), host({1, 2, 3}, {1, 3}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("(1, 2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(1, 3)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(nn::Loss({nn::LossKind::kBinaryCrossentropy, false, 1.5}), Error);
}

TEST(TrainingMetric, RunningMeanOverUnevenBatches) {
  nn::Metric metric("accuracy", nn::MetricKind::kSparseCategoricalAccuracy);
  metric.update(host_ids({0, 1}), host({0.9f, 0.1f, 0.8f, 0.2f}, {2, 2}));  // 1 of 2
  metric.update(host_ids({1}), host({0.3f, 0.7f}, {1, 2}));                 // 1 of 1
  EXPECT_DOUBLE_EQ(metric.result(), 2.0 / 3.0);
  metric.reset();
  EXPECT_DOUBLE_EQ(metric.result(), 0.0);
}

TEST(TrainingGraph, RejectsForwardReferencesAndMissingOutputs) {
  nn::LayerGraph graph(1);
  auto layer = std::make_shared<ScaleLayer>("scale");
  EXPECT_THROW(graph.add_node(layer, {1}), Error);
  EXPECT_THROW(graph.add_node(layer, {}), Error);
  const int out = graph.add_node(layer, {0});
  EXPECT_EQ(out, 1);
  layer->build({{-1, 1}});
  EXPECT_THROW(graph.forward({host({1}, {1, 1})}, false), Error);  // no outputs yet
  graph.set_outputs({out});
  EXPECT_THROW(graph.forward({}, false), Error);  // wrong input count
}

TEST(TrainingGraph, SharedLayerRunsTwiceWithOneWeight) {
  nn::LayerGraph graph(1);
  auto layer = std::make_shared<ScaleLayer>("scale");
  layer->build({{-1, 1}});
  static_cast<float*>(layer->weights()[0].value.data())[0] = 3.0f;
  graph.set_outputs({graph.add_node(layer, {graph.add_node(layer, {0})})});
  EXPECT_EQ(graph.layers().size(), 1u);
  EXPECT_EQ(graph.trainable_weights().size(), 1u);
  const Tensor y = graph.forward({host({2}, {1, 1})}, false)[0];
  EXPECT_FLOAT_EQ(at(y, 0), 18.0f);
}

// y = w x with one weight (1 at first), a mean squared error and a mean absolute error metric,
// trained by plain SGD at `learning_rate`.
struct ScaleRegressionFixture {
  std::shared_ptr<ScaleLayer> layer = std::make_shared<ScaleLayer>("scale");
  std::unique_ptr<train::Trainer> trainer;
  explicit ScaleRegressionFixture(double learning_rate) {
    layer->build({{-1, 1}});
    auto graph = std::make_shared<nn::LayerGraph>(1);
    graph->set_outputs({graph->add_node(layer, {0})});
    auto loss = std::make_shared<nn::Loss>(nn::LossConfig{nn::LossKind::kMeanSquaredError});
    auto metric = std::make_shared<nn::Metric>("mae", nn::MetricKind::kMeanAbsoluteError);
    trainer = std::make_unique<train::Trainer>(graph, loss,
                                               std::make_shared<optim::SGD>(learning_rate),
                                               std::vector<nn::MetricPtr>{metric});
  }
};

TEST(TrainingTrainer, SgdStepsFollowTheHandWrittenUpdate) {
  ScaleRegressionFixture f(0.1);
  train::Trainer& trainer = *f.trainer;
  const std::shared_ptr<ScaleLayer>& layer = f.layer;
  // loss = mean((w x - y)^2) over x = [1, 2], y = [2, 4]; dL/dw = mean(2 (w x - y) x).
  const Tensor x = host({1, 2}, {2, 1});
  const Tensor y = host({2, 4}, {2, 1});
  double w = 1.0;
  for (int step = 0; step < 3; ++step) {
    const double expected_loss = ((w - 2) * (w - 2) + (2 * w - 4) * (2 * w - 4)) / 2;
    const double grad = (2 * (w - 2) * 1 + 2 * (2 * w - 4) * 2) / 2;
    EXPECT_NEAR(nn::scalar_value(trainer.train_step({x}, y)), expected_loss, 1e-5);
    w -= 0.1 * grad;
    EXPECT_NEAR(at(layer->weights()[0].value, 0), w, 1e-5);
  }
  const auto results = trainer.results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].first, "loss");
  EXPECT_EQ(results[1].first, "mae");
  trainer.reset_metrics();
  EXPECT_NEAR(nn::scalar_value(trainer.test_step({x}, y)), ((w - 2) * (w - 2) + (2 * w - 4) * (2 * w - 4)) / 2, 1e-5);
  EXPECT_NEAR(at(layer->weights()[0].value, 0), w, 1e-6);  // evaluation does not update
  EXPECT_THROW(trainer.train_step({x}, host({1, 2, 3}, {3, 1})), Error);  // batch mismatch
}

TEST(TrainingTrainer, EmptyBatchesLeaveTheLossMeanAlone) {
  // An empty batch's loss is a mean over nothing (NaN); weighted by its 0 rows it must add
  // nothing, as in Keras, instead of making the epoch's loss NaN.
  ScaleRegressionFixture f(0.0);
  train::Trainer& trainer = *f.trainer;
  const Tensor x = host({1, 2}, {2, 1});
  const Tensor y = host({2, 5}, {2, 1});  // w = 1: errors 1 and 3
  const Tensor none = host({}, {0, 1});
  trainer.test_step({none}, none);
  trainer.test_step({x}, y);
  trainer.train_step({none}, none);
  const auto results = trainer.results();
  EXPECT_NEAR(results[0].second, (1.0 + 9.0) / 2, 1e-6);
  EXPECT_NEAR(results[1].second, (1.0 + 3.0) / 2, 1e-6);
}

// Three-class logits x * w from (N, 3) inputs, so a sparse crossentropy checks its labels.
struct ClassifierFixture {
  std::shared_ptr<ScaleLayer> layer = std::make_shared<ScaleLayer>("scale");
  std::shared_ptr<nn::Metric> accuracy =
      std::make_shared<nn::Metric>("accuracy", nn::MetricKind::kSparseCategoricalAccuracy);
  std::unique_ptr<train::Trainer> trainer;
  ClassifierFixture() {
    layer->build({{-1, 3}});
    auto graph = std::make_shared<nn::LayerGraph>(1);
    graph->set_outputs({graph->add_node(layer, {0})});
    auto loss = std::make_shared<nn::Loss>(
        nn::LossConfig{nn::LossKind::kSparseCategoricalCrossentropy, /*from_logits=*/true});
    trainer = std::make_unique<train::Trainer>(graph, loss, std::make_shared<optim::Adam>(0.01),
                                               std::vector<nn::MetricPtr>{accuracy});
  }
};

TEST(TrainingTrainer, StepsCopyNothingToTheHostAndResultsReadOnce) {
  ClassifierFixture f;
  const Tensor x = host({3, 1, 0, 0, 2, 1, 1, 0, 4, 2, 2, 0}, {4, 3});
  const Tensor y = host_ids({0, 1, 2, 1});  // argmax of the rows: 0, 1, 2, 0 -> accuracy 3/4
  std::vector<Tensor> losses;
  test::CountingBackend counting;
  {
    ScopedCpuBackendInterposer interpose(counting);
    for (int i = 0; i < 3; ++i) losses.push_back(f.trainer->train_step({x}, y));
    EXPECT_EQ(counting.copies_to_host, 0);
    EXPECT_EQ(counting.synchronizes, 0);
    EXPECT_EQ(f.trainer->host_reads(), 0);
    const auto results = f.trainer->results();
    EXPECT_EQ(counting.copies_to_host, 1);  // loss, accuracy and the label check in one read
    EXPECT_EQ(counting.synchronizes, 0);
    EXPECT_EQ(f.trainer->host_reads(), 1);
    ASSERT_EQ(results.size(), 2u);
    double mean_loss = 0;
    for (const Tensor& l : losses) mean_loss += nn::scalar_value(l) / 3;
    EXPECT_NEAR(results[0].second, mean_loss, 1e-6);
    // The weight is a positive scalar, so every step's argmax is the row's: 3 of 4 right.
    EXPECT_NEAR(results[1].second, 0.75, 1e-7);

    f.trainer->reset_metrics();
    const int64_t before = counting.copies_to_host;
    f.trainer->test_step({x}, y);
    f.trainer->test_step({x}, y);
    EXPECT_EQ(counting.copies_to_host, before);
    EXPECT_EQ(counting.synchronizes, 0);
    EXPECT_NEAR(f.trainer->results()[1].second, 0.75, 1e-7);
    EXPECT_EQ(counting.copies_to_host, before + 1);
  }
}

TEST(TrainingTrainer, ResultsBeforeAnyStepReadNothing) {
  ClassifierFixture f;
  test::CountingBackend counting;
  ScopedCpuBackendInterposer interpose(counting);
  const auto results = f.trainer->results();
  EXPECT_EQ(counting.copies_to_host, 0);
  EXPECT_EQ(results[0].second, 0.0);
  EXPECT_EQ(f.trainer->host_reads(), 0);
}

TEST(TrainingTrainer, BadLabelInsideAStepRaisesAtTheNextRead) {
  ClassifierFixture f;
  const Tensor x = host({1, 0, 0, 0, 1, 0}, {2, 3});
  test::CountingBackend counting;
  ScopedCpuBackendInterposer interpose(counting);
  f.trainer->train_step({x}, host_ids({0, 1}));
  EXPECT_NO_THROW(f.trainer->train_step({x}, host_ids({0, 5})));  // checked on the device
  f.trainer->train_step({x}, host_ids({2, 1}));
  EXPECT_EQ(counting.copies_to_host, 0);
  // The same text as the eager check's (the range covers every batch since the last read).
  test::expect_error(ErrorCode::kInvalidArgument,
                     "[SparseSoftmaxCrossEntropyWithLogits] labels must be in [0, 3), got values "
                     "from 0 to 5",
                     [&] { f.trainer->results(); });
  EXPECT_EQ(counting.copies_to_host, 1);
  // Raised once: the next read sees only what came after.
  f.trainer->test_step({x}, host_ids({-1, 0}));
  test::expect_error(ErrorCode::kInvalidArgument, "got values from -1 to 0",
                     [&] { f.trainer->results(); });
  EXPECT_NO_THROW(f.trainer->results());
  // Outside a step the loss still checks at once.
  nn::Loss loss({nn::LossKind::kSparseCategoricalCrossentropy, true, 0.0});
  test::expect_error(ErrorCode::kInvalidArgument, "labels must be in [0, 3)",
                     [&] { loss(host_ids({0, 3}), x); });
}

TEST(TrainingMetric, UpdateCopiesNothingAndResultReadsOnce) {
  nn::Metric metric("mae", nn::MetricKind::kMeanAbsoluteError);
  test::CountingBackend counting;
  ScopedCpuBackendInterposer interpose(counting);
  metric.update(host({1, 2}, {2}), host({1.5f, 2.5f}, {2}));
  metric.update(host({0}, {1}), host({2}, {1}));
  EXPECT_EQ(counting.copies_to_host, 0);
  EXPECT_NEAR(metric.result(), (0.5 + 0.5 + 2.0) / 3, 1e-7);
  EXPECT_EQ(counting.copies_to_host, 1);
  const Tensor total = metric.total();
  metric.reset();
  EXPECT_EQ(metric.total().impl(), total.impl());  // zeroed in place, storage kept
  EXPECT_EQ(metric.result(), 0.0);
  EXPECT_EQ(counting.copies_to_host, 1);
}

}  // namespace
}  // namespace gpuaccel
