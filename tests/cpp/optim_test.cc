// Tests of the fused optimizers: the element functors (kernels/optimizer_functors.h) against a
// double-precision scalar reference of Keras's update rules over several steps; the CPU kernel
// with float32/float16/bfloat16 gradients on serial and OpenMP sizes; and optim::Optimizer
// (slot creation, iterations, skipped variables, clipping, weight decay, every validation error).
// Comparisons with real Keras are in tests/python/test_optimizers.py.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/backend_interposer.h"
#include "backends/cpu/optimizer_update.h"
#include "cuda_test_device.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "kernels/optimizer_functors.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"
#include "optim/adadelta.h"
#include "optim/adafactor.h"
#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adamax.h"
#include "optim/ftrl.h"
#include "optim/lamb.h"
#include "optim/lion.h"
#include "optim/nadam.h"
#include "optim/rmsprop.h"
#include "optim/schedule_free_adamw.h"
#include "optim/sgd.h"
#include "counting_backend.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

// ---- the double-precision reference (Keras 3's formulas, written independently) ----

struct RefConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = 0.01, momentum = 0.0;
  bool nesterov = false;
  double beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7;
  bool amsgrad = false;
  double rho = 0.9;
  bool centered = false;
  double weight_decay = 0.0;
  double initial_accumulator = 0.0;  // Adagrad, Ftrl: slot 0's starting value
  double lr_power = -0.5, l1 = 0.0, l2 = 0.0, l2_shrinkage = 0.0, ftrl_beta = 0.0;  // Ftrl
};

// Nadam's momentum schedule u_s = beta_1 * (1 - 0.5 * 0.96^s) and its product over s <= t.
double nadam_u(const RefConfig& c, int64_t s) { return c.beta_1 * (1 - 0.5 * std::pow(0.96, double(s))); }
double nadam_u_product(const RefConfig& c, int64_t t) {
  double product = 1.0;
  for (int64_t s = 1; s <= t; ++s) product *= nadam_u(c, s);
  return product;
}

struct RefState {
  double p = 0.0, s[3] = {0.0, 0.0, 0.0};
};

void ref_step(const RefConfig& c, int64_t t, double g, RefState& st) {
  double& p = st.p;
  p -= p * c.weight_decay * c.lr;
  switch (c.kind) {
    case OptimizerKind::kSgd: {
      if (c.momentum == 0.0) {
        p -= c.lr * g;
        break;
      }
      double& m = st.s[0];
      m = c.momentum * m - c.lr * g;
      p += c.nesterov ? c.momentum * m - c.lr * g : m;
      break;
    }
    case OptimizerKind::kAdam: {
      double &m = st.s[0], &v = st.s[1], &vhat = st.s[2];
      m = c.beta_1 * m + (1 - c.beta_1) * g;
      v = c.beta_2 * v + (1 - c.beta_2) * g * g;
      double vv = v;
      if (c.amsgrad) vv = vhat = std::max(vhat, v);
      const double alpha =
          c.lr * std::sqrt(1 - std::pow(c.beta_2, double(t))) / (1 - std::pow(c.beta_1, double(t)));
      p -= alpha * m / (std::sqrt(vv) + c.epsilon);
      break;
    }
    case OptimizerKind::kRmsprop: {
      double &v = st.s[0], &mom = st.s[1], &a = st.s[2];
      v = c.rho * v + (1 - c.rho) * g * g;
      double denom = v + c.epsilon;
      if (c.centered) {
        a = c.rho * a + (1 - c.rho) * g;
        denom = v - a * a + c.epsilon;
      }
      const double inc = c.lr * g / std::sqrt(denom);
      if (c.momentum > 0) {
        mom = c.momentum * mom + inc;
        p -= mom;
      } else {
        p -= inc;
      }
      break;
    }
    case OptimizerKind::kAdagrad: {
      double& a = st.s[0];
      a += g * g;
      p -= c.lr * g / std::sqrt(a + c.epsilon);
      break;
    }
    case OptimizerKind::kAdamax: {
      double &m = st.s[0], &u = st.s[1];
      m = c.beta_1 * m + (1 - c.beta_1) * g;
      u = std::max(c.beta_2 * u, std::abs(g));
      p -= c.lr * m / ((1 - std::pow(c.beta_1, double(t))) * (u + c.epsilon));
      break;
    }
    case OptimizerKind::kNadam: {
      double &m = st.s[0], &v = st.s[1];
      m = c.beta_1 * m + (1 - c.beta_1) * g;
      v = c.beta_2 * v + (1 - c.beta_2) * g * g;
      const double u_t = nadam_u(c, t), u_next = nadam_u(c, t + 1);
      const double product = nadam_u_product(c, t);
      const double m_hat = u_next * m / (1 - product * u_next) + (1 - u_t) * g / (1 - product);
      const double v_hat = v / (1 - std::pow(c.beta_2, double(t)));
      p -= c.lr * m_hat / (std::sqrt(v_hat) + c.epsilon);
      break;
    }
    case OptimizerKind::kAdadelta: {
      double &a = st.s[0], &b = st.s[1];
      a = c.rho * a + (1 - c.rho) * g * g;
      const double delta = -std::sqrt(b + c.epsilon) * g / std::sqrt(a + c.epsilon);
      b = c.rho * b + (1 - c.rho) * delta * delta;
      p += c.lr * delta;
      break;
    }
    case OptimizerKind::kLion: {
      double& m = st.s[0];
      const double direction = c.beta_1 * m + (1 - c.beta_1) * g;
      p -= c.lr * double((direction > 0) - (direction < 0));
      m = c.beta_2 * m + (1 - c.beta_2) * g;
      break;
    }
    case OptimizerKind::kFtrl: {
      double &a = st.s[0], &z = st.s[1];
      const double l2 = c.l2 + c.ftrl_beta / (2 * c.lr);
      const double a_next = a + g * g;
      z += g + 2 * c.l2_shrinkage * p -
           (std::pow(a_next, -c.lr_power) - std::pow(a, -c.lr_power)) / c.lr * p;
      a = a_next;
      const double quadratic = std::pow(a_next, -c.lr_power) / c.lr + 2 * l2;
      p = (std::clamp(z, -c.l1, c.l1) - z) / quadratic;
      break;
    }
  }
}

