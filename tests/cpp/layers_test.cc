// The C++ Keras layers (cpp/nn): output shapes and weight shapes for the course's seed CNN,
// parameter counts against Keras's numbers, initializer statistics against their formulas,
// Keras-style error messages, a Dense forward against a hand-written loop in double, and that
// Conv2D/Dense run a relu activation fused into their product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "nn/activation_layer.h"
#include "nn/activations.h"
#include "nn/batch_normalization.h"
#include "nn/conv1d.h"
#include "nn/conv2d.h"
#include "nn/conv2d_transpose.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/flatten.h"
#include "nn/global_average_pooling2d.h"
#include "nn/initializers.h"
#include "nn/layer_normalization.h"
#include "nn/multi_head_attention.h"
#include "nn/pooling2d.h"
#include "backends/backend_interposer.h"
#include "counting_backend.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {
namespace {

LogicalDevice cpu() { return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0); }

std::vector<float> values(const Tensor& t) {
  const Tensor c = contiguous(cast(to_device(t, cpu()), DType::kFloat32));
  const float* p = static_cast<const float*>(c.data());
  return std::vector<float>(p, p + c.numel());
}

Tensor make(const Shape& shape, const std::vector<float>& data) {
  return from_host(data.data(), shape, DType::kFloat32, cpu());
}

// The message of the gpuaccel::Error `fn` throws ("" when it throws none), and its code.
template <typename Fn>
std::string error_of(Fn fn, ErrorCode* code = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(LayersShapes, SeedCnnShapesAndParamCount) {
  // Keras: Conv2D(32,3,relu,(28,28,1)) MaxPool(2) Conv2D(64,3) MaxPool(2) Conv2D(64,3) Flatten
  // Dense(64) Dense(10): 93,322 parameters.
  std::vector<LayerPtr> layers = {
      std::make_shared<Conv2D>("conv2d", 32, 3, 3, 1, 1, "valid", 1, 1, "relu"),
      std::make_shared<MaxPooling2D>("max_pooling2d", 2, 2),
      std::make_shared<Conv2D>("conv2d_1", 64, 3, 3, 1, 1, "valid", 1, 1, "relu"),
      std::make_shared<MaxPooling2D>("max_pooling2d_1", 2, 2),
      std::make_shared<Conv2D>("conv2d_2", 64, 3, 3, 1, 1, "valid", 1, 1, "relu"),
      std::make_shared<Flatten>("flatten"),
      std::make_shared<Dense>("dense", 64, "relu"),
      std::make_shared<Dense>("dense_1", 10)};
  const std::vector<Shape> expected = {{-1, 26, 26, 32}, {-1, 13, 13, 32}, {-1, 11, 11, 64},
                                       {-1, 5, 5, 64},   {-1, 3, 3, 64},   {-1, 576},
                                       {-1, 64},         {-1, 10}};
  const std::vector<int64_t> params = {320, 0, 18496, 0, 36928, 0, 36928, 650};
  Shape shape = {-1, 28, 28, 1};
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i]->build({shape});
    EXPECT_TRUE(layers[i]->built());
    shape = layers[i]->output_shape({shape});
    EXPECT_EQ(shape, expected[i]) << layers[i]->name();
    EXPECT_EQ(layers[i]->count_params(), params[i]) << layers[i]->name();
    total += layers[i]->count_params();
  }
  EXPECT_EQ(total, 93322);
  // Running the stack on a batch gives the same shapes.
  Tensor x = randn({2, 28, 28, 1}, DType::kFloat32, cpu());
  for (auto& layer : layers) x = layer->call({x}, false);
  EXPECT_EQ(x.shape(), (Shape{2, 10}));
}

