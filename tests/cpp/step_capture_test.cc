// The step-capture policy (train/step_capture_policy.h) against a fake capture-capable backend:
// warm-up, one capture per signature, replays, fallbacks that are logged, recorded in the
// profile and never retried, jit_compile=False never capturing; then the Trainer driving it
// (host counters advance on replays, blockers such as the loss-scale optimizer's host check).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend_interposer.h"
#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "optim/adam.h"
#include "optim/loss_scale_optimizer.h"
#include "optim/sgd.h"
#include "profiler/profiler.h"
#include "train/step_capture_policy.h"
#include "train/trainer.h"

#include "fake_capture_backend.h"
#include "scale_layer.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using train::JitCompile;
using train::StepCapturePolicy;
using train::StepRun;
using train::StepSignature;

StepSignature signature(int64_t batch) {
  StepSignature s;
  s.input_shapes = {{batch, 4}, {batch}};
  s.input_dtypes = {DType::kFloat32, DType::kInt64};
  s.host_scalars = {0.01};
  return s;
}

// A policy whose log lines are kept, and a step that counts its calls.
struct PolicyFixture {
  std::vector<std::string> log;
  int64_t step_calls = 0;
  int64_t undos = 0;
  std::unique_ptr<StepCapturePolicy> policy;
  explicit PolicyFixture(JitCompile mode)
      : policy(std::make_unique<StepCapturePolicy>(
            mode, [this](const std::string& line) { log.push_back(line); })) {}
  StepRun run(Backend& backend, const StepSignature& s, const std::string& blocker = "",
              const std::function<void()>& step = {}) {
    return policy->run(
        backend, s, blocker,
        [&] {
          ++step_calls;
          if (step) step();
        },
        [&] { ++undos; });
  }
};

TEST(StepCapturePolicy, WarmsUpCapturesOncePerSignatureThenReplays) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOn);
  std::vector<StepRun> runs;
  for (int i = 0; i < 5; ++i) runs.push_back(f.run(fake, signature(32)));
  EXPECT_EQ(runs, (std::vector<StepRun>{StepRun::kEager, StepRun::kCaptured, StepRun::kReplayed,
                                        StepRun::kReplayed, StepRun::kReplayed}));
  EXPECT_EQ(f.step_calls, 2);  // the warm-up and the captured one
  EXPECT_EQ(fake.begins, 1);
  EXPECT_EQ(fake.ends, 1);
  EXPECT_EQ(fake.replays, 4);  // the captured step's launch, then three replays

  // A second shape set (the epoch's last, smaller batch) gets its own warm-up and capture.
  EXPECT_EQ(f.run(fake, signature(8)), StepRun::kEager);
  EXPECT_EQ(f.run(fake, signature(8)), StepRun::kCaptured);
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kReplayed);
  EXPECT_EQ(f.run(fake, signature(8)), StepRun::kReplayed);
  EXPECT_EQ(fake.begins, 2);
  EXPECT_EQ(f.policy->captures(), 2);
  EXPECT_EQ(f.policy->graphs(), 2u);
  EXPECT_FALSE(f.policy->fell_back());
  EXPECT_TRUE(f.log.empty());

  // A changed weight address (or learning rate) is another signature: never a stale replay.
  StepSignature moved = signature(32);
  moved.state = {&fake};
  EXPECT_EQ(f.run(fake, moved), StepRun::kEager);
  f.policy.reset();
  EXPECT_EQ(fake.destroys, 2);  // every graph freed with the policy
}

TEST(StepCapturePolicy, FailedCaptureFallsBackOnceAndIsNotRetried) {
  test::FakeCaptureBackend fake;
  fake.fail_capture = true;
  PolicyFixture f(JitCompile::kAuto);
  std::vector<StepRun> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(f.run(fake, signature(32)));
  EXPECT_EQ(runs, std::vector<StepRun>(4, StepRun::kEager));
  EXPECT_EQ(fake.begins, 1);
  EXPECT_EQ(f.undos, 1);       // the failed attempt's host effects are undone...
  EXPECT_EQ(f.step_calls, 5);  // ...and the step rerun eagerly: 1 + (1 + 1) + 1 + 1
  EXPECT_NE(f.policy->fallback_reason().find("capture failed"), std::string::npos);
  EXPECT_NE(f.policy->fallback_reason().find("the fake refuses"), std::string::npos);
  ASSERT_EQ(f.log.size(), 1u);
  EXPECT_NE(f.log[0].find("runs eagerly"), std::string::npos) << f.log[0];
  EXPECT_EQ(f.run(fake, signature(8)), StepRun::kEager);  // nor for another shape
  EXPECT_EQ(fake.begins, 1);
}