// The update parameters the optimizers fill for config c at step t (built here by hand so the
// functor is tested independently of optim::).
OptimizerUpdate make_update(const RefConfig& c, int64_t t) {
  OptimizerUpdate u;
  u.kind = c.kind;
  u.learning_rate = float(c.lr);
  u.momentum = float(c.momentum);
  u.weight_decay = float(c.weight_decay);
  u.epsilon = float(c.epsilon);
  if (c.kind == OptimizerKind::kSgd && c.momentum != 0) {
    u.flags |= kOptimizerMomentum | (c.nesterov ? kOptimizerNesterov : 0);
  }
  if (c.kind == OptimizerKind::kAdam) {
    if (c.amsgrad) u.flags |= kOptimizerAmsgrad;
    u.one_minus_beta_1 = float(1 - c.beta_1);
    u.one_minus_beta_2 = float(1 - c.beta_2);
    u.step_factor[0] = float(c.lr * std::sqrt(1 - std::pow(c.beta_2, double(t))) /
                    (1 - std::pow(c.beta_1, double(t))));
  }
  if (c.kind == OptimizerKind::kRmsprop) {
    if (c.momentum > 0) u.flags |= kOptimizerMomentum;
    if (c.centered) u.flags |= kOptimizerCentered;
    u.rho = float(c.rho);
    u.one_minus_rho = float(1 - c.rho);
  }
  switch (c.kind) {
    case OptimizerKind::kAdamax:
      u.one_minus_beta_1 = float(1 - c.beta_1);
      u.beta_2 = float(c.beta_2);
      u.step_factor[0] = float(c.lr / (1 - std::pow(c.beta_1, double(t))));
      break;
    case OptimizerKind::kNadam: {
      u.one_minus_beta_1 = float(1 - c.beta_1);
      u.one_minus_beta_2 = float(1 - c.beta_2);
      const double product = nadam_u_product(c, t), u_next = nadam_u(c, t + 1);
      u.step_factor[0] = float(u_next / (1 - product * u_next));
      u.step_factor[1] = float((1 - nadam_u(c, t)) / (1 - product));
      u.step_factor[2] = float(1 / (1 - std::pow(c.beta_2, double(t))));
      break;
    }
    case OptimizerKind::kAdadelta:
      u.rho = float(c.rho);
      u.one_minus_rho = float(1 - c.rho);
      break;
    case OptimizerKind::kLion:
      u.beta_1 = float(c.beta_1);
      u.beta_2 = float(c.beta_2);
      u.one_minus_beta_1 = 1.0f - float(c.beta_1);
      u.one_minus_beta_2 = 1.0f - float(c.beta_2);
      break;
    case OptimizerKind::kFtrl:
      u.learning_rate_power = float(c.lr_power);
      u.l1 = float(c.l1);
      u.l2 = float(c.l2 + c.ftrl_beta / (2 * c.lr));
      u.l2_shrinkage = float(c.l2_shrinkage);
      break;
    default:
      break;
  }
  return u;
}

void run_functor(const OptimizerUpdate& u, float g, float& p, float* s) {
  const bool known = kernels::with_optimizer_functor(
      u, [&](const auto& f) { f(g, &p, &s[0], &s[1], &s[2]); });
  ASSERT_TRUE(known);
}

std::vector<RefConfig> all_configs() {
  std::vector<RefConfig> out;
  auto add = [&](RefConfig c) { out.push_back(c); };
  RefConfig c;
  c.kind = OptimizerKind::kSgd;
  c.lr = 0.05;
  add(c);
  c.momentum = 0.9;
  add(c);
  c.nesterov = true;
  add(c);
  c.weight_decay = 0.1;
  add(c);
  RefConfig a;
  a.kind = OptimizerKind::kAdam;
  a.lr = 0.01;
  add(a);
  a.amsgrad = true;
  add(a);
  a.weight_decay = 0.004;  // AdamW
  a.beta_1 = 0.5;
  a.beta_2 = 0.9;
  add(a);
  RefConfig r;
  r.kind = OptimizerKind::kRmsprop;
  r.lr = 0.01;
  add(r);
  r.momentum = 0.5;
  add(r);
  r.centered = true;
  add(r);
  r.momentum = 0.0;
  r.rho = 0.7;
  add(r);
  RefConfig ada;
  ada.kind = OptimizerKind::kAdagrad;
  ada.lr = 0.05;
  ada.initial_accumulator = 0.1;
  add(ada);
  ada.weight_decay = 0.01;
  add(ada);
  RefConfig amax;
  amax.kind = OptimizerKind::kAdamax;
  amax.lr = 0.01;
  add(amax);
  amax.beta_1 = 0.5;
  amax.beta_2 = 0.8;
  add(amax);
  RefConfig nadam;
  nadam.kind = OptimizerKind::kNadam;
  nadam.lr = 0.01;
  add(nadam);
  nadam.beta_1 = 0.6;
  nadam.beta_2 = 0.9;
  add(nadam);
  RefConfig delta;
  delta.kind = OptimizerKind::kAdadelta;
  delta.lr = 1.0;
  add(delta);
  delta.rho = 0.5;
  delta.epsilon = 1e-3;
  add(delta);
  RefConfig lion;
  lion.kind = OptimizerKind::kLion;
  lion.lr = 0.01;
  lion.beta_2 = 0.99;
  add(lion);
  lion.beta_1 = 0.5;
  lion.weight_decay = 0.1;
  add(lion);
  RefConfig ftrl;
  ftrl.kind = OptimizerKind::kFtrl;
  ftrl.lr = 0.1;
  ftrl.initial_accumulator = 0.1;
  add(ftrl);
  ftrl.l1 = 0.01;
  ftrl.l2 = 0.02;
  ftrl.l2_shrinkage = 0.03;
  ftrl.ftrl_beta = 0.1;
  ftrl.lr_power = -0.75;
  add(ftrl);
  return out;
}

TEST(OptimFunctors, MatchDoubleReferenceOverSteps) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  int config_index = 0;
  for (const RefConfig& c : all_configs()) {
    for (int e = 0; e < 16; ++e) {
      RefState ref;
      ref.p = normal(rng);
      float p = float(ref.p);
      ref.p = p;
      ref.s[0] = c.initial_accumulator;
      float s[3] = {float(c.initial_accumulator), 0, 0};
      double cancellation_budget = 0.0;  // see below
      for (int64_t t = 1; t <= 6; ++t) {
        const float g = float(normal(rng) * (e % 3 == 0 ? 1e-3 : 1.0));
        const double p_before = ref.p;
        ref_step(c, t, g, ref);
        run_functor(make_update(c, t), g, p, s);
        const double tol = 2e-5 * std::max(1.0, std::abs(ref.p));
        ASSERT_NEAR(p, ref.p, tol) << "config " << config_index << " element " << e << " step " << t;
        // Ftrl's linear slot adds p * (n^-power - a^-power) / lr, a difference of two float32
        // roots of nearly equal accumulators: its error is a few ulps of those operands, not of
        // the (small) result, and it stays in the slot from step to step.
        if (c.kind == OptimizerKind::kFtrl) {
          cancellation_budget += 8 * FLT_EPSILON *
                                 (std::abs(p_before) * std::pow(ref.s[0], -c.lr_power) / c.lr +
                                  std::abs(g));
        }
        for (int k = 0; k < 3; ++k) {
          ASSERT_NEAR(s[k], ref.s[k],
                      2e-5 * std::max(1e-3, std::abs(ref.s[k])) + cancellation_budget)
              << "config " << config_index << " slot " << k << " step " << t;
        }
      }
    }
    ++config_index;
  }
}

