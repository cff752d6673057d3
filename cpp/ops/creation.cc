// Creation ops (see creation.h).
#include "ops/creation.h"

#include <atomic>
#include <cmath>

#include "core/device_scope.h"
#include "core/errors.h"
#include "ops/op_utils.h"

namespace gpuaccel {

namespace {
// Torch's default seed is fixed too: a fresh process gives the same numbers until set_seed.
constexpr uint64_t kDefaultSeed = 0x5eed5eed5eedULL;
std::atomic<uint64_t> g_seed{kDefaultSeed};
std::atomic<uint64_t> g_offset{0};

Tensor random_tensor(const char* op, RandomDistribution distribution, const Shape& shape,
                     DType dtype, const LogicalDevice& device) {
  if (!is_floating(dtype)) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("random tensors are floating point; got dtype ") + dtype_name(dtype));
  }
  Tensor out = Tensor::empty(shape, dtype, device, op);
  const uint64_t offset = reserve_random_offset(uint64_t(out.numel()));
  backend_for(device).random(distribution, g_seed.load(), offset, out.view());
  return out;
}
}  // namespace

LogicalDevice creation_device(const std::string& op, const std::optional<DeviceSpec>& requested) {
  return DeviceRegistry::instance().place_op(op, requested ? requested : current_device_scope());
}

Tensor full(const Shape& shape, double value, DType dtype, const LogicalDevice& device) {
  Tensor out = Tensor::empty(shape, dtype, device, "Fill");
  backend_for(device).fill(out.view(), value);
  return out;
}

Tensor zeros(const Shape& shape, DType dtype, const LogicalDevice& device) {
  return full(shape, 0.0, dtype, device);
}

Tensor ones(const Shape& shape, DType dtype, const LogicalDevice& device) {
  return full(shape, 1.0, dtype, device);
}

Tensor arange(double start, double stop, double step, DType dtype, const LogicalDevice& device) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop)) {
    throw_error(ErrorCode::kInvalidArgument, "Range",
                "start, stop and step must be finite and step non-zero, got start=" +
                    std::to_string(start) + ", stop=" + std::to_string(stop) +
                    ", step=" + std::to_string(step));
  }
  const double count = std::ceil((stop - start) / step);
  // 2^63 as a double: a count at or beyond it has no int64 (and no tensor) to hold it.
  if (!(count < 9223372036854775808.0)) {
    throw_error(ErrorCode::kInvalidArgument, "Range",
                "arange(" + std::to_string(start) + ", " + std::to_string(stop) + ", " +
                    std::to_string(step) + ") would have more than 2^63 - 1 elements");
  }
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  Tensor out = Tensor::empty({n}, dtype, device, "Range");
  if (n > 0) backend_for(device).arange(out.view(), start, step);
  return out;
}

Tensor rand(const Shape& shape, DType dtype, const LogicalDevice& device) {
  return random_tensor("RandomUniform", RandomDistribution::kUniform, shape, dtype, device);
}

Tensor randn(const Shape& shape, DType dtype, const LogicalDevice& device) {
  return random_tensor("RandomStandardNormal", RandomDistribution::kNormal, shape, dtype, device);
}

void set_random_seed(uint64_t seed) {
  g_seed.store(seed);
  g_offset.store(0);
}

uint64_t random_seed() { return g_seed.load(); }

uint64_t random_offset() { return g_offset.load(); }

void set_random_state(uint64_t seed, uint64_t offset) {
  g_seed.store(seed);
  g_offset.store(offset);
}

uint64_t reserve_random_offset(uint64_t count) {
  // Philox produces 4 numbers per counter block; keep each reservation block-aligned.
  const uint64_t rounded = (count + 3) / 4 * 4;
  return g_offset.fetch_add(rounded);
}

Tensor from_host(const void* data, const Shape& shape, DType dtype, const LogicalDevice& device) {
  Tensor out = Tensor::empty(shape, dtype, device, "FromHost");
  if (out.numel() > 0) backend_for(device).copy_from_host(data, out.view());
  return out;
}

}  // namespace gpuaccel