TEST(LayersShapes, WeightNamesShapesAndTrainability) {
  Conv2D conv("c", 8, 3, 2, 1, 1, "same", 1, 1);
  conv.build({{-1, 10, 9, 3}});
  ASSERT_EQ(conv.weights().size(), 2u);
  EXPECT_EQ(conv.weights()[0].name, "kernel");
  EXPECT_EQ(conv.weights()[0].value.shape(), (Shape{3, 2, 3, 8}));
  EXPECT_EQ(conv.weights()[1].value.shape(), (Shape{8}));
  EXPECT_EQ(conv.output_shape({{-1, 10, 9, 3}}), (Shape{-1, 10, 9, 8}));
  EXPECT_EQ(Conv2D("s", 4, 3, 3, 2, 2, "valid", 1, 1).output_shape({{-1, 10, 9, 3}}), (Shape{-1, 4, 4, 4}));
  EXPECT_EQ(Conv2D("d", 4, 3, 3, 1, 1, "valid", 2, 2).output_shape({{-1, 10, 9, 3}}), (Shape{-1, 6, 5, 4}));
  // Keras 3's transposed sizes: 'same' in * stride; 'valid' (in - 1) * stride + kernel, plus
  // output_padding when given.
  EXPECT_EQ(Conv2DTranspose("t", 4, 3, 3, 2, 2, "same", -1, -1, 1, 1).output_shape({{-1, 5, 6, 3}}),
            (Shape{-1, 10, 12, 4}));
  EXPECT_EQ(Conv2DTranspose("t", 4, 3, 3, 2, 2, "valid", 1, 1, 1, 1).output_shape({{-1, 5, 6, 3}}),
            (Shape{-1, 12, 14, 4}));

  BatchNormalization bn("bn");
  bn.build({{-1, 5, 7}});
  ASSERT_EQ(bn.weights().size(), 4u);
  const char* names[] = {"gamma", "beta", "moving_mean", "moving_variance"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(bn.weights()[i].name, names[i]);
    EXPECT_EQ(bn.weights()[i].trainable, i < 2);
    EXPECT_EQ(bn.weights()[i].value.impl()->requires_grad, i < 2);
  }
  EXPECT_EQ(bn.trainable_weights().size(), 2u);
  bn.set_trainable(false);
  EXPECT_EQ(bn.trainable_weights().size(), 0u);
  EXPECT_EQ(bn.count_params(), 28);

  MultiHeadAttention mha("mha", 2, 4, 0, 0.0, true, 0);
  mha.build({{-1, 5, 6}, {-1, 7, 3}});
  const std::vector<std::pair<std::string, Shape>> mha_weights = {
      {"query/kernel", {6, 2, 4}}, {"query/bias", {2, 4}}, {"key/kernel", {3, 2, 4}},
      {"key/bias", {2, 4}},        {"value/kernel", {3, 2, 4}}, {"value/bias", {2, 4}},
      {"attention_output/kernel", {2, 4, 6}}, {"attention_output/bias", {6}}};
  ASSERT_EQ(mha.weights().size(), mha_weights.size());
  for (size_t i = 0; i < mha_weights.size(); ++i) {
    EXPECT_EQ(mha.weights()[i].name, mha_weights[i].first);
    EXPECT_EQ(mha.weights()[i].value.shape(), mha_weights[i].second);
  }
  EXPECT_EQ(mha.output_shape({{-1, 5, 6}, {-1, 7, 3}}), (Shape{-1, 5, 6}));
  const Tensor out = mha.call({randn({2, 5, 6}, DType::kFloat32, cpu()), randn({2, 7, 3}, DType::kFloat32, cpu())}, false);
  EXPECT_EQ(out.shape(), (Shape{2, 5, 6}));

  Embedding emb("e", 10, 3);
  emb.build({{-1, 4}});
  EXPECT_EQ(emb.output_shape({{-1, 4}}), (Shape{-1, 4, 3}));
  EXPECT_EQ(emb.weights()[0].value.shape(), (Shape{10, 3}));

  GlobalAveragePooling2D gap("g"), gap_keep("gk", true);
  EXPECT_EQ(gap.output_shape({{-1, 5, 5, 3}}), (Shape{-1, 3}));
  EXPECT_EQ(gap_keep.output_shape({{-1, 5, 5, 3}}), (Shape{-1, 1, 1, 3}));
  EXPECT_EQ(AveragePooling2D("a", 3, 3, 2, 2, "same").output_shape({{-1, 7, 8, 2}}), (Shape{-1, 4, 4, 2}));
  EXPECT_EQ(MaxPooling2D("m", 3, 3, 0, 0, "valid").output_shape({{-1, 7, 8, 2}}), (Shape{-1, 2, 2, 2}));
  EXPECT_EQ(Flatten("f").output_shape({{-1, 3, -1}}), (Shape{-1, -1}));
  EXPECT_EQ(Flatten("f").output_shape({{-1}}), (Shape{-1, 1}));
}