TEST(OptimFunctors, GradientTransforms) {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kSgd;
  u.learning_rate = 1.0f;
  u.flags = kOptimizerClipValue;
  u.clip_value = 0.5f;
  float p = 0.0f, s[3] = {0, 0, 0};
  run_functor(u, 3.0f, p, s);
  EXPECT_FLOAT_EQ(p, -0.5f);
  run_functor(u, -3.0f, p, s);
  EXPECT_FLOAT_EQ(p, 0.0f);
  run_functor(u, 0.25f, p, s);
  EXPECT_FLOAT_EQ(p, -0.25f);
  u.flags = 0;
  u.grad_scale = 0.5f;
  p = 1.0f;
  run_functor(u, 1.0f, p, s);
  EXPECT_FLOAT_EQ(p, 0.5f);
  // A NaN gradient propagates (Keras does not guard non-finite gradients either).
  run_functor(u, std::numeric_limits<float>::quiet_NaN(), p, s);
  EXPECT_TRUE(std::isnan(p));
}

TEST(OptimFunctors, AmsgradKeepsTheMaximumSecondMoment) {
  RefConfig c;
  c.kind = OptimizerKind::kAdam;
  c.amsgrad = true;
  float p = 1.0f, s[3] = {0, 0, 0};
  run_functor(make_update(c, 1), 10.0f, p, s);
  const float vhat_after_big = s[2];
  run_functor(make_update(c, 2), 0.0f, p, s);
  EXPECT_LT(s[1], vhat_after_big);     // v decays
  EXPECT_FLOAT_EQ(s[2], vhat_after_big);  // vhat keeps the maximum
}

// ---- the CPU kernel ----

TensorView flat_view(void* data, DType dtype, int64_t n) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = 1;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

template <typename G>
void check_cpu_kernel(DType grad_dtype, int64_t n) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const RefConfig& c : all_configs()) {
    std::vector<float> p(n), expect_p(n);
    std::vector<float> slots[3], expect_slots[3];
    for (int k = 0; k < 3; ++k) slots[k].assign(n, 0.0f), expect_slots[k].assign(n, 0.0f);
    for (int64_t i = 0; i < n; ++i) p[i] = expect_p[i] = normal(rng);
    std::vector<G> g(n);
    for (int64_t t = 1; t <= 3; ++t) {
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<G, float>) {
          g[i] = normal(rng);
        } else {
          g[i] = G::from_float(normal(rng));
        }
      }
      const OptimizerUpdate u = make_update(c, t);
      cpu::optimizer_update(u, flat_view(p.data(), DType::kFloat32, n),
                            flat_view(g.data(), grad_dtype, n),
                            flat_view(slots[0].data(), DType::kFloat32, n),
                            flat_view(slots[1].data(), DType::kFloat32, n),
                            flat_view(slots[2].data(), DType::kFloat32, n));
      for (int64_t i = 0; i < n; ++i) {
        float gf;
        if constexpr (std::is_same_v<G, float>) {
          gf = g[i];
        } else {
          gf = g[i].to_float();
        }
        float s[3] = {expect_slots[0][i], expect_slots[1][i], expect_slots[2][i]};
        run_functor(u, gf, expect_p[i], s);
        for (int k = 0; k < 3; ++k) expect_slots[k][i] = s[k];
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(p[i], expect_p[i]) << "element " << i;  // the same functor, bit for bit
      for (int k = 0; k < 3; ++k) ASSERT_EQ(slots[k][i], expect_slots[k][i]);
    }
  }
}

TEST(OptimCpuKernel, Float32GradientsSerialAndParallel) {
  check_cpu_kernel<float>(DType::kFloat32, 37);
  check_cpu_kernel<float>(DType::kFloat32, 70000);
}

TEST(OptimCpuKernel, Float16AndBFloat16Gradients) {
  check_cpu_kernel<Half>(DType::kFloat16, 70000);
  check_cpu_kernel<BFloat16>(DType::kBFloat16, 70000);
}

TEST(OptimCpuKernel, UnusedSlotsMayBeEmpty) {
  float p[2] = {1.0f, 2.0f}, g[2] = {1.0f, -1.0f};
  OptimizerUpdate u;
  u.kind = OptimizerKind::kSgd;
  u.learning_rate = 0.5f;
  const TensorView empty;
  cpu::optimizer_update(u, flat_view(p, DType::kFloat32, 2), flat_view(g, DType::kFloat32, 2),
                        empty, empty, empty);
  EXPECT_FLOAT_EQ(p[0], 0.5f);
  EXPECT_FLOAT_EQ(p[1], 2.5f);
}

// ---- the CUDA kernel (compiled with the CUDA backend; runs only where there is a GPU) ----
#ifdef GPUACCEL_TEST_CUDA_BACKEND

class OptimCuda : public CudaDeviceTest {
 protected:
  TensorView upload(const void* host, DType dtype, int64_t n) {
    const TensorView v = flat_view(device_alloc(size_t(n) * dtype_size(dtype)), dtype, n);
    EXPECT_NO_THROW(backend_->copy_from_host(host, v));
    return v;
  }
  std::vector<float> download(const TensorView& v) {
    std::vector<float> out(size_t(v.numel()));
    EXPECT_NO_THROW(backend_->copy_to_host(v, out.data()));
    return out;
  }
};

// Every configuration, 3 steps, float32 and bfloat16 gradients, against the CPU kernel (the same
// functor; only FMA contraction may differ, hence the tolerance).
TEST_F(OptimCuda, MatchesTheCpuKernel) {
  const int64_t n = 5000;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (DType gd : {DType::kFloat32, DType::kBFloat16}) {
    for (const RefConfig& c : all_configs()) {
      std::vector<float> p(n), s0(n, 0.0f), s1(n, 0.0f), s2(n, 0.0f);
      for (auto& x : p) x = normal(rng);
      const TensorView dp = upload(p.data(), DType::kFloat32, n);
      const TensorView ds0 = upload(s0.data(), DType::kFloat32, n);
      const TensorView ds1 = upload(s1.data(), DType::kFloat32, n);
      const TensorView ds2 = upload(s2.data(), DType::kFloat32, n);
      for (int64_t t = 1; t <= 3; ++t) {
        std::vector<float> g(n);
        std::vector<BFloat16> gb(n);
        for (int64_t i = 0; i < n; ++i) {
          gb[i] = BFloat16::from_float(normal(rng));
          g[i] = gd == DType::kBFloat16 ? gb[i].to_float() : normal(rng);
        }
        const TensorView dg = gd == DType::kBFloat16 ? upload(gb.data(), gd, n) : upload(g.data(), gd, n);
        const OptimizerUpdate u = make_update(c, t);
        ASSERT_NO_THROW(backend_->optimizer_update(u, dp, dg, ds0, ds1, ds2));
        cpu::optimizer_update(u, flat_view(p.data(), DType::kFloat32, n),
                              flat_view(g.data(), DType::kFloat32, n),
                              flat_view(s0.data(), DType::kFloat32, n),
                              flat_view(s1.data(), DType::kFloat32, n),
                              flat_view(s2.data(), DType::kFloat32, n));
      }
      const std::vector<float> gp = download(dp);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(gp[i], p[i], 1e-5f * std::max(1.0f, std::abs(p[i]))) << "element " << i;
      }
    }
  }
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

