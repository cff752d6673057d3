// Tests of optim::LossScaleOptimizer (optim/loss_scale_optimizer.h): the dynamic scale's state
// machine over a scripted gradient sequence with injected inf/NaN (against an independent
// scalar model of Keras 3's rules), the fused unscale against "divide, then update" with a plain
// optimizer, clipping seeing the unscaled gradient, the finite check on every gradient dtype and
// on strided views, and the argument errors. The comparison with real Keras is in
// tests/python/test_loss_scale.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/errors.h"
#include "ops/creation.h"
#include "ops/finite_check.h"
#include "ops/shape_ops.h"
#include "optim/adam.h"
#include "optim/loss_scale_optimizer.h"
#include "optim/sgd.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

using test::expect_error;
using test::make;
using test::read;

TEST(LossScaleFinite, EveryDtypeAndStridedViews) {
  const std::vector<float> ok = {1.0f, -2.5f, 0.0f, 65000.0f, 1e-8f, -0.0f};
  EXPECT_TRUE(optim::all_finite(make(ok, {6})));
  for (float bad : {kInf, -kInf, kNaN}) {
    std::vector<float> v = ok;
    v[3] = bad;
    const Tensor t = make(v, {6});
    EXPECT_FALSE(optim::all_finite(t)) << bad;
    EXPECT_FALSE(optim::all_finite(cast(t, DType::kFloat16))) << bad;
    EXPECT_FALSE(optim::all_finite(cast(t, DType::kBFloat16))) << bad;
  }
  EXPECT_TRUE(optim::all_finite(cast(make(ok, {6}), DType::kFloat16)));
  EXPECT_TRUE(optim::all_finite(cast(make(ok, {6}), DType::kBFloat16)));
  // A float32 value beyond float16's range becomes inf when cast: the check must see it.
  EXPECT_FALSE(optim::all_finite(cast(make({70000.0f}, {1}), DType::kFloat16)));
  // Large enough for the OpenMP path, the bad element last.
  std::vector<float> big(200000, 0.5f);
  EXPECT_TRUE(optim::all_finite(make(big, {200000})));
  big.back() = kNaN;
  EXPECT_FALSE(optim::all_finite(make(big, {200000})));
  // A transposed (non-contiguous) view: the inf is still found.
  const Tensor m = make({1, 2, 3, kInf, 5, 6}, {2, 3});
  EXPECT_FALSE(optim::all_finite(transpose(m, 0, 1)));
  EXPECT_TRUE(optim::all_finite(transpose(make({1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1)));
}

// One any_nonfinite call over a whole gradient list: every dtype, empty and integer tensors
// skipped, the bad element in any tensor of the list, and the flag overwritten (0 after 1).
TEST(LossScaleFinite, OneCheckOverAllGradients) {
  const LogicalDevice cpu;
  const Tensor flag = any_nonfinite({}, cpu);
  EXPECT_EQ(read(flag), std::vector<float>{0.0f});
  const Tensor a = make({1.0f, 2.0f, 3.0f}, {3});
  const Tensor empty = make({}, {0});
  const Tensor ints = cast(make({1.0f, 2.0f}, {2}), DType::kInt32);
  std::vector<Tensor> grads = {a, Tensor(), empty, ints, cast(a, DType::kFloat16),
                               cast(a, DType::kBFloat16)};
  any_nonfinite_into(grads, flag);
  EXPECT_EQ(read(flag), std::vector<float>{0.0f});
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (float bad : {kInf, -kInf, kNaN}) {
      std::vector<Tensor> with_bad = grads;
      with_bad.push_back(cast(make({0.5f, bad}, {2}), dtype));
      any_nonfinite_into(with_bad, flag);
      EXPECT_EQ(read(flag), std::vector<float>{1.0f}) << dtype_name(dtype) << " " << bad;
      any_nonfinite_into(grads, flag);  // overwritten, not accumulated
      EXPECT_EQ(read(flag), std::vector<float>{0.0f});
    }
  }
  expect_error(ErrorCode::kInvalidArgument, "the flag must be a float32 tensor of one element",
               [&] { any_nonfinite_into(grads, make({0.0f, 0.0f}, {2})); });
}

// Keras 3's rules, written out independently: the reference for the scripted sequence.
struct RefMachine {
  double scale;
  int64_t growth, counter = 0, iterations = 0;
  std::vector<double> w;
  double lr;
  void step(const std::vector<double>& scaled_grads) {
    bool finite = true;
    for (double g : scaled_grads) finite = finite && std::isfinite(g);
    if (!finite) {
      scale /= 2;
      counter = 0;
      return;
    }
    for (size_t i = 0; i < w.size(); ++i) w[i] -= lr * (scaled_grads[i] / scale);
    ++iterations;
    if (counter == growth - 1) {
      counter = 0;
      scale *= 2;
    } else {
      ++counter;
    }
  }
};

TEST(LossScaleOptimizer, StateMachineOverScriptedSequence) {
  auto sgd = std::make_shared<optim::SGD>(0.1);
  optim::LossScaleOptimizer lso(sgd, 1024.0, 3);
  EXPECT_STREQ(lso.name(), "loss_scale_optimizer");
  EXPECT_STREQ(lso.type(), "LossScaleOptimizer");
  EXPECT_TRUE(lso.dynamic());
  EXPECT_EQ(lso.inner(), sgd);
  EXPECT_EQ(lso.scale(), 1024.0);
  EXPECT_EQ(lso.loss_scale(), 1024.0);
  EXPECT_EQ(sgd->loss_scale(), 1.0);
  Tensor w = make({1.0f, -2.0f, 0.5f}, {3});
  RefMachine ref{1024.0, 3, 0, 0, {1.0, -2.0, 0.5}, 0.1};
  // Finite x3 (grows), inf, NaN, finite x4 (grows once more, one into the next run), -inf.
  const std::vector<std::vector<float>> script = {
      {512, -256, 64},  {100, 200, -300}, {1, 2, 3},     {kInf, 1, 1},  {1, kNaN, 1},
      {300, -20, 7},    {40, 50, 60},     {-8, 16, -32}, {0.5f, 0, 0},  {1, 1, -kInf},
      {900, 800, -700}};
  const std::vector<double> expect_scale = {1024, 1024, 2048, 1024, 512, 512, 512,
                                            1024, 1024, 512, 512};
  for (size_t s = 0; s < script.size(); ++s) {
    std::vector<double> as_double(script[s].begin(), script[s].end());
    lso.apply_gradients({make(script[s], {3})}, {w});
    ref.step(as_double);
    EXPECT_EQ(lso.scale(), ref.scale) << "step " << s;
    EXPECT_EQ(lso.scale(), expect_scale[s]) << "step " << s;
    EXPECT_EQ(lso.step_counter(), ref.counter) << "step " << s;
    EXPECT_EQ(lso.iterations(), ref.iterations) << "step " << s;
    EXPECT_EQ(sgd->iterations(), ref.iterations) << "step " << s;
    const std::vector<float> got = read(w);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(std::isfinite(got[i]));
      EXPECT_NEAR(got[i], ref.w[i], 1e-6 * std::max(1.0, std::abs(ref.w[i]))) << "step " << s;
    }
  }
  EXPECT_EQ(ref.iterations, 8);  // three steps were skipped
  const auto vars = lso.variables();
  ASSERT_GE(vars.size(), 4u);
  EXPECT_EQ(vars[0].first, "loss_scale_optimizer/step_counter");
  EXPECT_EQ(vars[1].first, "loss_scale_optimizer/dynamic_scale");
  EXPECT_EQ(read(vars[1].second)[0], 512.0f);
  EXPECT_EQ(vars[2].first, "sgd/iteration");
}

