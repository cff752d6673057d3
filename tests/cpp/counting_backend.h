// A test decorator of the CPU backend that counts the calls that would stall a GPU step:
// device-to-host copies and synchronizations. Installed with ScopedCpuBackendInterposer, it sees
// every call the ops make on the CPU, so a test can prove a training step reads nothing back.
#pragma once

#include <cstdint>

#include "backends/backend_interposer.h"
#include "backends/forwarding_backend.h"

namespace gpuaccel::test {

class CountingBackend : public ForwardingBackend {
 public:
  CountingBackend() : ForwardingBackend(cpu_backend()) {}
  void copy_to_host(const TensorView& src, void* host) override {
    ++copies_to_host;
    ForwardingBackend::copy_to_host(src, host);
  }
  void synchronize() override {
    ++synchronizes;
    ForwardingBackend::synchronize();
  }
  int64_t copies_to_host = 0;
  int64_t synchronizes = 0;
};

}  // namespace gpuaccel::test
