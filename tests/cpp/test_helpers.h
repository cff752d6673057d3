// Small helpers several GoogleTest files share: float32 tensors on the CPU from literals, their
// values back, and "this throws our typed error with this text".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "ops/creation.h"

namespace gpuaccel::test {

// A float32 CPU tensor holding `values` in `shape`.
inline Tensor make(const std::vector<float>& values, const Shape& shape) {
  return from_host(values.data(), shape, DType::kFloat32, LogicalDevice{});
}

// A float32 tensor's values, from any device.
inline std::vector<float> read(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  backend_for(t.device()).copy_to_host(t.view(), out.data());
  return out;
}

// The first logical CPU.
inline LogicalDevice cpu() {
  return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
}

// A contiguous float32 view of `n` values at `data` (device-neutral: fake GPUs' memory too).
inline TensorView f32_view(float* data, int64_t n) {
  TensorView v;
  v.data = data;
  v.dtype = DType::kFloat32;
  v.ndim = 1;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

// A contiguous (row-major) view of `shape` in `dtype` at `data`.
inline TensorView contiguous_view(void* data, const std::vector<int64_t>& shape, DType dtype) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

// `f` must throw gpuaccel::Error with `code` and a message containing `fragment`.
inline void expect_error(ErrorCode code, const std::string& fragment,
                         const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << error_code_name(code) << " with '" << fragment
                  << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace gpuaccel::test