TEST(LayersForward, DenseMatchesHandLoop) {
  Dense dense("dense", 3, "relu");
  dense.build({{-1, 4}});
  std::vector<float> w = {0.5f, -1.f, 0.25f, 2.f, 0.f, -0.5f, -1.5f, 1.f, 0.75f, 0.1f, 0.2f, -0.3f};
  std::vector<float> b = {0.1f, -0.2f, 0.3f};
  copy_into(make({4, 3}, w), dense.weights()[0].value);
  copy_into(make({3}, b), dense.weights()[1].value);
  std::vector<float> x = {1, 2, -1, 0.5f, -2, 0.25f, 3, 1};
  const std::vector<float> y = values(dense.call({make({2, 4}, x)}, false));
  ASSERT_EQ(y.size(), 6u);
  for (int n = 0; n < 2; ++n) {
    for (int j = 0; j < 3; ++j) {
      double acc = b[j];
      for (int k = 0; k < 4; ++k) acc += double(x[n * 4 + k]) * w[k * 3 + j];
      EXPECT_NEAR(y[n * 3 + j], std::max(acc, 0.0), 1e-5) << n << "," << j;
    }
  }
  // Rank 3 input: applied on the last axis.
  EXPECT_EQ(dense.call({randn({2, 5, 4}, DType::kFloat32, cpu())}, false).shape(), (Shape{2, 5, 3}));
}

