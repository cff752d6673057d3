// StepCapturePolicy (step_capture_policy.h): the warm-up / capture / replay / fallback rules.
#include "train/step_capture_policy.h"

#include <exception>
#include <iostream>

#include "profiler/profiler.h"

namespace gpuaccel::train {

StepCapturePolicy::StepCapturePolicy(JitCompile mode, Log log)
    : mode_(mode), log_(std::move(log)) {
  if (!log_) log_ = [](const std::string& line) { std::cerr << line << std::endl; };
}

StepCapturePolicy::~StepCapturePolicy() { destroy_graphs(); }

void StepCapturePolicy::destroy_graphs() {
  for (auto& [signature, entry] : graphs_) {
    if (entry.graph != nullptr && graph_backend_ != nullptr) {
      try {
        graph_backend_->destroy_graph(entry.graph);
      } catch (...) {
        // A graph that cannot be freed (the device is gone) must not stop the others.
      }
    }
    entry.graph = nullptr;
  }
}

void StepCapturePolicy::fall_back(const std::string& reason) {
  if (fell_back()) return;
  fallback_reason_ = reason;
  destroy_graphs();
  graphs_.clear();
  log_("gpuaccel: the training step runs eagerly (no CUDA graph): " + reason);
}

void StepCapturePolicy::mark_fallback_in_profile() const {
  if (!profiler::enabled() || !fell_back()) return;
  // Seen in the trace on each step it slowed down.
  profiler::EventArgs args;
  args.stats = profiler::intern("reason=" + fallback_reason_);
  profiler::record_instant(profiler::EventKind::kUser, "graph_capture_fallback", args);
}

bool StepCapturePolicy::may_capture(Backend& backend, const std::string& blocker) {
  if (mode_ == JitCompile::kOff) return false;
  if (!fell_back()) {
    if (!backend.supports_graph_capture()) {
      // auto: the CPU (or a backend without graphs) simply runs eagerly, as expected.
      if (mode_ != JitCompile::kOn) return false;
      fall_back(std::string("jit_compile=True, but the ") + backend.name() +
                " backend cannot capture graphs");
    } else if (!blocker.empty()) {
      fall_back(blocker);
    } else if (graph_backend_ != nullptr && graph_backend_ != &backend) {
      fall_back("the step moved to another device");
    }
  }
  if (fell_back()) {
    mark_fallback_in_profile();
    return false;
  }
  return !profiler::enabled();
}

StepRun StepCapturePolicy::run(Backend& backend, const StepSignature& signature,
                               const std::string& blocker, const std::function<void()>& step,
                               const std::function<void()>& undo_host_effects) {
  auto eager = [&] {
    step();
    return StepRun::kEager;
  };
  if (!may_capture(backend, blocker)) return eager();
  auto found = graphs_.find(signature);
  if (found == graphs_.end()) {
    if (graphs_.size() >= kMaxGraphs) {
      fall_back("more than " + std::to_string(kMaxGraphs) +
                " distinct step signatures (input shapes, weights or learning rate keep "
                "changing); the last: " + signature.to_string());
      mark_fallback_in_profile();
      return eager();
    }
    found = graphs_.emplace(signature, Entry{}).first;
  }
  Entry& entry = found->second;
  if (entry.graph != nullptr) {
    backend.replay(entry.graph);
    ++replays_;
    return StepRun::kReplayed;
  }
  if (entry.eager_runs == 0) {
    step();  // warm-up; a step that throws does not count as one
    ++entry.eager_runs;
    return StepRun::kEager;
  }

  graph_backend_ = &backend;
  Backend::GraphHandle graph = nullptr;
  try {
    backend.begin_capture();
    try {
      step();
    } catch (...) {
      // End the capture the step interrupted; its own error is the one to report.
      try {
        Backend::GraphHandle partial = backend.end_capture();
        if (partial != nullptr) backend.destroy_graph(partial);
      } catch (...) {
      }
      throw;
    }
    graph = backend.end_capture();
  } catch (const std::exception& e) {
    fall_back(std::string("capture failed: ") + e.what());
    mark_fallback_in_profile();
    if (undo_host_effects) undo_host_effects();
    return eager();
  }
  ++captures_;
  entry.graph = graph;
  backend.replay(graph);  // capture records without running: launch it for this step
  ++replays_;
  return StepRun::kCaptured;
}

}  // namespace gpuaccel::train
