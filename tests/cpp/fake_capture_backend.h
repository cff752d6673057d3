// A test decorator of the CPU backend that pretends to capture graphs, as the CUDA backend does
// with stream capture: it counts begin_capture / end_capture / replay / destroy_graph, can be
// told to fail the capture, and fails it by itself when the step makes a call that a stream
// capture cannot record (a copy to the host, a synchronize). Launches still run on the CPU
// while "capturing", and a replay runs nothing: tests check decisions, not numerics.
#pragma once

#include <cstdint>
#include <string>

#include "backends/backend_interposer.h"
#include "backends/forwarding_backend.h"
#include "core/errors.h"

namespace gpuaccel::test {

class FakeCaptureBackend : public ForwardingBackend {
 public:
  FakeCaptureBackend() : ForwardingBackend(cpu_backend()) {}
  const char* name() const override { return "fake-capture"; }

  bool supports_graph_capture() const override { return true; }
  void begin_capture() override {
    ++begins;
    capturing_ = true;
    not_capturable_.clear();
  }
  GraphHandle end_capture() override {
    ++ends;
    capturing_ = false;
    if (fail_capture) throw_error(ErrorCode::kInternal, "end_capture", "the fake refuses");
    if (!not_capturable_.empty()) {
      throw_error(ErrorCode::kUnimplemented, "end_capture",
                  not_capturable_ + " cannot be captured");
    }
    return reinterpret_cast<GraphHandle>(++next_graph_);
  }
  void replay(GraphHandle) override { ++replays; }
  void destroy_graph(GraphHandle) override { ++destroys; }

  void copy_to_host(const TensorView& src, void* host) override {
    if (capturing_) not_capturable_ = "copy_to_host";
    ForwardingBackend::copy_to_host(src, host);
  }
  void synchronize() override {
    if (capturing_) not_capturable_ = "synchronize";
    ForwardingBackend::synchronize();
  }

  bool fail_capture = false;
  int64_t begins = 0, ends = 0, replays = 0, destroys = 0;

 private:
  bool capturing_ = false;
  std::string not_capturable_;
  std::intptr_t next_graph_ = 0;
};

}  // namespace gpuaccel::test
