// The fused recurrent op (ops/rnn.h, Backend::rnn_forward/rnn_backward on oneDNN's RNN
// primitives) against Keras's cell equations written out here as a plain loop in double
// precision: the forward values, and every input's gradient against central differences of that
// loop. The weights are random and the GRU's input and recurrent bias rows differ, so a wrong
// gate order, bias fold or layout shows.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/onednn_ops.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/rnn.h"
#include "ops/shape_ops.h"
#include "cuda_test_device.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::make;
using test::read;

struct Dims {
  int64_t batch = 2, time = 3, input = 3, units = 2;
};

// The op's inputs as flat float vectors (Keras's layouts), in fused_rnn's argument order.
struct Inputs {
  std::vector<float> x, h0, c0, kernel, recurrent_kernel, bias;
  std::vector<std::vector<float>*> all() {
    return {&x, &h0, &c0, &kernel, &recurrent_kernel, &bias};
  }
};

std::vector<float> draw(std::mt19937& rng, int64_t n, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = u(rng);
  return v;
}

Inputs random_inputs(RnnCell cell, const Dims& d, unsigned seed) {
  std::mt19937 rng(seed);
  const int64_t width = rnn_gates(cell) * d.units;
  Inputs in;
  in.x = draw(rng, d.batch * d.time * d.input, 1.0f);
  in.h0 = draw(rng, d.batch * d.units, 0.5f);
  in.c0 = cell == RnnCell::kLstm ? draw(rng, d.batch * d.units, 0.5f) : std::vector<float>{};
  in.kernel = draw(rng, d.input * width, 0.7f);
  in.recurrent_kernel = draw(rng, d.units * width, 0.7f);
  in.bias = draw(rng, (cell == RnnCell::kGru ? 2 : 1) * width, 0.5f);
  return in;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// Keras's cells over the sequence: y (batch, time, units), h_last, c_last (LSTM).
struct Outputs {
  std::vector<double> y, h, c;
};
Outputs reference(RnnCell cell, const Dims& d, const Inputs& in) {
  const int64_t u = d.units, g = rnn_gates(cell), w = g * u;
  Outputs out;
  out.y.assign(static_cast<size_t>(d.batch * d.time * u), 0.0);
  out.h.assign(in.h0.begin(), in.h0.end());
  out.c.assign(in.c0.begin(), in.c0.end());
  for (int64_t t = 0; t < d.time; ++t) {
    for (int64_t n = 0; n < d.batch; ++n) {
      std::vector<double> xp(static_cast<size_t>(w)), hp(static_cast<size_t>(w));
      for (int64_t j = 0; j < w; ++j) {
        double a = in.bias[j], r = cell == RnnCell::kGru ? in.bias[w + j] : 0.0;
        for (int64_t i = 0; i < d.input; ++i) {
          a += double(in.x[(n * d.time + t) * d.input + i]) * in.kernel[i * w + j];
        }
        for (int64_t k = 0; k < u; ++k) r += out.h[n * u + k] * in.recurrent_kernel[k * w + j];
        xp[j] = a;
        hp[j] = r;
      }
      for (int64_t k = 0; k < u; ++k) {
        double& h = out.h[n * u + k];
        if (cell == RnnCell::kTanh) {
          h = std::tanh(xp[k] + hp[k]);
        } else if (cell == RnnCell::kLstm) {
          auto gate = [&](int q) { return xp[q * u + k] + hp[q * u + k]; };
          double& c = out.c[n * u + k];
          c = sigmoid(gate(1)) * c + sigmoid(gate(0)) * std::tanh(gate(2));
          h = sigmoid(gate(3)) * std::tanh(c);
        } else {
          const double z = sigmoid(xp[k] + hp[k]);
          const double r = sigmoid(xp[u + k] + hp[u + k]);
          const double candidate = std::tanh(xp[2 * u + k] + r * hp[2 * u + k]);
          h = z * h + (1 - z) * candidate;
        }
      }
    }
    for (int64_t n = 0; n < d.batch; ++n) {
      for (int64_t k = 0; k < u; ++k) out.y[(n * d.time + t) * u + k] = out.h[n * u + k];
    }
  }
  return out;
}

// The weights of the scalar the gradients are taken of: sum(y * wy) + sum(h * wh) + sum(c * wc).
struct LossWeights {
  std::vector<float> y, h, c;
};
double reference_loss(RnnCell cell, const Dims& d, const Inputs& in, const LossWeights& lw) {
  const Outputs o = reference(cell, d, in);
  double s = 0;
  for (size_t i = 0; i < o.y.size(); ++i) s += o.y[i] * lw.y[i];
  for (size_t i = 0; i < o.h.size(); ++i) s += o.h[i] * lw.h[i];
  for (size_t i = 0; i < o.c.size(); ++i) s += o.c[i] * lw.c[i];
  return s;
}

struct OpTensors {
  std::vector<Tensor> inputs;  // x, h0, c0 (undefined but for the LSTM), kernel, rk, bias
};
OpTensors tensors_of(RnnCell cell, const Dims& d, const Inputs& in, bool requires_grad) {
  const int64_t w = rnn_gates(cell) * d.units;
  const std::vector<Shape> shapes = {{d.batch, d.time, d.input},
                                     {d.batch, d.units},
                                     {d.batch, d.units},
                                     {d.input, w},
                                     {d.units, w},
                                     cell == RnnCell::kGru ? Shape{2, w} : Shape{w}};
  OpTensors t;
  Inputs copy = in;
  const auto values = copy.all();
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (values[i]->empty()) {
      t.inputs.emplace_back();
      continue;
    }
    Tensor v = make(*values[i], shapes[i]);
    v.impl()->requires_grad = requires_grad;
    t.inputs.push_back(v);
  }
  return t;
}

