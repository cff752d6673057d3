// The op list (backends/backend_ops.def) reaches every decorator made from it: each op, called
// on the forwarding backend, the profiler's tracing backend and the fake CUDA library's
// launching layer, arrives at the backend underneath as itself (not as the ops of a default
// composition), the tracer records one event per kernel and none per query, and the fake
// launches every kernel (so it is counted and captured). An op missing from one of them, or
// forwarded to the wrong op, fails here.
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "backends/backend.h"
#include "backends/forwarding_backend.h"
#include "backends/tracing_backend.h"
#include "cpu_launched_ops.h"
#include "profiler/profiler.h"

namespace gpuaccel {
namespace {

// Computes nothing; records the name of every op it is asked to run.
class RecordingBackend final : public Backend {
 public:
  const char* name() const override { return "recording"; }
#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override { calls.push_back(#NAME); }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  TYPE NAME PARAMS override {                            \
    calls.push_back(#NAME);                              \
    return TYPE{};                                       \
  }
#include "backends/backend_ops.def"
  void copy_from_host(const void*, const TensorView&) override {}
  void copy_to_host(const TensorView&, void*) override {}
  void synchronize() override {}

  std::vector<std::string> calls;
};

// Calls `op` on `backend` with value-initialized arguments (empty views, null pointers).
template <typename Result, typename... Parameters>
void call_with_empty_arguments(Backend& backend, Result (Backend::*op)(Parameters...)) {
  std::tuple<std::decay_t<Parameters>...> arguments{};
  std::apply([&](auto&... a) { (void)(backend.*op)(a...); }, arguments);
}

struct OpCall {
  enum Kind { kKernel, kComposed, kQuery };
  std::string name;
  Kind kind;
  std::function<void(Backend&)> call;
};

std::vector<OpCall> every_op() {
  return {
#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  {#NAME, OpCall::kKernel, [](Backend& b) { call_with_empty_arguments(b, &Backend::NAME); }},
#define GPUACCEL_BACKEND_COMPOSED(NAME, PARAMS, ARGS, TRACE) \
  {#NAME, OpCall::kComposed, [](Backend& b) { call_with_empty_arguments(b, &Backend::NAME); }},
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  {#NAME, OpCall::kQuery, [](Backend& b) { call_with_empty_arguments(b, &Backend::NAME); }},
#include "backends/backend_ops.def"
  };
}

TEST(BackendOpList, EveryOpHasOneUniqueName) {
  const std::vector<OpCall> ops = every_op();
  ASSERT_GE(ops.size(), 25u);
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t j = i + 1; j < ops.size(); ++j) EXPECT_NE(ops[i].name, ops[j].name);
  }
}

TEST(BackendOpList, TheForwardingBackendPassesEveryOpAsItself) {
  for (const OpCall& op : every_op()) {
    RecordingBackend inner;
    ForwardingBackend forwarding(inner);
    op.call(forwarding);
    EXPECT_EQ(inner.calls, std::vector<std::string>{op.name}) << op.name;
  }
}

TEST(BackendOpList, TheTracingBackendPassesEveryOpAndTracesEachKernelOnce) {
  RecordingBackend inner;
  std::unique_ptr<Backend> tracing = make_tracing_backend(inner, -1);
  std::vector<std::string> expected_calls;
  size_t traced = 0;
  profiler::start();
  for (const OpCall& op : every_op()) {
    op.call(*tracing);
    expected_calls.push_back(op.name);
    if (op.kind != OpCall::kQuery) ++traced;
  }
  const profiler::Trace trace = profiler::stop();
  EXPECT_EQ(inner.calls, expected_calls);
  size_t op_events = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (trace.kind[i] != static_cast<uint8_t>(profiler::EventKind::kOp)) continue;
    ++op_events;
    EXPECT_FALSE(trace.strings[trace.name[i]].empty());
  }
  EXPECT_EQ(op_events, traced);
}

// The fake library's launcher: records which op each launch or query was made for, and runs it.
class RecordingLauncher final : public fake_cuda::CpuLaunchedOps<RecordingLauncher> {
 public:
  explicit RecordingLauncher(Backend& compute) : CpuLaunchedOps(compute) {}
  const char* name() const override { return "launcher"; }
  void copy_from_host(const void*, const TensorView&) override {}
  void copy_to_host(const TensorView&, void*) override {}
  void synchronize() override {}

  template <typename Body>
  void launch(const char* op, Body body) {
    launches.push_back(op);
    body();
  }
  template <typename Body>
  auto query(const char* op, Body body) {
    launches.push_back(op);
    return body();
  }
  std::vector<std::string> launches;
};

TEST(BackendOpList, TheFakeLaunchesEveryKernelOnTheComputeBackend) {
  for (const OpCall& op : every_op()) {
    if (op.kind == OpCall::kComposed) continue;  // the next test
    RecordingBackend compute;
    RecordingLauncher fake(compute);
    op.call(fake);
    EXPECT_EQ(compute.calls, std::vector<std::string>{op.name}) << op.name;
    EXPECT_EQ(fake.launches, std::vector<std::string>{op.name}) << op.name;
  }
}

// A composed op the fake does not fuse runs Backend's composition: each part a launch of its own.
TEST(BackendOpList, TheFakeRunsAComposedOpAsTheLaunchesOfItsParts) {
  RecordingBackend compute;
  RecordingLauncher fake(compute);
  TensorView v;
  fake.matmul_activation(v, v, nullptr, PostActivation::kRelu, v);
  EXPECT_EQ(fake.launches, (std::vector<std::string>{"matmul", "unary"}));
  EXPECT_EQ(compute.calls, fake.launches);
}

}  // namespace
}  // namespace gpuaccel
