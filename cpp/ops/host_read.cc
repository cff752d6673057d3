// read_scalars (host_read.h). The copy goes through the device's backend even on the CPU, so a
// call-counting backend sees every read a training loop makes, on any device.
#include "ops/host_read.h"

#include "backends/backend.h"
#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

std::vector<double> read_scalars(const std::vector<Tensor>& scalars) {
  if (scalars.empty()) return {};
  GradModeGuard no_grad(false);
  const LogicalDevice device = scalars[0].device();
  const int64_t n = static_cast<int64_t>(scalars.size());
  const Tensor packed = Tensor::empty({n}, DType::kFloat32, device, "Pack");
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& s = scalars[size_t(i)];
    if (!s.defined() || s.numel() != 1) {
      throw_error(ErrorCode::kInternal, "read_scalars", "expects defined one-element tensors");
    }
    const Tensor here = to_device(reshape(s, {}), device);
    copy_into(here.dtype() == DType::kFloat32 ? here : cast(here, DType::kFloat32),
              select(packed, 0, i));
  }
  std::vector<float> host(size_t(n), 0.0f);
  backend_for(device).copy_to_host(packed.view(), host.data());
  return std::vector<double>(host.begin(), host.end());
}

}  // namespace gpuaccel
