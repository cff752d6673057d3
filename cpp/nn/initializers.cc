// Keras's initializers (see initializers.h): variance scaling (glorot/he/lecun, uniform or
// truncated normal), plain normal/uniform/truncated normal, zeros and ones.
#include "nn/initializers.h"

#include <cmath>
#include <algorithm>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

namespace {

enum class Mode { kFanIn, kFanOut, kFanAvg };

// Keras's defaults for the plain random initializers.
constexpr double kRandomNormalStddev = 0.05;
constexpr double kRandomUniformLimit = 0.05;
constexpr double kTruncationBound = 2.0;  // in standard deviations

struct Alias {
  const char* spelling;
  const char* canonical;
};
constexpr Alias kAliases[] = {
    {"GlorotUniform", "glorot_uniform"}, {"GlorotNormal", "glorot_normal"},
    {"HeUniform", "he_uniform"},         {"HeNormal", "he_normal"},
    {"LecunUniform", "lecun_uniform"},   {"LecunNormal", "lecun_normal"},
    {"Zeros", "zeros"},                  {"zero", "zeros"},
    {"Ones", "ones"},                    {"one", "ones"},
    {"RandomNormal", "random_normal"},   {"normal", "random_normal"},
    {"RandomUniform", "random_uniform"}, {"uniform", "random_uniform"},
    {"TruncatedNormal", "truncated_normal"},
};

double host_scalar(const Tensor& t) {
  const Tensor host = to_device(cast(t, DType::kFloat32),
                                DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0));
  return *static_cast<const float*>(host.data());
}

// Standard normal numbers cut at +-2: values outside are redrawn until none is left (each
// round keeps ~95%, so a handful of rounds suffice for any size).
Tensor truncated_standard_normal(const Shape& shape, const LogicalDevice& device) {
  Tensor x = randn(shape, DType::kFloat32, device);
  if (x.numel() == 0) return x;
  const Tensor bound = scalar_like(kTruncationBound, x);
  const Tensor one = scalar_like(1.0, x);
  for (int round = 0; round < 64; ++round) {
    const Tensor outside = cast(binary(BinaryOp::kGreater, unary(UnaryOp::kAbs, x), bound), DType::kFloat32);
    if (host_scalar(reduce(ReduceOp::kMax, outside, {}, false)) == 0.0) break;
    const Tensor fresh = randn(shape, DType::kFloat32, device);
    x = add(mul(x, sub(one, outside)), mul(fresh, outside));
  }
  return x;
}

Tensor uniform(const Shape& shape, double low, double high, const LogicalDevice& device) {
  const Tensor u = rand(shape, DType::kFloat32, device);
  return add(mul(u, scalar_like(high - low, u)), scalar_like(low, u));
}

Tensor variance_scaling(const Shape& shape, double scale, Mode mode, bool normal,
                        const LogicalDevice& device) {
  const Fans fans = compute_fans(shape);
  const double n = mode == Mode::kFanIn    ? fans.fan_in
                   : mode == Mode::kFanOut ? fans.fan_out
                                           : (fans.fan_in + fans.fan_out) / 2.0;
  const double variance = scale / std::max(1.0, n);
  if (normal) {
    const Tensor z = truncated_standard_normal(shape, device);
    return mul(z, scalar_like(std::sqrt(variance) / kTruncatedStddevCorrection, z));
  }
  const double limit = std::sqrt(3.0 * variance);
  return uniform(shape, -limit, limit, device);
}

}  // namespace

Fans compute_fans(const Shape& shape) {
  Fans fans;
  if (shape.empty()) return fans;
  if (shape.size() == 1) {
    fans.fan_in = fans.fan_out = double(shape[0]);
    return fans;
  }
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= double(shape[i]);
  fans.fan_in = double(shape[shape.size() - 2]) * receptive;
  fans.fan_out = double(shape[shape.size() - 1]) * receptive;
  return fans;
}

const std::vector<std::string>& initializer_names() {
  static const std::vector<std::string> kNames = {
      "glorot_uniform", "glorot_normal", "he_uniform",     "he_normal",
      "lecun_uniform",  "lecun_normal",  "zeros",          "ones",
      "random_normal",  "random_uniform", "truncated_normal"};
  return kNames;
}

std::string canonical_initializer(const std::string& name, const std::string& where) {
  for (const std::string& known : initializer_names()) {
    if (name == known) return known;
  }
  for (const Alias& alias : kAliases) {
    if (name == alias.spelling) return alias.canonical;
  }
  std::string list;
  for (const std::string& known : initializer_names()) list += (list.empty() ? "'" : ", '") + known + "'";
  throw_error(ErrorCode::kInvalidArgument, where,
              "Could not interpret initializer identifier: '" + name + "'. Accepted names: " + list +
                  " (or 'uniform'/'normal', Keras's aliases of random_uniform/random_normal)");
}

Tensor initialize(const std::string& name, const Shape& shape, const LogicalDevice& device,
                  const std::string& where) {
  const std::string kind = canonical_initializer(name, where);
  for (int64_t d : shape) {
    if (d < 0) {
      throw_error(ErrorCode::kInvalidArgument, where,
                  "cannot create a weight of unknown shape " + shape_to_string(shape) +
                      "; every dimension must be known when a layer is built");
    }
  }
  GradModeGuard no_grad(false);
  if (kind == "zeros") return zeros(shape, DType::kFloat32, device);
  if (kind == "ones") return ones(shape, DType::kFloat32, device);
  if (kind == "random_uniform") return uniform(shape, -kRandomUniformLimit, kRandomUniformLimit, device);
  if (kind == "random_normal") {
    const Tensor z = randn(shape, DType::kFloat32, device);
    return mul(z, scalar_like(kRandomNormalStddev, z));
  }
  if (kind == "truncated_normal") {
    const Tensor z = truncated_standard_normal(shape, device);
    return mul(z, scalar_like(kRandomNormalStddev, z));
  }
  if (kind == "glorot_uniform") return variance_scaling(shape, 1.0, Mode::kFanAvg, false, device);
  if (kind == "glorot_normal") return variance_scaling(shape, 1.0, Mode::kFanAvg, true, device);
  if (kind == "he_uniform") return variance_scaling(shape, 2.0, Mode::kFanIn, false, device);
  if (kind == "he_normal") return variance_scaling(shape, 2.0, Mode::kFanIn, true, device);
  if (kind == "lecun_uniform") return variance_scaling(shape, 1.0, Mode::kFanIn, false, device);
  return variance_scaling(shape, 1.0, Mode::kFanIn, true, device);  // lecun_normal
}

}  // namespace gpuaccel::nn