std::vector<Tensor> run_op(RnnCell cell, const OpTensors& t) {
  const auto& in = t.inputs;
  return fused_rnn(cell, in[0], in[1], in[2], in[3], in[4], in[5]);
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want, double tol,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol) << what << "[" << i << "]";
  }
}

std::string cell_test_name(const ::testing::TestParamInfo<RnnCell>& info) {
  return rnn_cell_name(info.param);
}

class FusedRnn : public ::testing::TestWithParam<RnnCell> {};

TEST_P(FusedRnn, ForwardMatchesKerasEquations) {
  const RnnCell cell = GetParam();
  const Dims d;
  const Inputs in = random_inputs(cell, d, 7);
  const Outputs want = reference(cell, d, in);
  for (bool training : {false, true}) {
    GradModeGuard mode(training);
    const std::vector<Tensor> out = run_op(cell, tensors_of(cell, d, in, training));
    ASSERT_EQ(out.size(), cell == RnnCell::kLstm ? 3u : 2u);
    EXPECT_EQ(out[0].shape(), (Shape{d.batch, d.time, d.units}));
    expect_near_all(read(out[0]), want.y, 1e-5, "y");
    expect_near_all(read(out[1]), want.h, 1e-5, "h_last");
    if (cell == RnnCell::kLstm) expect_near_all(read(out[2]), want.c, 1e-5, "c_last");
  }
}

