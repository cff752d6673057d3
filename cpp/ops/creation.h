// Tensors made from nothing or from host memory: zeros/ones/full/arange, counter-based random
// numbers (same numbers on every device for the same seed), and copies of host buffers. They
// are placed by the device scope (gpuaccel.device), as TF's creation ops are.
#pragma once

#include <cstdint>
#include <optional>

#include "core/device_name.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// The device a creation op runs on: `requested`, else the innermost device scope, else the
// default device (placement rules and the placement log included).
LogicalDevice creation_device(const std::string& op, const std::optional<DeviceSpec>& requested);

Tensor full(const Shape& shape, double value, DType dtype, const LogicalDevice& device);
Tensor zeros(const Shape& shape, DType dtype, const LogicalDevice& device);
Tensor ones(const Shape& shape, DType dtype, const LogicalDevice& device);
Tensor arange(double start, double stop, double step, DType dtype, const LogicalDevice& device);
// Uniform [0, 1) or standard normal, from the global generator (seed, running offset).
Tensor rand(const Shape& shape, DType dtype, const LogicalDevice& device);
Tensor randn(const Shape& shape, DType dtype, const LogicalDevice& device);

// gpuaccel.random.set_seed: restarts the global generator's counter.
void set_random_seed(uint64_t seed);
uint64_t random_seed();
// The generator's whole state (seed, next counter), saved and restored by training checkpoints
// (keras.callbacks.BackupAndRestore) so a resumed run draws the numbers it would have drawn.
uint64_t random_offset();
void set_random_state(uint64_t seed, uint64_t offset);
// Reserves `count` counters of the global generator and returns the first.
uint64_t reserve_random_offset(uint64_t count);

// A tensor on `device` holding a copy of contiguous host bytes (shape/dtype describe them).
Tensor from_host(const void* data, const Shape& shape, DType dtype, const LogicalDevice& device);

}  // namespace gpuaccel