// ---- optim::Optimizer ----

const LogicalDevice kCpu{};

using test::expect_error;
using test::make;
using test::read;

TEST(OptimOptimizer, AdamMatchesReferenceAndCountsIterations) {
  optim::Adam adam(0.01);
  EXPECT_STREQ(adam.name(), "adam");
  EXPECT_STREQ(adam.type(), "Adam");
  Tensor w = make({1.0f, -2.0f, 0.5f, 3.0f}, {2, 2});
  Tensor b = make({0.1f}, {1});
  EXPECT_FALSE(adam.slot(w, "momentum").defined());  // lazily created
  RefConfig c;
  c.kind = OptimizerKind::kAdam;
  c.lr = 0.01;
  std::vector<RefState> ref(4);
  const std::vector<float> w0 = read(w);
  for (int i = 0; i < 4; ++i) ref[i].p = w0[i];
  for (int64_t t = 1; t <= 5; ++t) {
    std::vector<float> gv = {0.3f * t, -1.0f, 0.01f, float(t % 2)};
    adam.apply_gradients({make(gv, {2, 2}), Tensor()}, {w, b});  // b's gradient is None
    for (int i = 0; i < 4; ++i) ref_step(c, t, gv[i], ref[i]);
    EXPECT_EQ(adam.iterations(), t);
  }
  const std::vector<float> w1 = read(w);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(w1[i], ref[i].p, 1e-6 * std::max(1.0, std::abs(ref[i].p)));
  EXPECT_FLOAT_EQ(read(b)[0], 0.1f);  // skipped
  EXPECT_TRUE(adam.slot(w, "momentum").defined());
  EXPECT_TRUE(adam.slot(w, "velocity").defined());
  EXPECT_FALSE(adam.slot(w, "velocity_hat").defined());  // amsgrad off
  EXPECT_FALSE(adam.slot(b, "momentum").defined());      // never updated
  EXPECT_NEAR(read(adam.slot(w, "velocity"))[1], ref[1].s[1], 1e-6);
  const auto vars = adam.variables();
  ASSERT_EQ(vars.size(), 4u);
  EXPECT_EQ(vars[0].first, "adam/iteration");
  EXPECT_EQ(vars[1].first, "adam/learning_rate");
  EXPECT_EQ(vars[2].first, "adam/variable_0_momentum");
  EXPECT_EQ(vars[3].first, "adam/variable_0_velocity");
  EXPECT_TRUE(vars[2].second.same(adam.slot(w, "momentum")));
}

TEST(OptimOptimizer, StepScalarsStayOnTheDevice) {
  // Adam's step counter and alpha are device scalars advanced by ops: no step reads the host.
  test::CountingBackend counting;
  ScopedCpuBackendInterposer interpose(counting);
  optim::Adam adam(0.01);
  Tensor w = make({1.0f, -2.0f}, {2});
  for (int i = 0; i < 3; ++i) adam.apply_gradients({make({0.5f, -0.25f}, {2})}, {w});
  EXPECT_EQ(counting.copies_to_host, 0);
  EXPECT_EQ(counting.synchronizes, 0);

  // Norm clipping's factors are computed and read on the device too.
  for (bool global : {false, true}) {
    optim::OptimizerOptions o;
    (global ? o.global_clipnorm : o.clipnorm) = 0.1;
    optim::Adam clipped(0.01, 0.9, 0.999, 1e-7, false, o);
    for (int i = 0; i < 2; ++i) clipped.apply_gradients({make({0.5f, -0.25f}, {2})}, {w});
  }
  EXPECT_EQ(counting.copies_to_host, 0);

  // set_iterations restarts the device counter from the host's count: the next step is t = 11.
  optim::Adam fresh(0.01);
  fresh.set_iterations(10);
  Tensor v = make({1.0f, -2.0f}, {2});
  fresh.apply_gradients({make({0.5f, -0.25f}, {2})}, {v});
  RefConfig c;
  c.kind = OptimizerKind::kAdam;
  c.lr = 0.01;
  std::vector<RefState> ref(2);
  ref[0].p = 1.0;
  ref[1].p = -2.0;
  ref_step(c, 11, 0.5, ref[0]);
  ref_step(c, 11, -0.25, ref[1]);
  const std::vector<float> got = read(v);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(got[i], ref[i].p, 1e-6) << i;
  EXPECT_EQ(fresh.iterations(), 11);
  // Replayed steps count on the host only.
  fresh.count_replayed_steps(4);
  EXPECT_EQ(fresh.iterations(), 15);
}

TEST(OptimOptimizer, SlotsAreZeroOnTheParamsDeviceAndPerParam) {
  optim::RMSprop rms(0.01, 0.9, 0.5, 1e-7, /*centered=*/true);
  Tensor a = make({1.0f, 2.0f}, {2});
  Tensor b = make({3.0f}, {1});
  rms.apply_gradients({make({0.0f, 0.0f}, {2}), make({0.0f}, {1})}, {a, b});
  for (const char* s : {"velocity", "momentum", "average_gradient"}) {
    const Tensor slot = rms.slot(a, s);
    ASSERT_TRUE(slot.defined()) << s;
    EXPECT_EQ(slot.shape(), a.shape());
    EXPECT_EQ(slot.dtype(), DType::kFloat32);
    EXPECT_EQ(read(slot), (std::vector<float>{0.0f, 0.0f}));  // zero grads keep zero slots
    EXPECT_EQ(rms.slot(b, s).numel(), 1);
  }
  EXPECT_EQ(rms.variables().size(), 2u + 3u * 2u);
  // A second optimizer has its own slots.
  optim::SGD sgd(0.1, 0.9);
  EXPECT_FALSE(sgd.slot(a, "momentum").defined());
  optim::SGD plain(0.1);
  plain.apply_gradients({make({1.0f, 1.0f}, {2})}, {a});
  EXPECT_FALSE(plain.slot(a, "momentum").defined());  // no momentum, no slot
  EXPECT_EQ(plain.variables().size(), 2u);
}

TEST(OptimOptimizer, FreedVariablesReleaseTheirSlots) {
  optim::Adam adam(0.01);
  Tensor kept = make({1.0f}, {1});
  std::weak_ptr<TensorImpl> slot_of_freed;
  {
    Tensor freed = make({1.0f, 2.0f}, {2});
    adam.apply_gradients({make({1.0f}, {1}), make({1.0f, 1.0f}, {2})}, {kept, freed});
    EXPECT_EQ(adam.variables().size(), 2u + 2u * 2u);
    slot_of_freed = adam.slot(freed, "momentum").impl_ptr();
  }
  EXPECT_EQ(adam.variables().size(), 2u + 2u);  // the freed variable is no longer listed
  adam.apply_gradients({make({1.0f}, {1})}, {kept});
  EXPECT_TRUE(slot_of_freed.expired());  // and its slots were released by the next step
  // A new variable (possibly at the freed one's address) starts from zero slots.
  Tensor fresh = make({5.0f, 5.0f}, {2});
  adam.apply_gradients({make({0.0f, 0.0f}, {2})}, {fresh});
  EXPECT_EQ(read(adam.slot(fresh, "momentum")), (std::vector<float>{0.0f, 0.0f}));
}