TEST(LossScaleOptimizer, FusedUnscaleMatchesDivideThenUpdate) {
  // Adam wrapped (scaled gradients in, float16 and float32) vs plain Adam on grads / scale.
  for (DType gdt : {DType::kFloat32, DType::kFloat16}) {
    auto inner = std::make_shared<optim::Adam>(0.01);
    optim::LossScaleOptimizer lso(inner, 4096.0, 2000);
    optim::Adam plain(0.01);
    Tensor w1 = make({0.3f, -0.7f, 1.5f, 2.0f}, {2, 2});
    Tensor w2 = make({0.3f, -0.7f, 1.5f, 2.0f}, {2, 2});
    for (int t = 1; t <= 4; ++t) {
      const std::vector<float> g = {0.01f * t, -0.002f, 3e-4f, 0.5f / t};
      std::vector<float> scaled(4);
      for (int i = 0; i < 4; ++i) scaled[i] = g[i] * 4096.0f;
      lso.apply_gradients({cast(make(scaled, {2, 2}), gdt)}, {w1});
      std::vector<float> unscaled =
          read(cast(cast(make(scaled, {2, 2}), gdt), DType::kFloat32));
      for (float& v : unscaled) v /= 4096.0f;
      plain.apply_gradients({make(unscaled, {2, 2})}, {w2});
    }
    const std::vector<float> a = read(w1), b = read(w2);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(a[i], b[i], 1e-6f * std::max(1.0f, std::abs(b[i])));
    EXPECT_EQ(lso.iterations(), 4);
    EXPECT_TRUE(inner->slot(w1, "velocity").defined());
    EXPECT_TRUE(lso.slot(w1, "velocity").same(inner->slot(w1, "velocity")));
  }
}

