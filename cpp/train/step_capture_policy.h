// When a training step runs eagerly, is captured into a graph, or replays one (issue 12, part
// 5; docs/gpu_step.md). A small course model's GPU step is launch-bound: replaying one CUDA
// graph instead of ~100 launches is what makes it fast. The policy, per StepSignature:
//   1. the first step of a signature runs eagerly (warm-up: lazily created slots, accumulators
//      and cached kernel plans get their storage, so the next step's addresses are final);
//   2. the second is captured through the backend (begin_capture, the step, end_capture) and its
//      graph launched once;
//   3. every later step with that signature replays the graph.
// While the profiler records, steps run eagerly without falling back. It falls back to eager
// for good, with the reason logged once and recorded in the profile,
// when capture is not possible: the backend cannot capture (with jit_compile=True; with auto it
// quietly stays eager), the caller names a blocker (a step with per-step host values or host
// reads), too many distinct signatures (dynamic shapes), or a capture attempt fails. A failed
// capture is not retried.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "backends/backend.h"
#include "train/step_signature.h"

namespace gpuaccel::train {

// Keras's compile(jit_compile=...): "auto"/None (on for fit on a GPU, off on the CPU), True, False.
enum class JitCompile { kAuto, kOn, kOff };

// What run() did with a step.
enum class StepRun {
  kEager,     // the step ran eagerly (warm-up, capture off, or fallen back)
  kCaptured,  // the step was captured, and its graph launched once
  kReplayed,  // an existing graph was launched; the step function was not called
};

class StepCapturePolicy {
 public:
  using Log = std::function<void(const std::string&)>;
  // More distinct signatures than this are taken for dynamic shapes (or a learning rate that
  // changes every step): capture stops.
  static constexpr size_t kMaxGraphs = 8;

  // `log` receives the one-line fallback message (default: stderr).
  explicit StepCapturePolicy(JitCompile mode, Log log = {});
  ~StepCapturePolicy();
  StepCapturePolicy(const StepCapturePolicy&) = delete;
  StepCapturePolicy& operator=(const StepCapturePolicy&) = delete;

  // Whether a step on `backend` may be captured or replayed now. False when capture is off; when
  // it has fallen back, or falls back now because of `blocker` (non-empty: why the step cannot be
  // captured) or because the backend cannot capture (only said with jit_compile=True; auto stays
  // quietly eager); and while the profiler records (those steps run eagerly, so the trace shows
  // every op). While profiling, each step that runs eagerly because of a fallback is marked by
  // an instant event carrying the reason. A caller that gets false runs the step itself.
  bool may_capture(Backend& backend, const std::string& blocker);

  // Runs one step whose launches go to `backend`. `blocker` is empty when the step may be
  // captured, else why it may not be. `step` issues the step (it runs eagerly, or under
  // capture). When a capture attempt fails, `undo_host_effects` is called before the step runs
  // again eagerly: a failed capture ran the step's host code but none of its device work.
  StepRun run(Backend& backend, const StepSignature& signature, const std::string& blocker,
              const std::function<void()>& step, const std::function<void()>& undo_host_effects);

  JitCompile mode() const { return mode_; }
  bool fell_back() const { return !fallback_reason_.empty(); }
  const std::string& fallback_reason() const { return fallback_reason_; }
  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }  // graph launches, the first after capture included
  size_t graphs() const { return graphs_.size(); }

 private:
  struct Entry {
    int64_t eager_runs = 0;
    Backend::GraphHandle graph = nullptr;
  };
  void fall_back(const std::string& reason);
  void mark_fallback_in_profile() const;
  void destroy_graphs();

  JitCompile mode_;
  Log log_;
  std::string fallback_reason_;
  std::unordered_map<StepSignature, Entry, StepSignatureHash> graphs_;
  Backend* graph_backend_ = nullptr;  // the backend that owns the graphs
  int64_t captures_ = 0;
  int64_t replays_ = 0;
};

}  // namespace gpuaccel::train