TEST(OptimOptimizer, SavedSlotsRestoredIntoAFreshOptimizerContinueIdentically) {
  // What a training checkpoint does: read the slots and iterations of one optimizer, set them
  // on a new one over copies of the variables; the next steps match bit for bit.
  optim::Adam saved(0.01, 0.9, 0.999, 1e-7, /*amsgrad=*/true);
  Tensor w = make({1.0f, -2.0f, 0.5f}, {3});
  for (int t = 1; t <= 3; ++t) saved.apply_gradients({make({0.1f * t, -1.0f, 2.0f}, {3})}, {w});
  EXPECT_EQ(saved.slot_kinds(), (std::vector<std::string>{"momentum", "velocity", "velocity_hat"}));
  optim::Adam restored(0.01, 0.9, 0.999, 1e-7, /*amsgrad=*/true);
  Tensor w2 = make(read(w), {3});
  for (const std::string& kind : saved.slot_kinds()) {
    restored.set_slot(w2, kind, make(read(saved.slot(w, kind)), {3}));
  }
  restored.set_iterations(saved.iterations());
  for (int t = 4; t <= 5; ++t) {
    const std::vector<float> g = {0.3f, float(t), -0.5f};
    saved.apply_gradients({make(g, {3})}, {w});
    restored.apply_gradients({make(g, {3})}, {w2});
  }
  EXPECT_EQ(read(w2), read(w));
  EXPECT_EQ(read(restored.slot(w2, "velocity_hat")), read(saved.slot(w, "velocity_hat")));
  // Errors name the slot and what is allowed, and change nothing.
  expect_error(ErrorCode::kValue, "keeps no slot named 'average_gradient' (its slots: "
               "'momentum', 'velocity', 'velocity_hat')",
               [&] { restored.set_slot(w2, "average_gradient", make({0, 0, 0}, {3})); });
  expect_error(ErrorCode::kValue, "must be float32 of shape",
               [&] { restored.set_slot(w2, "momentum", make({0, 0}, {2})); });
  optim::SGD plain(0.1);
  EXPECT_TRUE(plain.slot_kinds().empty());
  expect_error(ErrorCode::kValue, "(its slots: none)",
               [&] { plain.set_slot(w2, "momentum", make({0, 0, 0}, {3})); });
}

TEST(OptimOptimizer, LearningRateSetterTakesEffect) {
  optim::SGD sgd(0.1);
  Tensor w = make({1.0f}, {1});
  sgd.apply_gradients({make({1.0f}, {1})}, {w});
  EXPECT_FLOAT_EQ(read(w)[0], 0.9f);
  sgd.set_learning_rate(0.5);
  EXPECT_EQ(sgd.learning_rate(), 0.5);
  sgd.apply_gradients({make({1.0f}, {1})}, {w});
  EXPECT_FLOAT_EQ(read(w)[0], 0.4f);
  expect_error(ErrorCode::kValue, "`learning_rate` must be a finite float >= 0. Received: learning_rate=-1.0",
               [&] { sgd.set_learning_rate(-1.0); });
}

TEST(OptimOptimizer, Float16AndBFloat16Gradients) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    optim::SGD sgd(0.5);
    Tensor w = make({1.0f, 2.0f}, {2});
    const uint16_t bits[2] = {
        dt == DType::kFloat16 ? Half::from_float(1.0f).bits : BFloat16::from_float(1.0f).bits,
        dt == DType::kFloat16 ? Half::from_float(-2.0f).bits : BFloat16::from_float(-2.0f).bits};
    Tensor g = from_host(bits, {2}, dt, kCpu);
    sgd.apply_gradients({g}, {w});
    EXPECT_EQ(read(w), (std::vector<float>{0.5f, 3.0f})) << dtype_name(dt);
  }
}

TEST(OptimOptimizer, WeightDecayAndClipping) {
  // AdamW: decoupled decay then Adam.
  {
    optim::AdamW adamw(0.01, 0.1);
    Tensor w = make({2.0f}, {1});
    adamw.apply_gradients({make({0.5f}, {1})}, {w});
    RefConfig c;
    c.kind = OptimizerKind::kAdam;
    c.lr = 0.01;
    c.weight_decay = 0.1;
    RefState r;
    r.p = 2.0;
    ref_step(c, 1, 0.5, r);
    EXPECT_NEAR(read(w)[0], r.p, 1e-6);
    EXPECT_EQ(adamw.options().weight_decay.value(), 0.1);
    EXPECT_STREQ(adamw.name(), "adam_w");  // Keras's snake case
    EXPECT_STREQ(optim::RMSprop().name(), "rm_sprop");
  }
  // exclude_from_weight_decay
  {
    optim::OptimizerOptions o;
    o.weight_decay = 0.5;
    optim::SGD sgd(0.1, 0.0, false, o);
    Tensor a = make({1.0f}, {1}), b = make({1.0f}, {1});
    sgd.exclude_from_weight_decay({b});
    sgd.apply_gradients({make({0.0f}, {1}), make({0.0f}, {1})}, {a, b});
    EXPECT_FLOAT_EQ(read(a)[0], 0.95f);
    EXPECT_FLOAT_EQ(read(b)[0], 1.0f);
  }
  // clipnorm: per gradient; global_clipnorm: joint; clipvalue: per element.
  {
    optim::OptimizerOptions o;
    o.clipnorm = 1.0;
    optim::SGD sgd(1.0, 0.0, false, o);
    Tensor a = make({0.0f, 0.0f}, {2}), b = make({0.0f}, {1});
    sgd.apply_gradients({make({3.0f, 4.0f}, {2}), make({0.5f}, {1})}, {a, b});
    EXPECT_NEAR(read(a)[0], -0.6f, 1e-7);
    EXPECT_NEAR(read(a)[1], -0.8f, 1e-7);
    EXPECT_FLOAT_EQ(read(b)[0], -0.5f);  // norm below the limit: unchanged
  }
  {
    optim::OptimizerOptions o;
    o.global_clipnorm = 2.6;
    optim::SGD sgd(1.0, 0.0, false, o);
    Tensor a = make({0.0f, 0.0f}, {2}), b = make({0.0f}, {1});
    sgd.apply_gradients({make({3.0f, 4.0f}, {2}), make({12.0f}, {1})}, {a, b});  // norm 13
    EXPECT_NEAR(read(a)[0], -0.6f, 1e-6);
    EXPECT_NEAR(read(a)[1], -0.8f, 1e-6);
    EXPECT_NEAR(read(b)[0], -2.4f, 1e-6);
  }
  {
    // An infinite gradient norm: clipnorm scales that gradient by 0, global_clipnorm poisons
    // every variable with NaN (Keras's rules), now decided on the device.
    const float inf = std::numeric_limits<float>::infinity();
    optim::OptimizerOptions per;
    per.clipnorm = 1.0;
    optim::SGD sgd(1.0, 0.0, false, per);
    Tensor a = make({1.0f, 1.0f}, {2}), b = make({0.0f}, {1});
    sgd.apply_gradients({make({inf, 1.0f}, {2}), make({0.5f}, {1})}, {a, b});
    EXPECT_TRUE(std::isnan(read(a)[0]));  // inf * 0
    EXPECT_FLOAT_EQ(read(a)[1], 1.0f);
    EXPECT_FLOAT_EQ(read(b)[0], -0.5f);
    optim::OptimizerOptions joint;
    joint.global_clipnorm = 1.0;
    optim::SGD sgd2(1.0, 0.0, false, joint);
    Tensor c = make({1.0f}, {1}), d = make({0.0f}, {1});
    sgd2.apply_gradients({make({inf}, {1}), make({0.5f}, {1})}, {c, d});
    EXPECT_TRUE(std::isnan(read(c)[0]));
    EXPECT_TRUE(std::isnan(read(d)[0]));
  }
  {
    optim::OptimizerOptions o;
    o.clipvalue = 0.5;
    optim::SGD sgd(1.0, 0.0, false, o);
    Tensor a = make({0.0f, 0.0f, 0.0f}, {3});
    sgd.apply_gradients({make({3.0f, -4.0f, 0.25f}, {3})}, {a});
    EXPECT_EQ(read(a), (std::vector<float>{-0.5f, 0.5f, -0.25f}));
  }
}