TEST(StepCapturePolicy, AStepThatReadsTheHostCannotBeCaptured) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOn);
  auto reads_back = [&] {
    const Tensor t = test::make({1.0f}, {1});
    float host = 0;
    fake.copy_to_host(t.view(), &host);
  };
  EXPECT_EQ(f.run(fake, signature(32), "", reads_back), StepRun::kEager);
  EXPECT_EQ(f.run(fake, signature(32), "", reads_back), StepRun::kEager);
  EXPECT_NE(f.policy->fallback_reason().find("copy_to_host cannot be captured"), std::string::npos)
      << f.policy->fallback_reason();
  EXPECT_EQ(f.run(fake, signature(32), "", reads_back), StepRun::kEager);
  EXPECT_EQ(fake.begins, 1);
}

TEST(StepCapturePolicy, AWarmUpThatThrowsIsNotAWarmUp) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOn);
  EXPECT_THROW(f.run(fake, signature(32), "", [] { throw std::runtime_error("bad batch"); }),
               std::runtime_error);
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kEager);  // the real warm-up
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kCaptured);
  EXPECT_FALSE(f.policy->fell_back());
}

TEST(StepCapturePolicy, JitCompileOffNeverCaptures) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOff);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.run(fake, signature(32)), StepRun::kEager);
  EXPECT_EQ(fake.begins, 0);
  EXPECT_EQ(fake.replays, 0);
  EXPECT_EQ(f.step_calls, 4);
  EXPECT_FALSE(f.policy->fell_back());
  EXPECT_TRUE(f.log.empty());
}

TEST(StepCapturePolicy, AutoStaysQuietlyEagerWhereTheBackendCannotCapture) {
  Backend& cpu = cpu_backend();
  PolicyFixture automatic(JitCompile::kAuto);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(automatic.run(cpu, signature(32)), StepRun::kEager);
  EXPECT_FALSE(automatic.policy->fell_back());
  EXPECT_TRUE(automatic.log.empty());

  PolicyFixture forced(JitCompile::kOn);  // asked for: say why not, once
  for (int i = 0; i < 3; ++i) EXPECT_EQ(forced.run(cpu, signature(32)), StepRun::kEager);
  EXPECT_NE(forced.policy->fallback_reason().find("cannot capture graphs"), std::string::npos);
  EXPECT_EQ(forced.log.size(), 1u);
}

bool has_fallback_instant(const profiler::Trace& trace, const std::string& fragment) {
  for (size_t i = 0; i < trace.size(); ++i) {
    if (trace.strings[trace.name[i]] == "graph_capture_fallback" &&
        trace.strings[trace.stats[i]].find(fragment) != std::string::npos &&
        trace.start_ns[i] == trace.end_ns[i]) {
      return true;
    }
  }
  return false;
}

TEST(StepCapturePolicy, BlockerFallsBackAndShowsInTheProfile) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kAuto);
  profiler::start();
  EXPECT_EQ(f.run(fake, signature(32), "Dropout layer 'd' draws its random offset on the host"),
            StepRun::kEager);
  EXPECT_TRUE(has_fallback_instant(profiler::stop(), "Dropout layer 'd'"));
  EXPECT_EQ(fake.begins, 0);
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kEager);  // for good, even without the blocker
  EXPECT_EQ(fake.begins, 0);
  EXPECT_EQ(f.log.size(), 1u);
  // A later profile marks the eager steps with the reason too.
  profiler::start();
  f.run(fake, signature(32));
  EXPECT_TRUE(has_fallback_instant(profiler::stop(), "Dropout layer 'd'"));
}

TEST(StepCapturePolicy, StepsRunEagerlyWhileProfilingWithoutFallingBack) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOn);
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kEager);  // warm-up
  profiler::start();
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kEager);  // the trace shows every op
  profiler::stop();
  EXPECT_EQ(fake.begins, 0);
  EXPECT_FALSE(f.policy->fell_back());
  EXPECT_EQ(f.run(fake, signature(32)), StepRun::kCaptured);
}

TEST(StepCapturePolicy, EverChangingSignaturesStopCapturing) {
  test::FakeCaptureBackend fake;
  PolicyFixture f(JitCompile::kOn);
  for (int64_t batch = 1; batch <= int64_t(StepCapturePolicy::kMaxGraphs) + 1; ++batch) {
    f.run(fake, signature(batch));
  }
  EXPECT_NE(f.policy->fallback_reason().find("distinct step signatures"), std::string::npos);
  EXPECT_EQ(fake.begins, 0);  // each shape was seen once: warm-ups only
}

using test::ScaleLayer;

std::unique_ptr<train::Trainer> classifier(std::shared_ptr<optim::Optimizer> optimizer) {
  auto layer = std::make_shared<ScaleLayer>();
  layer->build({{-1, 3}});
  auto graph = std::make_shared<nn::LayerGraph>(1);
  graph->set_outputs({graph->add_node(layer, {0})});
  auto loss = std::make_shared<nn::Loss>(
      nn::LossConfig{nn::LossKind::kSparseCategoricalCrossentropy, /*from_logits=*/true});
  auto accuracy = std::make_shared<nn::Metric>("accuracy", nn::MetricKind::kSparseCategoricalAccuracy);
  return std::make_unique<train::Trainer>(graph, loss, std::move(optimizer),
                                          std::vector<nn::MetricPtr>{accuracy});
}

