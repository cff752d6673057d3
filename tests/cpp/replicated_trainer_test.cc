// fit's data-parallel step (train/replicated_trainer.h) on the one-weight model: two replicas
// on a global batch give the weights one Trainer gets on the whole batch (SGD and Adam, even
// and uneven splits, a batch smaller than the replica count), the logged loss and metric are
// the global batch's, replicas stay identical, and a failing replica raises instead of hanging
// (and the next step works again).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "distribute/in_process_collective.h"
#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "optim/adam.h"
#include "ops/autograd.h"
#include "ops/shape_ops.h"
#include "optim/sgd.h"
#include "train/replicated_trainer.h"
#include "train/trainer.h"

#include "scale_layer.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::make;
using test::read;

struct Model {
  std::shared_ptr<test::ScaleLayer> layer = std::make_shared<test::ScaleLayer>();
  nn::LayerGraphPtr graph = std::make_shared<nn::LayerGraph>(1);
  Model() {
    layer->build({{-1, 1}});
    graph->set_outputs({graph->add_node(layer, {0})});
  }
  float w() const { return read(layer->weights()[0].value)[0]; }
};

std::shared_ptr<optim::Optimizer> make_optimizer(bool adam) {
  if (adam) return std::make_shared<optim::Adam>(0.05);
  return std::make_shared<optim::SGD>(0.02);
}

nn::LossPtr mse() { return std::make_shared<nn::Loss>(nn::LossConfig{nn::LossKind::kMeanSquaredError}); }
nn::MetricPtr mae() { return std::make_shared<nn::Metric>("mae", nn::MetricKind::kMeanAbsoluteError); }

struct Replicated {
  std::vector<Model> models;
  std::unique_ptr<train::ReplicatedTrainer> trainer;
  Replicated(int replicas, bool adam, train::AllReduceOptions options = {},
             std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : models(size_t(replicas)) {
    auto group = distribute::make_in_process_group(replicas, timeout);
    std::vector<train::ReplicatedTrainer::Replica> list;
    for (int r = 0; r < replicas; ++r) {
      list.push_back({models[r].graph, make_optimizer(adam), {mae()}, group[r]});
    }
    trainer = std::make_unique<train::ReplicatedTrainer>(std::move(list), mse(), 1, options);
  }
};

// x = 1..n, y = 3 x: the weight moves from 1 towards 3.
std::pair<Tensor, Tensor> batch(int n, float offset) {
  std::vector<float> x, y;
  for (int i = 0; i < n; ++i) {
    x.push_back(offset + float(i) / float(n));
    y.push_back(3 * x.back());
  }
  return {make(x, {n, 1}), make(y, {n, 1})};
}

// `overlap`: the all-reduce during the backward pass (the default) or after it (blocking).
void expect_matches_one_replica(bool adam, int replicas, int batch_size, bool overlap = true) {
  Model single;
  train::Trainer reference(single.graph, mse(), make_optimizer(adam), {mae()});
  Replicated many(replicas, adam, train::AllReduceOptions{overlap, 4});
  for (int step = 0; step < 10; ++step) {
    const auto [x, y] = batch(batch_size, 0.5f + 0.1f * float(step));
    reference.train_step({x}, y);
    many.trainer->train_step({x}, y);
    for (const Model& m : many.models) {
      EXPECT_NEAR(m.w(), single.w(), 1e-5) << "step " << step << (adam ? " adam" : " sgd");
      EXPECT_EQ(m.w(), many.models[0].w());  // identical updates: identical replicas
    }
  }
  EXPECT_NE(single.w(), 1.0f);  // it trained
  const auto expected = reference.results();
  const auto got = many.trainer->results();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].first, "mae");
  EXPECT_NEAR(got[0].second, expected[0].second, 1e-4 * (1 + expected[0].second));
  EXPECT_NEAR(got[1].second, expected[1].second, 1e-4 * (1 + expected[1].second));
  EXPECT_EQ(many.trainer->results_across_workers(), got);  // one process: the same
}

TEST(ReplicatedTrainer, TwoReplicasMatchOneOnTheGlobalBatchSgd) { expect_matches_one_replica(false, 2, 64); }
TEST(ReplicatedTrainer, TwoReplicasMatchOneOnTheGlobalBatchAdam) { expect_matches_one_replica(true, 2, 64); }
TEST(ReplicatedTrainer, UnevenSplitsStillMatch) { expect_matches_one_replica(true, 3, 7); }
TEST(ReplicatedTrainer, ABatchSmallerThanTheReplicaCountStillMatches) {
  expect_matches_one_replica(false, 3, 2);
}
TEST(ReplicatedTrainer, TheBlockingAllReduceMatchesToo) {
  expect_matches_one_replica(false, 2, 64, /*overlap=*/false);
  expect_matches_one_replica(true, 3, 2, /*overlap=*/false);
}

TEST(ReplicatedTrainer, SyncWeightsCopiesReplicaZero) {
  Replicated many(2, false);
  copy_into(make({5}, {1}), many.models[0].layer->weights()[0].value);
  many.trainer->sync_weights();
  EXPECT_EQ(many.models[1].w(), 5.0f);
}