TEST(OptimOptimizer, ApplyGradientsValidation) {
  optim::SGD sgd(0.1);
  Tensor w = make({1.0f, 2.0f}, {2});
  const Tensor w_before = make({1.0f, 2.0f}, {2});
  expect_error(ErrorCode::kValue, "apply_gradients got 1 gradients for 2 variables",
               [&] { sgd.apply_gradients({make({1.0f, 1.0f}, {2})}, {w, w_before}); });
  expect_error(ErrorCode::kValue, "No gradients provided for any variable.",
               [&] { sgd.apply_gradients({Tensor()}, {w}); });
  expect_error(ErrorCode::kValue, "variable 0 is None",
               [&] { sgd.apply_gradients({make({1.0f}, {1})}, {Tensor()}); });
  expect_error(ErrorCode::kInvalidArgument, "gradient 0 has shape (3,) but its variable has shape (2,)",
               [&] { sgd.apply_gradients({make({1.0f, 1.0f, 1.0f}, {3})}, {w}); });
  const int32_t ints[2] = {1, 2};
  expect_error(ErrorCode::kInvalidArgument, "gradient 0 has dtype int32",
               [&] { sgd.apply_gradients({from_host(ints, {2}, DType::kInt32, kCpu)}, {w}); });
  const uint16_t halves[2] = {Half::from_float(1.0f).bits, Half::from_float(2.0f).bits};
  const Tensor half_w = from_host(halves, {2}, DType::kFloat16, kCpu);
  expect_error(ErrorCode::kInvalidArgument, "variable 0 has dtype float16",
               [&] { sgd.apply_gradients({make({1.0f, 1.0f}, {2})}, {half_w}); });
  expect_error(ErrorCode::kValue, "variable 1 appears more than once",
               [&] { sgd.apply_gradients({make({1.0f, 1.0f}, {2}), make({1.0f, 1.0f}, {2})}, {w, w}); });
  // A later bad pair leaves earlier variables untouched, and nothing counted an iteration.
  expect_error(ErrorCode::kInvalidArgument, "gradient 1 has shape",
               [&] { sgd.apply_gradients({make({1.0f, 1.0f}, {2}), make({1.0f}, {1})}, {w, make({0.0f, 0.0f}, {2})}); });
  EXPECT_EQ(read(w), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(sgd.iterations(), 0);
  sgd.apply_gradients({}, {});  // empty: a no-op, as Keras
  EXPECT_EQ(sgd.iterations(), 0);
}

TEST(OptimOptimizer, HyperparameterValidation) {
  expect_error(ErrorCode::kValue, "`momentum` must be a float between [0.0, 1.0]. Received: momentum=1.5",
               [] { optim::SGD(0.01, 1.5); });
  expect_error(ErrorCode::kValue, "`momentum` must be a float between [0.0, 1.0]. Received: momentum=-0.1",
               [] { optim::RMSprop(0.01, 0.9, -0.1); });
  expect_error(ErrorCode::kValue, "`learning_rate` must be a finite float >= 0. Received: learning_rate=-0.01",
               [] { optim::SGD(-0.01); });
  expect_error(ErrorCode::kValue, "`learning_rate` must be a finite float >= 0. Received: learning_rate=nan",
               [] { optim::Adam(std::nan("")); });
  expect_error(ErrorCode::kValue, "`beta_1` must be a float between [0.0, 1.0). Received: beta_1=1.0",
               [] { optim::Adam(0.001, 1.0); });
  expect_error(ErrorCode::kValue, "`beta_2` must be a float between [0.0, 1.0). Received: beta_2=-0.5",
               [] { optim::Adam(0.001, 0.9, -0.5); });
  expect_error(ErrorCode::kValue, "`epsilon` must be a finite float >= 0. Received: epsilon=-1e-07",
               [] { optim::Adam(0.001, 0.9, 0.999, -1e-7); });
  expect_error(ErrorCode::kValue, "`rho` must be a float between [0.0, 1.0]. Received: rho=2.0",
               [] { optim::RMSprop(0.001, 2.0); });
  expect_error(ErrorCode::kValue, "`weight_decay` must be a finite float >= 0. Received: weight_decay=-0.004",
               [] { optim::AdamW(0.001, -0.004); });
  optim::OptimizerOptions two;
  two.clipnorm = 1.0;
  two.clipvalue = 0.5;
  expect_error(ErrorCode::kValue,
               "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
               "clipnorm=1.0, clipvalue=0.5, global_clipnorm=None",
               [&] { optim::SGD(0.01, 0.0, false, two); });
  optim::OptimizerOptions zero;
  zero.clipnorm = 0.0;
  expect_error(ErrorCode::kValue, "`clipnorm` must be a positive finite float. Received: clipnorm=0.0",
               [&] { optim::SGD(0.01, 0.0, false, zero); });
  optim::SGD ok(0.01);
  expect_error(ErrorCode::kValue, "`iterations` must be an integer >= 0", [&] { ok.set_iterations(-1); });
}

// Every optimizer of Keras's set through optim::Optimizer (slot creation and initial values,
// the device step factors, skipped steps) against the double reference over 4 steps.
TEST(OptimOptimizer, EveryKindMatchesReferenceThroughTheOptimizer) {
  struct Case {
    RefConfig c;
    std::function<std::unique_ptr<optim::Optimizer>()> make_optimizer;
  };
  std::vector<Case> cases;
  RefConfig c;
  c.kind = OptimizerKind::kAdagrad;
  c.lr = 0.05;
  c.initial_accumulator = 0.25;
  cases.push_back({c, [] { return std::make_unique<optim::Adagrad>(0.05, 0.25); }});
  c = RefConfig();
  c.kind = OptimizerKind::kAdamax;
  c.lr = 0.02;
  cases.push_back({c, [] { return std::make_unique<optim::Adamax>(0.02); }});
  c.kind = OptimizerKind::kNadam;
  cases.push_back({c, [] { return std::make_unique<optim::Nadam>(0.02); }});
  c = RefConfig();
  c.kind = OptimizerKind::kAdadelta;
  c.lr = 1.0;
  c.rho = 0.95;
  cases.push_back({c, [] { return std::make_unique<optim::Adadelta>(1.0); }});
  c = RefConfig();
  c.kind = OptimizerKind::kLion;
  c.lr = 0.01;
  c.beta_2 = 0.99;
  cases.push_back({c, [] { return std::make_unique<optim::Lion>(0.01); }});
  c = RefConfig();
  c.kind = OptimizerKind::kFtrl;
  c.lr = 0.1;
  c.initial_accumulator = 0.1;
  c.l1 = 0.001;
  c.ftrl_beta = 0.5;
  cases.push_back({c, [] {
    optim::FtrlSettings s;
    s.l1_regularization_strength = 0.001;
    s.beta = 0.5;
    return std::make_unique<optim::Ftrl>(0.1, s);
  }});
  const std::vector<float> grads[4] = {{0.5f, -0.25f}, {0.1f, 0.3f}, {-0.2f, 0.05f}, {0.4f, -0.6f}};
  for (const Case& k : cases) {
    std::unique_ptr<optim::Optimizer> opt = k.make_optimizer();
    Tensor w = make({1.0f, -2.0f}, {2});
    std::vector<RefState> ref(2);
    ref[0].p = 1.0;
    ref[1].p = -2.0;
    for (RefState& r : ref) r.s[0] = k.c.initial_accumulator;
    for (int64_t t = 1; t <= 4; ++t) {
      opt->apply_gradients({make(grads[t - 1], {2})}, {w});
      for (int i = 0; i < 2; ++i) ref_step(k.c, t, grads[t - 1][i], ref[i]);
      const std::vector<float> got = read(w);
      for (int i = 0; i < 2; ++i) {
        ASSERT_NEAR(got[i], ref[i].p, 2e-5 * std::max(1.0, std::abs(ref[i].p)))
            << opt->type() << " step " << t << " element " << i;
      }
    }
    const std::vector<std::string> kinds = opt->slot_kinds();
    for (size_t j = 0; j < kinds.size(); ++j) {
      const std::vector<float> slot = read(opt->slot(w, kinds[j]));
      for (int i = 0; i < 2; ++i) {
        EXPECT_NEAR(slot[i], ref[i].s[j], 2e-5 * std::max(1e-3, std::abs(ref[i].s[j])))
            << opt->type() << " slot " << kinds[j];
      }
    }
  }
}

TEST(OptimOptimizer, NadamRebuildsItsScheduleProductFromTheStepCount) {
  // Nadam's u_product is a device scalar; after set_iterations it restarts from the count.
  test::CountingBackend counting;
  ScopedCpuBackendInterposer interpose(counting);
  RefConfig c;
  c.kind = OptimizerKind::kNadam;
  c.lr = 0.01;
  optim::Nadam nadam(0.01);
  nadam.set_iterations(7);
  Tensor w = make({1.0f}, {1});
  nadam.apply_gradients({make({0.5f}, {1})}, {w});
  nadam.apply_gradients({make({-0.3f}, {1})}, {w});
  EXPECT_EQ(counting.copies_to_host, 0);
  EXPECT_EQ(counting.synchronizes, 0);
  RefState ref;
  ref.p = 1.0;
  ref_step(c, 8, 0.5, ref);
  ref_step(c, 9, -0.3, ref);
  EXPECT_NEAR(read(w)[0], ref.p, 1e-6);
}

TEST(OptimOptimizer, VariablesInterleaveTheSlotsKerasCreatesTogether) {
  // Keras's add_optimizer_variables(vars, ["accumulator", "linear"]) lists variable 0's
  // accumulator and linear, then variable 1's; Adam's velocity_hat comes from a second call.
  optim::Ftrl ftrl(0.1);
  Tensor a = make({1.0f}, {1}), b = make({2.0f, 3.0f}, {2});
  ftrl.apply_gradients({make({0.5f}, {1}), make({0.1f, 0.2f}, {2})}, {a, b});
  std::vector<std::string> names;
  for (const auto& [name, value] : ftrl.variables()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"ftrl/iteration", "ftrl/learning_rate",
                                             "ftrl/variable_0_accumulator", "ftrl/variable_0_linear",
                                             "ftrl/variable_1_accumulator", "ftrl/variable_1_linear"}));
  optim::Adam adam(0.1, 0.9, 0.999, 1e-7, /*amsgrad=*/true);
  adam.apply_gradients({make({0.5f}, {1}), make({0.1f, 0.2f}, {2})}, {a, b});
  names.clear();
  for (const auto& [name, value] : adam.variables()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "adam/iteration", "adam/learning_rate", "adam/variable_0_momentum",
                       "adam/variable_0_velocity", "adam/variable_1_momentum",
                       "adam/variable_1_velocity", "adam/variable_0_velocity_hat",
                       "adam/variable_1_velocity_hat"}));
  // A restored accumulator replaces the initial value; an unrestored one starts there.
  optim::Adagrad adagrad(0.1, 0.5);
  adagrad.set_slot(a, "accumulator", make({2.0f}, {1}));
  EXPECT_EQ(read(adagrad.slot(a, "accumulator"))[0], 2.0f);
  adagrad.apply_gradients({make({1.0f}, {1})}, {a});
  EXPECT_EQ(read(adagrad.slot(a, "accumulator"))[0], 3.0f);
  adagrad.apply_gradients({make({0.0f, 0.0f}, {2})}, {b});
  EXPECT_EQ(read(adagrad.slot(b, "accumulator")), (std::vector<float>{0.5f, 0.5f}));
}

