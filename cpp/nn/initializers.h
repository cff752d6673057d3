// Keras's weight initializers by name, so a layer built from Python's `kernel_initializer=
// 'he_normal'` draws the same distribution Keras would (same fan rules, same truncation and
// standard-deviation correction) from the project's counter-based generator, which makes a
// model reproducible under gpuaccel.random.set_seed on every device.
#pragma once

#include <string>
#include <vector>

#include "core/device_registry.h"
#include "tensor/shape.h"
#include "tensor/tensor.h"

namespace gpuaccel::nn {

// Keras's fans: rank 0 -> (1, 1); rank 1 -> (n, n); rank 2 (in, out) -> (in, out); higher
// ranks (kh, kw, ..., in, out) multiply in and out by the receptive field (the leading dims).
struct Fans {
  double fan_in = 1;
  double fan_out = 1;
};
Fans compute_fans(const Shape& shape);

// The accepted names, snake_case as Keras's strings ("glorot_uniform", ...); Keras's class
// names ("GlorotUniform") are accepted too.
const std::vector<std::string>& initializer_names();
// The canonical snake_case name, or InvalidArgumentError (op `where`) listing the accepted ones.
std::string canonical_initializer(const std::string& name, const std::string& where);
// A float32 tensor of `shape` on `device`, drawn by initializer `name` (outside autograd).
Tensor initialize(const std::string& name, const Shape& shape, const LogicalDevice& device,
                  const std::string& where);

// The standard deviation Keras uses for truncated normals so the truncated draw keeps the
// untruncated variance: the std of a standard normal cut at +-2 is 0.8796...
constexpr double kTruncatedStddevCorrection = 0.87962566103423978;

}  // namespace gpuaccel::nn