TEST_P(FusedRnn, GradientsMatchCentralDifferencesOfKerasEquations) {
  const RnnCell cell = GetParam();
  const Dims d;
  const Inputs in = random_inputs(cell, d, 11);
  std::mt19937 rng(3);
  const LossWeights lw{draw(rng, d.batch * d.time * d.units, 1.0f),
                       draw(rng, d.batch * d.units, 1.0f),
                       cell == RnnCell::kLstm ? draw(rng, d.batch * d.units, 1.0f)
                                              : std::vector<float>{}};
  GradModeGuard on(true);
  const OpTensors t = tensors_of(cell, d, in, true);
  const std::vector<Tensor> out = run_op(cell, t);
  Tensor loss = reduce(ReduceOp::kSum, mul(out[0], make(lw.y, out[0].shape())), {}, false);
  loss = add(loss, reduce(ReduceOp::kSum, mul(out[1], make(lw.h, out[1].shape())), {}, false));
  if (cell == RnnCell::kLstm) {
    loss = add(loss, reduce(ReduceOp::kSum, mul(out[2], make(lw.c, out[2].shape())), {}, false));
  }
  std::vector<Tensor> sources;
  for (const Tensor& s : t.inputs) {
    if (s.defined()) sources.push_back(s);
  }
  const std::vector<Tensor> grads = compute_gradients({loss}, {Tensor()}, sources);
  const char* names[] = {"x", "h0", "c0", "kernel", "recurrent_kernel", "bias"};
  Inputs probe = in;
  const auto values = probe.all();
  size_t source = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]->empty()) continue;
    std::vector<double> want(values[i]->size());
    for (size_t j = 0; j < want.size(); ++j) {
      const float kept = (*values[i])[j];
      const double step = 1e-3;
      (*values[i])[j] = kept + static_cast<float>(step);
      const double up = reference_loss(cell, d, probe, lw);
      (*values[i])[j] = kept - static_cast<float>(step);
      const double down = reference_loss(cell, d, probe, lw);
      (*values[i])[j] = kept;
      want[j] = (up - down) / (2 * step);
    }
    ASSERT_TRUE(grads[source].defined()) << names[i];
    expect_near_all(read(grads[source]), want, 2e-3, names[i]);
    ++source;
  }
}

// Outputs gone before the backward (h_last and c_last here, as when a layer returns only the
// sequence) get no gradient from the engine: the op's backward counts them as zeros.
TEST_P(FusedRnn, OutputsWithoutGradientCountAsZero) {
  const RnnCell cell = GetParam();
  const Dims d;
  const Inputs in = random_inputs(cell, d, 5);
  const LossWeights lw{std::vector<float>(d.batch * d.time * d.units, 1.0f),
                       std::vector<float>(d.batch * d.units, 0.0f),
                       cell == RnnCell::kLstm ? std::vector<float>(d.batch * d.units, 0.0f)
                                              : std::vector<float>{}};
  GradModeGuard on(true);
  const OpTensors t = tensors_of(cell, d, in, true);
  const Tensor y = run_op(cell, t)[0];
  const Tensor loss = reduce(ReduceOp::kSum, y, {}, false);
  const std::vector<Tensor> grads = compute_gradients({loss}, {Tensor()}, {t.inputs[3]});
  Inputs probe = in;
  std::vector<double> want(probe.kernel.size());
  for (size_t j = 0; j < want.size(); ++j) {
    const float kept = probe.kernel[j];
    probe.kernel[j] = kept + 1e-3f;
    const double up = reference_loss(cell, d, probe, lw);
    probe.kernel[j] = kept - 1e-3f;
    const double down = reference_loss(cell, d, probe, lw);
    probe.kernel[j] = kept;
    want[j] = (up - down) / 2e-3;
  }
  expect_near_all(read(grads[0]), want, 2e-3, "kernel");
}

INSTANTIATE_TEST_SUITE_P(Cells, FusedRnn,
                         ::testing::Values(RnnCell::kLstm, RnnCell::kGru, RnnCell::kTanh),
                         cell_test_name);

// A training step that repeats its shapes makes no oneDNN primitive after the first: the RNN
// primitives and their weight reorders are cached per shape.
TEST_P(FusedRnn, ARepeatedStepCreatesNoPrimitive) {
  const RnnCell cell = GetParam();
  const Dims d;
  const Inputs in = random_inputs(cell, d, 9);
  auto step = [&] {
    GradModeGuard on(true);
    const OpTensors t = tensors_of(cell, d, in, true);
    const Tensor loss = reduce(ReduceOp::kSum, run_op(cell, t)[0], {}, false);
    compute_gradients({loss}, {Tensor()}, {t.inputs[0], t.inputs[3]});
  };
  step();
  const int64_t created = cpu::onednn_primitives_created();
  step();
  step();
  EXPECT_EQ(cpu::onednn_primitives_created(), created);
}