TEST(OptimOptimizer, NewOptimizersValidateTheirArguments) {
  expect_error(ErrorCode::kValue,
               "Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
               "degenerates to SignSGD. Received: beta_1=0.0.",
               [] { optim::Lion(0.001, 0.0); });
  expect_error(ErrorCode::kValue, "`beta_2` must be a float between [0.0, 1.0]. Received: beta_2=1.5",
               [] { optim::Lion(0.001, 0.9, 1.5); });
  auto ftrl = [](auto set) {
    optim::FtrlSettings s;
    set(s);
    optim::Ftrl(0.001, s);
  };
  expect_error(ErrorCode::kValue,
               "`learning_rate_power` needs to be negative or zero. Received: learning_rate_power=0.5.",
               [&] { ftrl([](optim::FtrlSettings& s) { s.learning_rate_power = 0.5; }); });
  expect_error(ErrorCode::kValue,
               "`initial_accumulator_value` needs to be positive or zero. Received: "
               "initial_accumulator_value=-1.0.",
               [&] { ftrl([](optim::FtrlSettings& s) { s.initial_accumulator_value = -1.0; }); });
  expect_error(ErrorCode::kValue,
               "`l2_shrinkage_regularization_strength` needs to be positive or zero. Received: "
               "l2_shrinkage_regularization_strength=-0.1.",
               [&] { ftrl([](optim::FtrlSettings& s) { s.l2_shrinkage_regularization_strength = -0.1; }); });
  expect_error(ErrorCode::kValue,
               "`initial_accumulator_value` must be a finite float >= 0. Received: "
               "initial_accumulator_value=-0.1",
               [] { optim::Adagrad(0.001, -0.1); });
  expect_error(ErrorCode::kValue, "`beta_1` must be a float between [0.0, 1.0). Received: beta_1=1.0",
               [] { optim::Nadam(0.001, 1.0); });
  expect_error(ErrorCode::kValue, "`beta_2` must be a float between [0.0, 1.0]. Received: beta_2=2.0",
               [] { optim::Adamax(0.001, 0.9, 2.0); });
  expect_error(ErrorCode::kValue, "`rho` must be a float between [0.0, 1.0]. Received: rho=-0.5",
               [] { optim::Adadelta(0.001, -0.5); });
}

