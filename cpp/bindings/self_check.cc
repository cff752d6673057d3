// The device self-check behind `python -m gpuaccel.demo`: a small f32 matmul on a chosen
// device, checked against a float64 reference on the host. It goes through placement like any
// op, so it also exercises device scopes, soft placement and placement logging.
#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "backends/cpu/sgemm.h"
#include "bindings/bindings.h"
#include "core/cuda_backend_loader.h"
#include "core/device_registry.h"
#include "core/device_scope.h"
#include "core/errors.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

constexpr size_t kErrLen = 512;

void check_cuda(int status, const char* err) {
  if (status != GPUACCEL_CUDA_OK) throw_error(ErrorCode::kInternal, "MatMul", err);
}

// Runs C = A·B on the GPU `device` through the CUDA backend (allocate, copy, cuBLAS, copy back).
void gpu_matmul(int device, const std::vector<float>& a, const std::vector<float>& b,
                std::vector<float>& c, int n) {
  const gpuaccel_cuda_backend& cuda = require_cuda_backend("MatMul");
  char err[kErrLen] = {0};
  const size_t bytes = sizeof(float) * static_cast<size_t>(n) * n;
  void* buffers[3] = {nullptr, nullptr, nullptr};
  try {
    for (void*& p : buffers) check_cuda(cuda.malloc_device(device, bytes, &p, err, kErrLen), err);
    check_cuda(cuda.copy_to_device(device, buffers[0], a.data(), bytes, err, kErrLen), err);
    check_cuda(cuda.copy_to_device(device, buffers[1], b.data(), bytes, err, kErrLen), err);
    check_cuda(cuda.matmul_f32(device, static_cast<float*>(buffers[0]),
                               static_cast<float*>(buffers[1]), static_cast<float*>(buffers[2]),
                               n, n, n, err, kErrLen), err);
    check_cuda(cuda.copy_to_host(device, c.data(), buffers[2], bytes, err, kErrLen), err);
    check_cuda(cuda.synchronize(device, err, kErrLen), err);
  } catch (...) {
    for (void* p : buffers) {
      if (p) cuda.free_device(device, p, err, kErrLen);
    }
    throw;
  }
  for (void* p : buffers) cuda.free_device(device, p, err, kErrLen);
}

py::dict matmul_self_check(int n, uint32_t seed) {
  if (n <= 0 || n > 4096) {
    throw_value_error("matmul_self_check", "n must be in 1..4096, got " + std::to_string(n));
  }
  const LogicalDevice device = DeviceRegistry::instance().place_op("MatMul", current_device_scope());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t count = static_cast<size_t>(n) * n;
  std::vector<float> a(count), b(count), c(count, 0.0f);
  for (auto& v : a) v = uniform(rng);
  for (auto& v : b) v = uniform(rng);

  const auto start = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release release;
    if (device.type == DeviceType::kGPU) {
      gpu_matmul(device.physical_index, a, b, c, n);
    } else {
      cpu::sgemm_row_major(a.data(), b.data(), c.data(), n, n, n);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Reference in float64 on a strided sample of rows (all rows for small n).
  const int row_step = n <= 256 ? 1 : n / 64;
  double max_abs_error = 0.0;
  for (int i = 0; i < n; i += row_step) {
    for (int j = 0; j < n; ++j) {
      double expected = 0.0;
      for (int p = 0; p < n; ++p) expected += double(a[size_t(i) * n + p]) * b[size_t(p) * n + j];
      max_abs_error = std::max(max_abs_error, std::abs(expected - c[size_t(i) * n + j]));
    }
  }
  py::dict out;
  out["device"] = device.full_name();
  out["n"] = n;
  out["seconds"] = seconds;
  out["gflops"] = seconds > 0 ? 2.0 * n * double(n) * n / seconds / 1e9 : 0.0;
  out["max_abs_error"] = max_abs_error;
  // f32 accumulation over n terms of magnitude <= 1: error grows like sqrt(n) * eps.
  out["tolerance"] = 1e-5 * std::sqrt(double(n)) * 4.0;
  return out;
}

}  // namespace

void init_self_check(py::module_& m) {
  m.def("matmul_self_check", &matmul_self_check, py::arg("n") = 256, py::arg("seed") = 0,
        "C = A @ B (f32, n x n) on the device chosen by placement, checked against float64.");
}

}  // namespace gpuaccel::bindings