TEST(FusedRnnArguments, AWrongBiasShapeNamesTheExpectedOne) {
  const Dims d;
  Inputs in = random_inputs(RnnCell::kGru, d, 1);
  OpTensors t = tensors_of(RnnCell::kGru, d, in, false);
  t.inputs[5] = make(std::vector<float>(3 * d.units, 0.0f), {3 * d.units});  // Keras's reset_after=False bias
  test::expect_error(ErrorCode::kInvalidArgument, "bias of the fused gru must be float32 of shape (2, 6)",
                     [&] { run_op(RnnCell::kGru, t); });
}

TEST(FusedRnnArguments, OnlyTheLstmTakesACellState) {
  const Dims d;
  Inputs in = random_inputs(RnnCell::kTanh, d, 1);
  OpTensors t = tensors_of(RnnCell::kTanh, d, in, false);
  t.inputs[2] = make(std::vector<float>(d.batch * d.units, 0.0f), {d.batch, d.units});
  test::expect_error(ErrorCode::kInvalidArgument, "has no cell state c",
                     [&] { run_op(RnnCell::kTanh, t); });
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND

// cuDNN's RNN (backends/cuda/cudnn_rnn.cc) against the CPU op: outputs and every gradient, at a
// size with several batch rows and steps (a GPU machine; skipped elsewhere).
class CudaFusedRnn : public CudaDeviceTest, public ::testing::WithParamInterface<RnnCell> {};

// The op's outputs and every defined input's gradient of sum(output_i * weight_i), as host
// values; `device` holds the op's inputs.
std::vector<std::vector<float>> outputs_and_gradients(RnnCell cell, const Dims& d,
                                                      const Inputs& in,
                                                      const LogicalDevice& device) {
  GradModeGuard on(true);
  OpTensors t = tensors_of(cell, d, in, false);
  for (Tensor& v : t.inputs) {
    if (!v.defined()) continue;
    v = to_device(v, device);
    v.impl()->requires_grad = true;
  }
  const std::vector<Tensor> out = run_op(cell, t);
  std::mt19937 rng(21);
  Tensor loss;
  for (const Tensor& o : out) {
    const Tensor w = to_device(make(draw(rng, o.numel(), 1.0f), o.shape()), device);
    const Tensor term = reduce(ReduceOp::kSum, mul(o, w), {}, false);
    loss = loss.defined() ? add(loss, term) : term;
  }
  std::vector<Tensor> sources;
  for (const Tensor& v : t.inputs) {
    if (v.defined()) sources.push_back(v);
  }
  std::vector<std::vector<float>> values;
  for (const Tensor& o : out) values.push_back(read(o));
  for (const Tensor& g : compute_gradients({loss}, {Tensor()}, sources)) values.push_back(read(g));
  return values;
}

TEST_P(CudaFusedRnn, MatchesTheCpuOpForwardAndBackward) {
  const RnnCell cell = GetParam();
  Dims d;
  d.batch = 5;
  d.time = 7;
  d.input = 6;
  d.units = 8;
  const Inputs in = random_inputs(cell, d, 13);
  const auto gpu = DeviceRegistry::instance().logical_devices(DeviceType::kGPU).at(0);
  const auto want = outputs_and_gradients(cell, d, in, test::cpu());
  const auto got = outputs_and_gradients(cell, d, in, gpu);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].size(), want[k].size()) << k;
    for (size_t i = 0; i < got[k].size(); ++i) {
      EXPECT_NEAR(got[k][i], want[k][i], 1e-4 + 1e-4 * std::fabs(want[k][i])) << k << "[" << i << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, CudaFusedRnn,
                         ::testing::Values(RnnCell::kLstm, RnnCell::kGru, RnnCell::kTanh),
                         cell_test_name);

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