// The two-pass optimizers and the moving average on the CPU: a zero-sized reduction is not
// special (Lamb's zero-norm ratio is 1), Adafactor's r and c have Keras's shapes, and the average
// after the first step is the variable itself (Keras's momentum 0 on step 1), then
// m * average + (1 - m) * variable.
TEST(OptimOptimizer, TwoPassSlotsAndMovingAverage) {
  optim::OptimizerOptions ema;
  ema.use_ema = true;
  ema.ema_momentum = 0.5;
  optim::Adafactor adafactor(0.01, {}, ema);
  Tensor w = make({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make({0.5f}, {1});
  adafactor.apply_gradients({make({1, -1, 2, 0, 1, 1}, {2, 3}), make({0.25f}, {1})}, {w, b});
  EXPECT_EQ(adafactor.slot(w, "r").shape(), (Shape{2}));
  EXPECT_EQ(adafactor.slot(w, "c").shape(), (Shape{3}));
  EXPECT_EQ(adafactor.slot(b, "r").shape(), (Shape{}));
  EXPECT_EQ(read(adafactor.average(w)), read(w));
  const std::vector<float> after_first = read(w);
  adafactor.apply_gradients({make({1, 1, 1, 1, 1, 1}, {2, 3}), make({1.0f}, {1})}, {w, b});
  const std::vector<float> average = read(adafactor.average(w)), now = read(w);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(average[i], 0.5f * after_first[i] + 0.5f * now[i]);
  adafactor.finalize_variable_values({w});
  EXPECT_EQ(read(w), average);

  optim::Lamb lamb(0.1);
  Tensor zero = make({0, 0}, {2});
  lamb.apply_gradients({make({1, -1}, {2})}, {zero});
  // ratio 1 (||w|| = 0): Adam's first step of size lr in the gradient's sign.
  const std::vector<float> moved = read(zero);
  EXPECT_NEAR(moved[0], -0.1f, 1e-5f);
  EXPECT_NEAR(moved[1], 0.1f, 1e-5f);
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND
// Lamb and Adafactor (both passes, the device reductions between them, the factored moments),
// ScheduleFreeAdamW (its device step factors, the momentum copied from the variable) and the
// moving average on a GPU give the CPU's variables.
TEST_F(OptimCuda, TwoPassOptimizersMatchTheCpu) {
  const LogicalDevice gpu = DeviceRegistry::instance().logical_devices(DeviceType::kGPU)[0];
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random = [&](const Shape& shape) {
    std::vector<float> v(size_t(shape_numel(shape)));
    for (float& x : v) x = normal(rng);
    return make(v, shape);
  };
  const std::vector<Shape> shapes = {{64, 33}, {33}, {3, 40, 7}};
  for (int which = 0; which < 3; ++which) {
    optim::OptimizerOptions options;
    options.use_ema = true;
    options.weight_decay = 0.01;
    std::unique_ptr<optim::Optimizer> on_cpu, on_gpu;
    if (which == 0) {
      on_cpu = std::make_unique<optim::Lamb>(0.01, 0.9, 0.999, 1e-7, options);
      on_gpu = std::make_unique<optim::Lamb>(0.01, 0.9, 0.999, 1e-7, options);
    } else if (which == 1) {
      on_cpu = std::make_unique<optim::Adafactor>(0.5, optim::AdafactorSettings{}, options);
      on_gpu = std::make_unique<optim::Adafactor>(0.5, optim::AdafactorSettings{}, options);
    } else {
      on_cpu = std::make_unique<optim::ScheduleFreeAdamW>(0.05, 0.9, 0.999, 1e-8, 2.0, options);
      on_gpu = std::make_unique<optim::ScheduleFreeAdamW>(0.05, 0.9, 0.999, 1e-8, 2.0, options);
    }
    std::vector<Tensor> cpu_vars, gpu_vars;
    for (const Shape& s : shapes) {
      cpu_vars.push_back(random(s));
      gpu_vars.push_back(to_device(cpu_vars.back(), gpu));
    }
    for (int step = 0; step < 3; ++step) {
      std::vector<Tensor> cpu_grads, gpu_grads;
      for (const Shape& s : shapes) {
        cpu_grads.push_back(random(s));
        gpu_grads.push_back(to_device(cpu_grads.back(), gpu));
      }
      on_cpu->apply_gradients(cpu_grads, cpu_vars);
      on_gpu->apply_gradients(gpu_grads, gpu_vars);
    }
    for (size_t k = 0; k < shapes.size(); ++k) {
      const std::vector<float> want = read(cpu_vars[k]);
      const std::vector<float> got = read(to_device(gpu_vars[k], LogicalDevice{}));
      const std::vector<float> want_avg = read(on_cpu->average(cpu_vars[k]));
      const std::vector<float> got_avg =
          read(to_device(on_gpu->average(gpu_vars[k]), LogicalDevice{}));
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, std::abs(want[i])))
            << on_cpu->type() << " variable " << k << " element " << i;
        ASSERT_NEAR(got_avg[i], want_avg[i], 1e-5f * std::max(1.0f, std::abs(want_avg[i])));
      }
    }
  }
}
#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