TEST(LayersForward, ActivationsMatchFormulas) {
  const std::vector<float> x = {-3.f, -0.5f, 0.f, 0.7f, 4.f};
  const Tensor t = make({5}, x);
  auto check = [&](const char* name, double (*f)(double)) {
    const std::vector<float> y = values(apply_activation(parse_activation(name, "test"), t));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], f(x[i]), 1e-5) << name << " at " << x[i];
  };
  check("elu", [](double v) { return v > 0 ? v : std::exp(v) - 1; });
  check("selu", [](double v) { return 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (std::exp(v) - 1)); });
  check("softplus", [](double v) { return std::log1p(std::exp(v)); });
  check("softsign", [](double v) { return v / (1 + std::fabs(v)); });
  check("swish", [](double v) { return v / (1 + std::exp(-v)); });
  check("silu", [](double v) { return v / (1 + std::exp(-v)); });
  check("leaky_relu", [](double v) { return v > 0 ? v : 0.2 * v; });
  check("relu6", [](double v) { return std::min(std::max(v, 0.0), 6.0); });
  check("gelu", [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  check("linear", [](double v) { return v; });
  check("None", [](double v) { return v; });
}

struct Stats {
  double mean = 0, std = 0, min = 1e30, max = -1e30;
};
Stats stats_of(const Tensor& t) {
  const std::vector<float> v = values(t);
  Stats s;
  for (float f : v) {
    s.mean += f;
    s.min = std::min<double>(s.min, f);
    s.max = std::max<double>(s.max, f);
  }
  s.mean /= double(v.size());
  for (float f : v) s.std += (f - s.mean) * (f - s.mean);
  s.std = std::sqrt(s.std / double(v.size()));
  return s;
}

TEST(LayersInitializers, FansFollowKeras) {
  EXPECT_EQ(compute_fans({}).fan_in, 1);
  EXPECT_EQ(compute_fans({7}).fan_in, 7);
  EXPECT_EQ(compute_fans({7}).fan_out, 7);
  EXPECT_EQ(compute_fans({3, 5}).fan_in, 3);
  EXPECT_EQ(compute_fans({3, 5}).fan_out, 5);
  EXPECT_EQ(compute_fans({3, 3, 16, 32}).fan_in, 3 * 3 * 16);
  EXPECT_EQ(compute_fans({3, 3, 16, 32}).fan_out, 3 * 3 * 32);
}

TEST(LayersInitializers, StatisticsMatchFormulas) {
  const Shape shape = {5, 5, 40, 80};  // 80,000 draws; fan_in 1000, fan_out 2000
  const double fan_in = 1000, fan_out = 2000, fan_avg = 1500;
  const double n = 80000;
  struct Case {
    const char* name;
    bool normal;
    double expected_std;
  };
  const Case cases[] = {
      {"glorot_uniform", false, std::sqrt(1.0 / fan_avg)}, {"glorot_normal", true, std::sqrt(1.0 / fan_avg)},
      {"he_uniform", false, std::sqrt(2.0 / fan_in)},     {"he_normal", true, std::sqrt(2.0 / fan_in)},
      {"lecun_uniform", false, std::sqrt(1.0 / fan_in)},  {"lecun_normal", true, std::sqrt(1.0 / fan_in)},
      {"random_normal", true, 0.05},                       {"random_uniform", false, 0.05 / std::sqrt(3.0)},
      {"truncated_normal", true, 0.05 * kTruncatedStddevCorrection},
  };
  (void)fan_out;
  for (const Case& c : cases) {
    const Stats s = stats_of(initialize(c.name, shape, cpu(), "test"));
    // Standard error of the mean is std/sqrt(n); of the std, about std/sqrt(2n).
    EXPECT_NEAR(s.mean, 0.0, 5 * c.expected_std / std::sqrt(n)) << c.name;
    EXPECT_NEAR(s.std, c.expected_std, 0.02 * c.expected_std) << c.name;
    if (!c.normal) {
      const double limit = c.expected_std * std::sqrt(3.0);
      EXPECT_LE(s.max, limit) << c.name;
      EXPECT_GE(s.min, -limit) << c.name;
      EXPECT_GT(s.max, 0.99 * limit) << c.name;
    }
  }
  // Truncated normals stay within 2 of their own (uncorrected) standard deviations.
  for (const char* name : {"glorot_normal", "he_normal", "lecun_normal", "truncated_normal"}) {
    const double sigma = std::string(name) == "truncated_normal" ? 0.05
                         : std::string(name) == "he_normal"      ? std::sqrt(2.0 / fan_in) / kTruncatedStddevCorrection
                         : std::string(name) == "lecun_normal"   ? std::sqrt(1.0 / fan_in) / kTruncatedStddevCorrection
                                                                 : std::sqrt(1.0 / fan_avg) / kTruncatedStddevCorrection;
    const Stats s = stats_of(initialize(name, shape, cpu(), "test"));
    EXPECT_LE(s.max, 2 * sigma * (1 + 1e-6)) << name;
    EXPECT_GE(s.min, -2 * sigma * (1 + 1e-6)) << name;
    EXPECT_GT(s.max, 1.9 * sigma) << name;
  }
  const Stats z = stats_of(initialize("zeros", {10}, cpu(), "t"));
  EXPECT_EQ(z.min, 0);
  EXPECT_EQ(z.max, 0);
  const Stats o = stats_of(initialize("Ones", {10}, cpu(), "t"));
  EXPECT_EQ(o.min, 1);
  EXPECT_EQ(o.max, 1);
}

// Conv2D/Conv1D(groups=): Keras's kernel (k..., in / groups, filters), the grouped conv2d op
// (each filter reads its group's channels only), and Keras's divisibility errors.
TEST(LayersShapes, GroupedConvolutionKernelsAndErrors) {
  Conv2D conv("g", 6, 3, 3, 1, 1, "same", 1, 1, "linear", false, "glorot_uniform", "zeros", 2);
  conv.build({{-1, 5, 5, 4}});
  EXPECT_EQ(conv.weights()[0].value.shape(), (Shape{3, 3, 2, 6}));
  // An input whose second channel pair is zero leaves the second group's filters at zero.
  std::vector<float> image(5 * 5 * 4, 0.0f);
  for (size_t i = 0; i < image.size(); i += 4) image[i] = image[i + 1] = 1.0f;
  const Tensor y = conv.call({make({1, 5, 5, 4}, image)}, false);
  const std::vector<float> out = values(y);
  ASSERT_EQ(out.size(), 5u * 5u * 6u);
  double first = 0, second = 0;
  for (size_t i = 0; i < out.size(); ++i) (i % 6 < 3 ? first : second) += std::fabs(out[i]);
  EXPECT_GT(first, 0.0);
  EXPECT_EQ(second, 0.0);
  Conv1D conv1d("g1", 4, 2, 1, "valid", 1, "linear", true, "glorot_uniform", "zeros", 4);
  conv1d.build({{-1, 6, 8}});
  EXPECT_EQ(conv1d.weights()[0].value.shape(), (Shape{2, 2, 4}));

  std::string msg = error_of([] { Conv2D("c", 5, 3, 3, 1, 1, "valid", 1, 1, "linear", true,
                                         "glorot_uniform", "zeros", 2); });
  EXPECT_TRUE(contains(msg, "The number of filters must be evenly divisible by the number of "
                            "groups. Received: groups=2, filters=5.")) << msg;
  msg = error_of([] { Conv1D("c", 4, 3, 1, "valid", 1, "linear", true, "glorot_uniform",
                             "zeros", 0); });
  EXPECT_TRUE(contains(msg, "The number of groups must be a positive integer. Received: groups=0.")) << msg;
  Conv2D unbuilt("u", 6, 3, 3, 1, 1, "same", 1, 1, "linear", true, "glorot_uniform", "zeros", 2);
  msg = error_of([&] { unbuilt.build({{-1, 5, 5, 3}}); });
  EXPECT_TRUE(contains(msg, "The number of input channels must be evenly divisible by the number "
                            "of groups. Received groups=2, but the input has 3 channels")) << msg;
}

TEST(LayersErrors, MessagesNameTheProblem) {
  ErrorCode code{};
  Conv2D conv("conv2d", 32, 3, 3, 1, 1, "valid", 1, 1);
  std::string msg = error_of([&] { conv.build({{-1, 28, 28}}); }, &code);
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(msg, "Input 0 of layer 'conv2d' is incompatible with the layer: expected ndim=4, "
                            "found ndim=3. Full shape received: (None, 28, 28)")) << msg;
  EXPECT_FALSE(conv.built());
  msg = error_of([&] { conv.build({{-1, 2, 2, 1}}); });
  EXPECT_TRUE(contains(msg, "<= 0 due to downsampling")) << msg;
  conv.build({{-1, 8, 8, 3}});
  msg = error_of([&] { conv.call({randn({1, 8, 8, 2}, DType::kFloat32, cpu())}, false); });
  EXPECT_TRUE(contains(msg, "expected axis -1 of input shape to have value 3, but received input with shape (1, 8, 8, 2)")) << msg;

  Dense dense("dense", 4);
  msg = error_of([&] { dense.call({randn({2, 3}, DType::kFloat32, cpu())}, false); });
  EXPECT_TRUE(contains(msg, "has not been built")) << msg;
  msg = error_of([&] { dense.build({{-1}}); });
  EXPECT_TRUE(contains(msg, "expected min_ndim=2, found ndim=1. Full shape received: (None,)")) << msg;
  msg = error_of([&] { dense.build({{-1, 3}, {-1, 3}}); });
  EXPECT_TRUE(contains(msg, "expects 1 input, but it received 2 input tensors")) << msg;
  msg = error_of([&] { dense.build({{-1, -1}}); });
  EXPECT_TRUE(contains(msg, "last dimension of the input to a Dense layer should be defined")) << msg;

  msg = error_of([] { Dense("d", 0); });
  EXPECT_TRUE(contains(msg, "expected a positive integer. Received: units=0")) << msg;
  msg = error_of([] { Dense("d", 3, "rleu"); }, &code);
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(msg, "'rleu'") && contains(msg, "'relu'") && contains(msg, "'softmax'")) << msg;
  msg = error_of([] { Dense("d", 3, "relu", true, "glorot"); });
  EXPECT_TRUE(contains(msg, "'glorot'") && contains(msg, "'glorot_uniform'") && contains(msg, "'he_normal'")) << msg;
  msg = error_of([] { Conv2D("c", 3, 3, 3, 1, 1, "full", 1, 1); });
  EXPECT_TRUE(contains(msg, "one of 'valid', 'same'. Received: padding='full'")) << msg;
  msg = error_of([] { Conv2D("c", 3, 3, 3, 2, 2, "valid", 2, 2); });
  EXPECT_TRUE(contains(msg, "`strides > 1` not supported in conjunction with `dilation_rate > 1`")) << msg;
  EXPECT_TRUE(contains(msg, "Conv2D 'c'")) << msg;
  // The checks Conv2DTranspose shares with Conv2D run while only their base is constructed, and
  // still name the layer's own class.
  msg = error_of([] { Conv2DTranspose("t", 3, 3, 3, 2, 2, "valid", -1, -1, 2, 2); });
  EXPECT_TRUE(contains(msg, "Conv2DTranspose 't'") && contains(msg, "`strides > 1` not supported")) << msg;
  msg = error_of([] { Conv2DTranspose("t", 3, 3, 3, 2, 2, "same", 2, 0, 1, 1); });
  EXPECT_TRUE(contains(msg, "Conv2DTranspose 't'") &&
              contains(msg, "`output_padding` must be strictly less than `strides`")) << msg;
  msg = error_of([] { MaxPooling2D("m", 0, 2); });
  EXPECT_TRUE(contains(msg, "pool_size")) << msg;
  msg = error_of([] { MaxPooling2D("m", 3, 3).output_shape({{-1, 2, 2, 1}}); });
  EXPECT_TRUE(contains(msg, "does not fit in input shape (None, 2, 2, 1)")) << msg;
  msg = error_of([] { Dropout("dr", 1.5); });
  EXPECT_TRUE(contains(msg, "Expected a float value between 0 and 1. Received: rate=1.5")) << msg;
  msg = error_of([] { BatchNormalization("b", 1); }, &code);
  EXPECT_EQ(code, ErrorCode::kUnimplemented);
  msg = error_of([] { Embedding("e", 0, 3); });
  EXPECT_TRUE(contains(msg, "should be positive")) << msg;
  msg = error_of([] { MultiHeadAttention("m", 2, 4).output_shape({{-1, 5, 6}}); });
  EXPECT_TRUE(contains(msg, "[query, value] or [query, value, key]")) << msg;
  msg = error_of([] { GlobalAveragePooling2D("g").output_shape({{-1, 5, 6}}); });
  EXPECT_TRUE(contains(msg, "expected ndim=4, found ndim=3")) << msg;
}

