// The device self-check behind `python -m gpuaccel.demo`: a small f32 matmul on a chosen
// device, checked against a float64 reference on the host. It goes through placement like any
// op, so it also exercises device scopes, soft placement and placement logging.
#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <random>

#include "backends/backend.h"
#include "backends/cpu/sgemm.h"
#include "bindings/bindings.h"
#include "core/device_registry.h"
#include "core/device_scope.h"
#include "core/errors.h"
#include "tensor/storage.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

// A contiguous (n, n) float32 view of `data`.
TensorView square_view(void* data, int n) {
  TensorView v;
  v.data = data;
  v.dtype = DType::kFloat32;
  v.ndim = 2;
  v.shape[0] = v.shape[1] = n;
  v.strides[0] = n;
  v.strides[1] = 1;
  return v;
}

// Runs C = A·B on the GPU `device` through its backend: device buffers from the GPU pool,
// copies, cuBLASLt, copy back.
void gpu_matmul(const LogicalDevice& device, const float* a, const float* b, float* c, int n) {
  Backend& backend = backend_for(device);
  const size_t bytes = sizeof(float) * static_cast<size_t>(n) * n;
  auto da = Storage::allocate(device, bytes, "MatMul");
  auto db = Storage::allocate(device, bytes, "MatMul");
  auto dc = Storage::allocate(device, bytes, "MatMul");
  const TensorView va = square_view(da->data(), n), vb = square_view(db->data(), n),
                   vc = square_view(dc->data(), n);
  backend.copy_from_host(a, va);
  backend.copy_from_host(b, vb);
  backend.matmul(va, vb, nullptr, vc);
  backend.copy_to_host(vc, c);
  backend.synchronize();
}

py::dict matmul_self_check(int n, uint32_t seed) {
  if (n <= 0 || n > 4096) {
    throw_value_error("matmul_self_check", "n must be in 1..4096, got " + std::to_string(n));
  }
  const LogicalDevice device = DeviceRegistry::instance().place_op("MatMul", current_device_scope());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const size_t count = static_cast<size_t>(n) * n;
  // Host operands live in the CPU pool, like any tensor's memory.
  const LogicalDevice host = DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
  auto a_storage = Storage::allocate(host, count * sizeof(float), "MatMul");
  auto b_storage = Storage::allocate(host, count * sizeof(float), "MatMul");
  auto c_storage = Storage::allocate(host, count * sizeof(float), "MatMul");
  float* a = static_cast<float*>(a_storage->data());
  float* b = static_cast<float*>(b_storage->data());
  float* c = static_cast<float*>(c_storage->data());
  for (size_t i = 0; i < count; ++i) a[i] = uniform(rng);
  for (size_t i = 0; i < count; ++i) b[i] = uniform(rng);

  const auto start = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release release;
    if (device.type == DeviceType::kGPU) {
      gpu_matmul(device, a, b, c, n);
    } else {
      cpu::sgemm_row_major(a, b, c, n, n, n);
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