Tensor labels(const std::vector<int64_t>& v) {
  return from_host(v.data(), {int64_t(v.size())}, DType::kInt64, LogicalDevice{});
}

TEST(StepCaptureTrainer, SgdStepsAreCapturedOnceAndReplayedWithHostCountersAdvancing) {
  auto sgd = std::make_shared<optim::SGD>(0.1);
  auto trainer = classifier(sgd);
  trainer->set_jit_compile(JitCompile::kOn);
  test::FakeCaptureBackend fake;
  ScopedCpuBackendInterposer interpose(fake);
  const Tensor x = test::make({1, 0, 0, 0, 1, 0}, {2, 3});
  for (int i = 0; i < 5; ++i) trainer->train_step({x}, labels({0, 1}));
  EXPECT_EQ(fake.begins, 1);
  EXPECT_EQ(fake.replays, 4);
  EXPECT_EQ(trainer->capture_policy().captures(), 1);
  EXPECT_FALSE(trainer->capture_policy().fell_back()) << trainer->capture_policy().fallback_reason();
  // A replay runs no host code; the Trainer adds what the captured step counted.
  EXPECT_EQ(sgd->iterations(), 5);
  // A new learning rate is a new signature: warm-up and capture again, never a stale graph.
  sgd->set_learning_rate(0.05);
  trainer->train_step({x}, labels({0, 1}));
  trainer->train_step({x}, labels({0, 1}));
  EXPECT_EQ(fake.begins, 2);
  EXPECT_EQ(sgd->iterations(), 7);
}

TEST(StepCaptureTrainer, AdamIsCapturedItsStepCountLivesOnTheDevice) {
  auto adam = std::make_shared<optim::Adam>(0.01);
  auto trainer = classifier(adam);
  trainer->set_jit_compile(JitCompile::kAuto);
  test::FakeCaptureBackend fake;
  ScopedCpuBackendInterposer interpose(fake);
  const Tensor x = test::make({1, 0, 0, 0, 1, 0}, {2, 3});
  for (int i = 0; i < 4; ++i) trainer->train_step({x}, labels({0, 1}));
  EXPECT_FALSE(trainer->capture_policy().fell_back()) << trainer->capture_policy().fallback_reason();
  EXPECT_EQ(fake.begins, 1);
  EXPECT_EQ(fake.replays, 3);
  EXPECT_EQ(adam->iterations(), 4);
}

TEST(StepCaptureTrainer, LossScaleOptimizerFallsBackWithItsReasonAndCountsStayExact) {
  auto adam = std::make_shared<optim::Adam>(0.01);
  auto scaled = std::make_shared<optim::LossScaleOptimizer>(adam);
  auto trainer = classifier(scaled);
  trainer->set_jit_compile(JitCompile::kAuto);
  test::FakeCaptureBackend fake;
  ScopedCpuBackendInterposer interpose(fake);
  const Tensor x = test::make({1, 0, 0, 0, 1, 0}, {2, 3});
  for (int i = 0; i < 3; ++i) trainer->train_step({x}, labels({0, 1}));
  EXPECT_EQ(fake.begins, 0);
  EXPECT_NE(trainer->capture_policy().fallback_reason().find("LossScaleOptimizer checks"),
            std::string::npos)
      << trainer->capture_policy().fallback_reason();
  EXPECT_EQ(scaled->iterations(), 3);
  EXPECT_NEAR(trainer->results()[1].second, 1.0, 1e-7);
}

TEST(StepCaptureTrainer, JitCompileOffNeverCapturesAndAFailedCaptureUndoesItsCounts) {
  test::FakeCaptureBackend fake;
  ScopedCpuBackendInterposer interpose(fake);
  const Tensor x = test::make({1, 0, 0, 0, 1, 0}, {2, 3});

  auto off = classifier(std::make_shared<optim::SGD>(0.1));
  off->set_jit_compile(JitCompile::kOff);
  for (int i = 0; i < 3; ++i) off->train_step({x}, labels({0, 1}));
  EXPECT_EQ(fake.begins, 0);

  auto sgd = std::make_shared<optim::SGD>(0.1);
  auto failing = classifier(sgd);
  fake.fail_capture = true;
  for (int i = 0; i < 3; ++i) failing->train_step({x}, labels({0, 1}));
  EXPECT_EQ(fake.begins, 1);
  EXPECT_TRUE(failing->capture_policy().fell_back());
  // The failed attempt's count was undone, then the step rerun. (The fake also ran the
  // attempt's kernels, which a real stream capture does not: only counters are checked.)
  EXPECT_EQ(sgd->iterations(), 3);
}

}  // namespace
}  // namespace gpuaccel