TEST(LayersForward, DropoutAndBatchNormModes) {
  Dropout drop("dropout", 0.5);
  drop.build({{-1, 1000}});
  const Tensor x = ones({4, 1000}, DType::kFloat32, cpu());
  EXPECT_EQ(values(drop.call({x}, false)), values(x));
  const std::vector<float> y = values(drop.call({x}, true));
  int zeros_seen = 0;
  for (float v : y) {
    EXPECT_TRUE(v == 0.f || std::fabs(v - 2.f) < 1e-6) << v;
    zeros_seen += v == 0.f;
  }
  EXPECT_NEAR(zeros_seen / 4000.0, 0.5, 0.05);

  BatchNormalization bn("bn", -1, 0.9, 1e-3);
  bn.build({{-1, 2}});
  const Tensor batch = make({3, 2}, {1, 10, 2, 20, 3, 30});
  bn.call({batch}, true);
  const std::vector<float> mm = values(bn.weights()[2].value);
  EXPECT_NEAR(mm[0], 0.1 * 2.0, 1e-6);
  EXPECT_NEAR(mm[1], 0.1 * 20.0, 1e-5);
  const std::vector<float> mv = values(bn.weights()[3].value);
  EXPECT_NEAR(mv[0], 0.9 + 0.1 * (2.0 / 3.0), 1e-6);  // biased batch variance, as Keras 3
  // Frozen: training=true uses (and keeps) the moving statistics.
  bn.set_trainable(false);
  bn.call({batch}, true);
  EXPECT_EQ(values(bn.weights()[2].value), mm);
}