TEST(LossScaleOptimizer, ClippingSeesTheUnscaledGradient) {
  // clipnorm 1 on the unscaled gradient (norm 5 -> clipped to 1), not on the scaled one.
  optim::OptimizerOptions clip;
  clip.clipnorm = 1.0;
  auto inner = std::make_shared<optim::SGD>(1.0, 0.0, false, clip);
  optim::LossScaleOptimizer lso(inner, 256.0, 2000);
  Tensor w = make({0.0f, 0.0f}, {2});
  lso.apply_gradients({make({3.0f * 256, 4.0f * 256}, {2})}, {w});
  std::vector<float> got = read(w);
  EXPECT_NEAR(got[0], -0.6f, 1e-6f);
  EXPECT_NEAR(got[1], -0.8f, 1e-6f);
  // Below the clip norm: no clipping, only the unscale.
  lso.apply_gradients({make({0.3f * 256, 0.4f * 256}, {2})}, {w});
  got = read(w);
  EXPECT_NEAR(got[0], -0.9f, 1e-6f);
  EXPECT_NEAR(got[1], -1.2f, 1e-6f);
}

TEST(LossScaleOptimizer, UnscaledGradientsAndForwarding) {
  auto inner = std::make_shared<optim::SGD>(0.5);
  optim::LossScaleOptimizer lso(inner, 8.0, 2);
  Tensor w = make({1.0f}, {1});
  lso.apply_unscaled_gradients({make({0.5f}, {1})}, {w});  // no further unscale
  EXPECT_FLOAT_EQ(read(w)[0], 0.75f);
  EXPECT_EQ(lso.step_counter(), 1);
  lso.apply_unscaled_gradients({make({kNaN}, {1})}, {w});
  EXPECT_FLOAT_EQ(read(w)[0], 0.75f);
  EXPECT_EQ(lso.scale(), 4.0);
  EXPECT_EQ(lso.step_counter(), 0);
  // The rate and the iterations are the inner optimizer's.
  lso.set_learning_rate(0.25);
  EXPECT_EQ(inner->learning_rate(), 0.25);
  EXPECT_EQ(lso.learning_rate(), 0.25);
  lso.set_iterations(7);
  EXPECT_EQ(inner->iterations(), 7);
  // A None gradient skips its variable and is no inf/NaN.
  Tensor b = make({2.0f}, {1});
  lso.apply_gradients({make({4.0f}, {1}), Tensor()}, {w, b});  // 4 / 4 = 1 -> w -= 0.25
  EXPECT_FLOAT_EQ(read(w)[0], 0.5f);
  EXPECT_FLOAT_EQ(read(b)[0], 2.0f);
  EXPECT_EQ(inner->iterations(), 8);
  EXPECT_EQ(lso.step_counter(), 1);
}

TEST(LossScaleOptimizer, DynamicStateAndSlotsAreRestored) {
  auto inner = std::make_shared<optim::SGD>(0.5, 0.9);
  optim::LossScaleOptimizer lso(inner, 8.0, 3);
  lso.set_dynamic_state(64.0, 2);
  EXPECT_EQ(lso.scale(), 64.0);
  EXPECT_EQ(lso.step_counter(), 2);
  Tensor w = make({1.0f}, {1});
  lso.apply_gradients({make({64.0f}, {1})}, {w});  // the third finite step doubles the scale
  EXPECT_EQ(lso.scale(), 128.0);
  EXPECT_EQ(lso.step_counter(), 0);
  // Slots are the inner optimizer's.
  EXPECT_EQ(lso.slot_kinds(), (std::vector<std::string>{"momentum"}));
  lso.set_slot(w, "momentum", make({0.25f}, {1}));
  EXPECT_EQ(read(inner->slot(w, "momentum")), (std::vector<float>{0.25f}));
  expect_error(ErrorCode::kValue, "positive finite", [&] { lso.set_dynamic_state(0.0, 0); });
  expect_error(ErrorCode::kValue, "step_counter must be in [0, dynamic_growth_steps=3)",
               [&] { lso.set_dynamic_state(2.0, 3); });
  EXPECT_EQ(lso.scale(), 128.0);
}

TEST(LossScaleOptimizer, Errors) {
  auto sgd = std::make_shared<optim::SGD>(0.1);
  expect_error(ErrorCode::kValue, "inner_optimizer",
               [] { optim::LossScaleOptimizer bad(nullptr); });
  expect_error(ErrorCode::kValue, "initial_scale",
               [&] { optim::LossScaleOptimizer bad(sgd, 0.0); });
  expect_error(ErrorCode::kValue, "initial_scale",
               [&] { optim::LossScaleOptimizer bad(sgd, 1e300); });
  expect_error(ErrorCode::kValue, "dynamic_growth_steps",
               [&] { optim::LossScaleOptimizer bad(sgd, 2.0, 0); });
  optim::LossScaleOptimizer lso(sgd, 2.0, 5);
  Tensor w = make({1.0f}, {1});
  // The inner optimizer's errors, and the scale untouched.
  expect_error(ErrorCode::kValue, "No gradients provided",
               [&] { lso.apply_gradients({Tensor()}, {w}); });
  expect_error(ErrorCode::kValue, "gradients for",
               [&] { lso.apply_gradients({make({1.0f}, {1})}, {w, w}); });
  EXPECT_EQ(lso.scale(), 2.0);
  EXPECT_EQ(lso.step_counter(), 0);
}

}  // namespace
}  // namespace gpuaccel