// The scale layer, failing on a negative input: one replica's rows can make it throw while
// the other replica has already reached the all-reduce.
class FailOnNegative : public test::ScaleLayer {
 public:
  Tensor call(const std::vector<Tensor>& inputs, bool training) override {
    for (float v : test::read(inputs.at(0))) {
      if (v < 0) throw std::runtime_error("negative input");
    }
    return ScaleLayer::call(inputs, training);
  }
};

void expect_a_failing_replica_raises_without_waiting_for_the_timeout(bool overlap) {
  SCOPED_TRACE(overlap ? "overlapped all-reduce" : "blocking all-reduce");
  auto group = distribute::make_in_process_group(2, std::chrono::seconds(60));
  std::vector<train::ReplicatedTrainer::Replica> list;
  std::vector<nn::LayerGraphPtr> replica_graphs;
  for (int r = 0; r < 2; ++r) {
    auto layer = std::make_shared<FailOnNegative>();
    layer->build({{-1, 1}});
    auto graph = std::make_shared<nn::LayerGraph>(1);
    graph->set_outputs({graph->add_node(layer, {0})});
    list.push_back({graph, make_optimizer(false), {}, group[r]});
    replica_graphs.push_back(graph);
  }
  train::ReplicatedTrainer trainer(std::move(list), mse(), 1, train::AllReduceOptions{overlap, 4});
  const auto start = std::chrono::steady_clock::now();
  // Replica 1 gets the second row, which is negative.
  try {
    trainer.train_step({make({1, -2}, {2, 1})}, make({1, 2}, {2, 1}));
    FAIL() << "expected the replica's error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "negative input");  // the failing replica's own error, rank 1's
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  test::expect_error(ErrorCode::kInvalidArgument, "labels", [&] {
    trainer.train_step({make({1, 2}, {2, 1})}, make({1, 2, 3}, {3, 1}));
  });
  // The group recovered: the next good step trains both replicas alike.
  trainer.train_step({make({1, 2}, {2, 1})}, make({3, 6}, {2, 1}));
  const auto weight = [&](int r) {
    return test::read(replica_graphs[r]->layers()[0]->weights()[0].value)[0];
  };
  EXPECT_NE(weight(0), 1.0f);
  EXPECT_EQ(weight(0), weight(1));
}

TEST(ReplicatedTrainer, AFailingReplicaRaisesWithoutWaitingForTheTimeout) {
  expect_a_failing_replica_raises_without_waiting_for_the_timeout(/*overlap=*/true);
  expect_a_failing_replica_raises_without_waiting_for_the_timeout(/*overlap=*/false);
}

// The identity, whose backward throws when its input had a negative value: a replica that
// fails in the middle of its backward pass, after its last weight's bucket has started.
class FailInBackward : public nn::Layer {
 public:
  FailInBackward() : Layer("fail_in_backward") {}
  const char* type() const override { return "FailInBackward"; }
  Shape output_shape(const nn::ShapeList& shapes) const override { return shapes.at(0); }
  Tensor call(const std::vector<Tensor>& inputs, bool) override {
    const Tensor& x = inputs.at(0);
    bool negative = false;
    for (float v : test::read(x)) negative = negative || v < 0;
    Tensor out;
    {
      GradModeGuard off(false);
      out = clone(x);
    }
    record("FailInBackward", {x}, {out}, [negative](const std::vector<Tensor>& grads) {
      if (negative) throw std::runtime_error("negative input, in backward");
      return grads;
    });
    return out;
  }

 protected:
  void do_build(const nn::ShapeList&) override {}
};

TEST(ReplicatedTrainer, AReplicaFailingInItsBackwardPassRaisesWhileBucketsAreInFlight) {
  auto group = distribute::make_in_process_group(2, std::chrono::seconds(60));
  std::vector<train::ReplicatedTrainer::Replica> list;
  std::vector<nn::LayerGraphPtr> graphs;
  for (int r = 0; r < 2; ++r) {
    // scale (w1) -> fail_in_backward -> scale (w2): w2's bucket starts before the failure.
    auto graph = std::make_shared<nn::LayerGraph>(1);
    auto first = std::make_shared<test::ScaleLayer>("first");
    auto middle = std::make_shared<FailInBackward>();
    auto last = std::make_shared<test::ScaleLayer>("last");
    for (const nn::LayerPtr& layer : std::vector<nn::LayerPtr>{first, middle, last}) layer->build({{-1, 1}});
    const int a = graph->add_node(first, {0});
    const int b = graph->add_node(middle, {a});
    graph->set_outputs({graph->add_node(last, {b})});
    list.push_back({graph, make_optimizer(false), {}, group[r]});
    graphs.push_back(graph);
  }
  train::ReplicatedTrainer trainer(std::move(list), mse(), 1, train::AllReduceOptions{true, 4});
  const auto start = std::chrono::steady_clock::now();
  try {
    trainer.train_step({make({1, -2}, {2, 1})}, make({1, 2}, {2, 1}));  // replica 1 fails
    FAIL() << "expected the replica's error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "negative input, in backward");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  trainer.train_step({make({1, 2}, {2, 1})}, make({3, 6}, {2, 1}));  // the group recovered
  for (size_t w = 0; w < 2; ++w) {
    const float w0 = test::read(graphs[0]->trainable_weights()[w])[0];
    EXPECT_EQ(w0, test::read(graphs[1]->trainable_weights()[w])[0]) << w;
  }
}

}  // namespace
}  // namespace gpuaccel