TEST(LayersFusion, ReluRunsInsideTheConvolutionAndMatmul) {
  // Conv2D(relu) and Dense(relu): forward and backward of each run no relu op of their own (the
  // forward fuses it into the product, the backward masks the gradient once); a tanh layer,
  // which is not fused, runs its activation separately (the counter would see a separate relu).
  for (const char* activation : {"relu", "tanh"}) {
    const bool relu = std::string(activation) == "relu";
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      test::CountingBackend counting;
      ScopedCpuBackendInterposer interpose(counting);
      Conv2D conv("conv", 4, 3, 3, 1, 1, "valid", 1, 1, activation);
      Dense dense("dense", 3, activation);
      conv.set_compute_dtype(dtype);  // mixed precision: f32 weights read in `dtype`
      dense.set_compute_dtype(dtype);
      conv.build({{-1, 6, 6, 2}});
      dense.build({{-1, 64}});
      const Tensor x = cast(randn({2, 6, 6, 2}, DType::kFloat32, cpu()), dtype);
      std::vector<Tensor> weights = conv.trainable_weights();
      for (const Tensor& w : dense.trainable_weights()) weights.push_back(w);
      const Tensor h = conv.call({x}, true);
      const Tensor y = dense.call({reshape(h, {2, 64})}, true);
      const auto grads = compute_gradients({y}, {Tensor()}, weights);
      ASSERT_EQ(grads.size(), 4u);
      for (const Tensor& g : grads) EXPECT_TRUE(g.defined());
      EXPECT_EQ(h.dtype(), dtype);
      const int kRelu = static_cast<int>(UnaryOp::kRelu), kTanh = static_cast<int>(UnaryOp::kTanh);
      EXPECT_EQ(counting.unary_calls[kRelu], 0) << activation;
      EXPECT_EQ(counting.fused_conv2d_calls, relu ? 1 : 0) << activation;
      EXPECT_EQ(counting.fused_matmul_calls, relu ? 1 : 0) << activation;
      EXPECT_EQ(counting.unary_backward_calls[kRelu], relu ? 2 : 0) << activation;  // one mask each
      EXPECT_EQ(counting.unary_calls[kTanh], relu ? 0 : 2) << activation;
    }
  }
}

}  // namespace
}  // namespace gpuaccel::nn
