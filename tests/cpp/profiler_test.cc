// The trace recorder: scopes, instants, capacity, thread names and lifetimes, memory events, the
// session errors, and the instrumentation it exists for (ops through the frontends, the
// prefetcher's two threads).
#include "profiler/profiler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.h"
#include "backends/tracing_backend.h"
#include "backends/library/library_backend.h"
#include "fake_cuda_library.h"
#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/shape_ops.h"
#include "train/prefetcher.h"

namespace gpuaccel {
namespace {

using profiler::EventKind;
using profiler::TraceScope;

LogicalDevice cpu() { return DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0); }

// Stops a session left open by a failing test so the next test can start one.
struct SessionGuard {
  ~SessionGuard() {
    if (profiler::is_active()) profiler::stop();
  }
};

struct Row {
  EventKind kind;
  std::string name;
  std::string stats;
  int32_t thread;
  int64_t start, end, value, in_use, reserved;
  int32_t device;
};

std::vector<Row> rows(const profiler::Trace& t) {
  std::vector<Row> out;
  for (size_t i = 0; i < t.size(); ++i) {
    out.push_back({EventKind(t.kind[i]), t.strings.at(t.name[i]), t.strings.at(t.stats[i]),
                   t.thread[i], t.start_ns[i], t.end_ns[i], t.value[i], t.in_use_bytes[i],
                   t.reserved_bytes[i], t.device[i]});
  }
  return out;
}

std::vector<Row> of_kind(const std::vector<Row>& all, EventKind kind) {
  std::vector<Row> out;
  for (const Row& r : all) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

const Row* find(const std::vector<Row>& all, const std::string& name) {
  for (const Row& r : all) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

void expect_consistent(const profiler::Trace& t) {
  const size_t n = t.size();
  EXPECT_EQ(t.end_ns.size(), n);
  EXPECT_EQ(t.kind.size(), n);
  EXPECT_EQ(t.name.size(), n);
  EXPECT_EQ(t.stats.size(), n);
  EXPECT_EQ(t.thread.size(), n);
  EXPECT_EQ(t.device.size(), n);
  EXPECT_EQ(t.stream.size(), n);
  EXPECT_EQ(t.correlation_id.size(), n);
  EXPECT_EQ(t.value.size(), n);
  EXPECT_EQ(t.in_use_bytes.size(), n);
  EXPECT_EQ(t.reserved_bytes.size(), n);
  ASSERT_FALSE(t.strings.empty());
  EXPECT_EQ(t.strings[0], "");
  for (size_t i = 0; i < n; ++i) {
    EXPECT_LT(t.name[i], t.strings.size());
    EXPECT_LT(t.stats[i], t.strings.size());
    EXPECT_LE(t.start_ns[i], t.end_ns[i]);
    EXPECT_LT(t.thread[i], int32_t(t.threads.size()));
    if (i > 0) {  // sorted by (thread, start, -end)
      const bool ordered = t.thread[i - 1] < t.thread[i] ||
                           (t.thread[i - 1] == t.thread[i] &&
                            (t.start_ns[i - 1] < t.start_ns[i] ||
                             (t.start_ns[i - 1] == t.start_ns[i] && t.end_ns[i - 1] >= t.end_ns[i])));
      EXPECT_TRUE(ordered) << "event " << i;
    }
  }
}

TEST(ProfilerRecorder, ScopesNestWithKindsNamesAndThread) {
  SessionGuard guard;
  profiler::set_current_thread_name("profiler_test_main");
  profiler::start();
  EXPECT_TRUE(profiler::is_active());
  {
    TraceScope outer(EventKind::kLayer, "outer");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    {
      TraceScope inner(EventKind::kOp, "inner", 7);
      EXPECT_STREQ(profiler::current_scope_name(), "inner");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    EXPECT_STREQ(profiler::current_scope_name(), "outer");
  }
  EXPECT_EQ(profiler::current_scope_name(), nullptr);
  profiler::Trace t = profiler::stop();
  EXPECT_FALSE(profiler::is_active());
  expect_consistent(t);
  const auto all = rows(t);
  const Row* outer = find(all, "outer");
  const Row* inner = find(all, "inner");
  ASSERT_NE(outer, nullptr);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(outer->kind, EventKind::kLayer);
  EXPECT_EQ(inner->kind, EventKind::kOp);
  EXPECT_EQ(inner->value, 7);
  EXPECT_LE(outer->start, inner->start);
  EXPECT_GE(outer->end, inner->end);
  EXPECT_LT(outer - all.data(), inner - all.data());  // parent first
  EXPECT_EQ(outer->thread, inner->thread);
  EXPECT_EQ(t.threads.at(outer->thread).name, "profiler_test_main");
  EXPECT_GT(t.threads.at(outer->thread).os_tid, 0);
  EXPECT_GT(t.session_stop_unix_ns, t.session_start_unix_ns);
  EXPECT_EQ(t.dropped_events, 0);
}

TEST(ProfilerRecorder, InstantsAndPushedScopes) {
  SessionGuard guard;
  profiler::start();
  profiler::EventArgs args;
  args.value = 42;
  args.stats = "a=1;b=2";
  profiler::record_instant(EventKind::kStep, "marker", args);
  profiler::push_scope(EventKind::kUser, profiler::intern(std::string("py_outer")));
  profiler::push_scope(EventKind::kUser, profiler::intern(std::string("py_inner")), 3);
  profiler::pop_scope();
  profiler::pop_scope();
  profiler::pop_scope();  // empty stack: no-op
  const int64_t now = profiler::now_ns();
  EXPECT_GT(now, 0);
  profiler::Trace t = profiler::stop();
  EXPECT_EQ(profiler::now_ns(), 0);
  expect_consistent(t);
  const auto all = rows(t);
  const Row* marker = find(all, "marker");
  ASSERT_NE(marker, nullptr);
  EXPECT_EQ(marker->kind, EventKind::kStep);
  EXPECT_EQ(marker->start, marker->end);
  EXPECT_EQ(marker->value, 42);
  EXPECT_EQ(marker->stats, "a=1;b=2");
  const Row* py_outer = find(all, "py_outer");
  const Row* py_inner = find(all, "py_inner");
  ASSERT_NE(py_outer, nullptr);
  ASSERT_NE(py_inner, nullptr);
  EXPECT_LE(py_outer->start, py_inner->start);
  EXPECT_GE(py_outer->end, py_inner->end);
  EXPECT_EQ(py_inner->value, 3);
}

TEST(ProfilerRecorder, NothingRecordedWhenOff) {
  SessionGuard guard;
  EXPECT_FALSE(profiler::enabled());
  { TraceScope s(EventKind::kOp, "before"); }
  profiler::record_instant(EventKind::kUser, "before_instant");
  profiler::push_scope(EventKind::kUser, "before_push");  // not pushed
  profiler::start();
  profiler::pop_scope();  // the stack is empty: nothing is recorded
  profiler::Trace t = profiler::stop();
  { TraceScope s(EventKind::kOp, "after"); }
  EXPECT_EQ(t.size(), 0u);
  profiler::start();
  profiler::Trace t2 = profiler::stop();
  EXPECT_EQ(t2.size(), 0u);
}

TEST(ProfilerRecorder, CapacityBoundCountsDrops) {
  SessionGuard guard;
  profiler::start(/*max_events_per_thread=*/10);
  for (int i = 0; i < 25; ++i) TraceScope s(EventKind::kOp, "tiny");
  profiler::Trace t = profiler::stop();
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(t.dropped_events, 15);
  EXPECT_THROW(profiler::start(0), Error);
}

TEST(ProfilerRecorder, EventsOfAFinishedThreadSurviveWithItsName) {
  SessionGuard guard;
  profiler::start();
  int64_t worker_tid = 0;
  std::thread worker([&] {
    profiler::set_current_thread_name("worker_thread");
    TraceScope s(EventKind::kInputProduce, "on_worker");
    worker_tid = 1;
  });
  worker.join();  // the thread (and its thread_locals) are gone before stop()
  std::thread unnamed([] { TraceScope s(EventKind::kOp, "on_unnamed"); });
  unnamed.join();
  { TraceScope s(EventKind::kOp, "on_main"); }
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  const auto all = rows(t);
  const Row* w = find(all, "on_worker");
  const Row* u = find(all, "on_unnamed");
  const Row* m = find(all, "on_main");
  ASSERT_NE(w, nullptr);
  ASSERT_NE(u, nullptr);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(t.threads.at(w->thread).name, "worker_thread");
  EXPECT_EQ(t.threads.at(u->thread).name,
            "thread " + std::to_string(t.threads.at(u->thread).os_tid));
  EXPECT_NE(w->thread, m->thread);
  EXPECT_NE(u->thread, m->thread);
  EXPECT_EQ(worker_tid, 1);
}

TEST(ProfilerRecorder, MemoryEventsCarryPoolStateAndOp) {
  SessionGuard guard;
  profiler::start();
  {
    TraceScope s(EventKind::kUser, "alloc_scope");
    Tensor t = zeros({1024}, DType::kFloat32, cpu());
  }  // freed here, inside the scope
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  const auto mem = of_kind(rows(t), EventKind::kMemory);
  ASSERT_GE(mem.size(), 2u);
  const Row* alloc = nullptr;
  const Row* release = nullptr;
  for (const Row& r : mem) {
    if (r.name == "allocate" && r.value >= 4096 && alloc == nullptr) alloc = &r;
    if (r.name == "deallocate" && r.value <= -4096) release = &r;
  }
  ASSERT_NE(alloc, nullptr);
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(alloc->start, alloc->end);
  EXPECT_EQ(alloc->device, -1);
  EXPECT_GE(alloc->in_use, alloc->value);
  EXPECT_GE(alloc->reserved, alloc->in_use);
  EXPECT_EQ(alloc->stats.rfind("op=alloc_scope;pool=", 0), 0u) << alloc->stats;
  EXPECT_NE(alloc->stats.find("CPU"), std::string::npos) << alloc->stats;
  EXPECT_EQ(release->in_use, alloc->in_use + release->value);
  // The observer is gone after stop(): allocations no longer reach the recorder.
  Tensor after = zeros({16}, DType::kFloat32, cpu());
  profiler::start();
  profiler::Trace empty = profiler::stop();
  EXPECT_EQ(of_kind(rows(empty), EventKind::kMemory).size(), 0u);
}

TEST(ProfilerRecorder, StartTwiceAndStopTwiceAreRuntimeErrors) {
  SessionGuard guard;
  try {
    profiler::stop();
    FAIL() << "stop() without a session did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_STREQ(e.what(), "[profiler] no profiling session is active");
  }
  profiler::start();
  try {
    profiler::start();
    FAIL() << "start() during a session did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_STREQ(e.what(),
                 "[profiler] a profiling session is already active; call "
                 "gpuaccel.profiler.stop() first");
  }
  EXPECT_TRUE(profiler::is_active());
  profiler::stop();
  EXPECT_THROW(profiler::stop(), Error);
}

TEST(ProfilerRecorder, DeviceIntervalsAndDeviceNames) {
  SessionGuard guard;
  EXPECT_EQ(profiler::device_index_from_name("/job:localhost/replica:0/task:0/device:GPU:3"), 3);
  EXPECT_EQ(profiler::device_index_from_name("/device:GPU:12"), 12);
  EXPECT_EQ(profiler::device_index_from_name("/job:localhost/replica:0/task:0/device:CPU:0"), -1);
  profiler::start();
  profiler::EventArgs args;
  args.device = 0;
  args.stream = 1;
  args.correlation_id = 9;
  profiler::record_device_interval(EventKind::kDeviceKernel, "gemm_kernel", 10, 20, args);
  { TraceScope s(EventKind::kOp, "host_op"); }
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.thread[0], -1);  // device plane first
  EXPECT_EQ(t.kind[0], uint8_t(EventKind::kDeviceKernel));
  EXPECT_EQ(t.strings.at(t.name[0]), "gemm_kernel");
  EXPECT_EQ(t.device[0], 0);
  EXPECT_EQ(t.stream[0], 1);
  EXPECT_EQ(t.correlation_id[0], 9);
  EXPECT_EQ(t.end_ns[0] - t.start_ns[0], 10);
}

TEST(ProfilerInstrumentation, MatmulThroughTheFrontendIsAnOp) {
  SessionGuard guard;
  Tensor a = randn({8, 8}, DType::kFloat32, cpu());
  profiler::start();
  Tensor c = matmul(a, a);
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  const auto all = rows(t);
  const Row* mm = find(all, "matmul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->kind, EventKind::kOp);
  EXPECT_EQ(mm->device, -1);
  bool allocated_output = false;
  for (const Row& r : of_kind(all, EventKind::kMemory)) allocated_output |= r.name == "allocate";
  EXPECT_TRUE(allocated_output);
}

TEST(ProfilerInstrumentation, PrefetcherWaitAndProduceOnTwoThreads) {
  SessionGuard guard;
  profiler::start();
  {
    int produced = 0;
    Prefetcher p([&]() -> std::optional<Prefetcher::Batch> {
      if (produced == 3) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ++produced;
      return Prefetcher::Batch{zeros({4}, DType::kFloat32, cpu())};
    }, 1);
    while (p.next().has_value()) {
    }
  }
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  const auto all = rows(t);
  const auto waits = of_kind(all, EventKind::kInputWait);
  const auto produces = of_kind(all, EventKind::kInputProduce);
  ASSERT_GE(waits.size(), 3u);
  ASSERT_GE(produces.size(), 3u);
  EXPECT_EQ(waits[0].name, "prefetch_wait");
  EXPECT_EQ(produces[0].name, "prefetch_produce");
  EXPECT_NE(waits[0].thread, produces[0].thread);
  EXPECT_EQ(t.threads.at(produces[0].thread).name, "gpuaccel_prefetch");
}

// Not a timed assertion: prints what a scope costs with profiling off and on.
TEST(ProfilerOverhead, ReportsScopeCost) {
  SessionGuard guard;
  const profiler::ScopeCost cost = profiler::measure_scope_cost(1000000);
  EXPECT_GT(cost.on_ns, 0.0);
  EXPECT_EQ(cost.recorded_events, 1000000);  // every scope of the "on" run was recorded
  EXPECT_FALSE(profiler::is_active());  // its own session is over
  EXPECT_THROW(profiler::measure_scope_cost(0), Error);
  std::printf("[ profiler ] one TraceScope: %.2f ns off, %.1f ns on\n", cost.off_ns, cost.on_ns);
}

}  // namespace
}  // namespace gpuaccel

namespace gpuaccel {
namespace {

TEST(ProfilerDeviceTimeline, KernelsAndCopiesBecomeCorrelatedDeviceIntervals) {
  SessionGuard guard;
  // The fake CUDA library's events read a fake device clock that each "kernel" advances, so the
  // device timeline (event pool, clock reference, conversion at stop) runs without a GPU.
  const FakeCuda fake = open_fake_cuda();
  ASSERT_NE(fake.library, nullptr) << dlerror();
  const FakeCudaCounters before = *fake.counters;
  auto cuda = std::make_unique<LibraryBackend>(*fake.library, 0, cpu());
  TensorView view;
  view.ndim = 1;
  view.shape[0] = 16;
  view.strides[0] = 1;
  float host[16] = {0};
  cuda->backend().matmul(view, view, nullptr, view);  // not profiled: no events
  EXPECT_EQ(fake.counters->events_created, before.events_created);
  std::unique_ptr<Backend> tracing = make_tracing_backend(cuda->backend(), 0);
  for (int session = 0; session < 2; ++session) {
    profiler::start();
    Backend& traced = *tracing;
    traced.matmul(view, view, nullptr, view);
    traced.copy_from_host(host, view);
    traced.matmul(view, view, nullptr, view);
    profiler::Trace t = profiler::stop();
    expect_consistent(t);
    std::vector<size_t> device_rows, host_ops;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.thread[i] == -1) device_rows.push_back(i);
      if (t.thread[i] >= 0) host_ops.push_back(i);
    }
    ASSERT_EQ(device_rows.size(), 3u);
    ASSERT_EQ(host_ops.size(), 3u);
    const size_t k0 = device_rows[0], c = device_rows[1], k1 = device_rows[2];
    EXPECT_EQ(t.kind[k0], uint8_t(EventKind::kDeviceKernel));
    EXPECT_EQ(t.strings.at(t.name[k0]), "matmul");
    EXPECT_EQ(t.device[k0], 0);
    EXPECT_EQ(t.stream[k0], 0);
    EXPECT_NEAR(double(t.end_ns[k0] - t.start_ns[k0]), 1.5e6, 1e3);
    EXPECT_EQ(t.kind[c], uint8_t(EventKind::kDeviceCopy));
    EXPECT_EQ(t.strings.at(t.name[c]), "copy_host_to_device");
    EXPECT_EQ(t.value[c], 16 * 4);
    EXPECT_NEAR(double(t.end_ns[c] - t.start_ns[c]), 0.25e6, 1e3);
    EXPECT_GE(t.start_ns[c], t.end_ns[k0]);
    EXPECT_GE(t.start_ns[k1], t.end_ns[c]);
    // Each device interval carries the correlation id of its host op.
    for (size_t j = 0; j < 3; ++j) {
      const size_t h = host_ops[j], d = device_rows[j];
      EXPECT_GT(t.correlation_id[h], 0);
      EXPECT_EQ(t.correlation_id[h], t.correlation_id[d]);
      EXPECT_EQ(t.device[h], 0);
    }
    EXPECT_EQ(t.kind[host_ops[1]], uint8_t(EventKind::kCopyHostToDevice));
    EXPECT_EQ(t.value[host_ops[1]], 16 * 4);
  }
  // Events come from a pool: the second session made no new ones (3 pairs + 1 reference).
  EXPECT_EQ(fake.counters->events_created - before.events_created, 7);
  // ... and the backend gives every one back to the driver when it goes.
  tracing.reset();
  cuda.reset();
  EXPECT_EQ(fake.counters->events_destroyed - before.events_destroyed, 7);
}

}  // namespace
}  // namespace gpuaccel

namespace gpuaccel {
namespace {

// On a real GPU (skipped elsewhere): the matmul's host event and its device-plane kernel share a
// correlation id, copies appear on both planes, and device time lands near host time.
TEST(ProfilerGpu, OpsHaveCorrelatedDeviceKernelsAndCopies) {
  SessionGuard guard;
  const auto gpus = DeviceRegistry::instance().logical_devices(DeviceType::kGPU);
  if (gpus.empty() || cuda_library() == nullptr) GTEST_SKIP() << "needs a CUDA GPU";
  Tensor host = randn({256, 256}, DType::kFloat32, cpu());
  Tensor warm = matmul(to_device(host, gpus[0]), to_device(host, gpus[0]));  // library setup
  profiler::start();
  Tensor a = to_device(host, gpus[0]);
  Tensor c = matmul(a, a);
  Tensor back = to_device(c, cpu());
  profiler::Trace t = profiler::stop();
  expect_consistent(t);
  int64_t host_matmul = -1, device_matmul = -1, device_copies = 0, host_h2d = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string name = t.strings.at(t.name[i]);
    const auto kind = EventKind(t.kind[i]);
    if (kind == EventKind::kOp && name == "matmul" && t.thread[i] >= 0) host_matmul = int64_t(i);
    if (kind == EventKind::kDeviceKernel && name == "matmul") device_matmul = int64_t(i);
    if (kind == EventKind::kDeviceCopy) {
      ++device_copies;
      EXPECT_EQ(t.value[i], 256 * 256 * 4);
    }
    if (kind == EventKind::kCopyHostToDevice) ++host_h2d;
  }
  ASSERT_GE(host_matmul, 0);
  ASSERT_GE(device_matmul, 0);
  EXPECT_EQ(t.thread[device_matmul], -1);
  EXPECT_EQ(t.device[device_matmul], gpus[0].physical_index);
  EXPECT_GT(t.correlation_id[host_matmul], 0);
  EXPECT_EQ(t.correlation_id[host_matmul], t.correlation_id[device_matmul]);
  EXPECT_GT(t.end_ns[device_matmul], t.start_ns[device_matmul]);
  // The kernel cannot start before its launch began (50 us of alignment slack).
  EXPECT_GE(t.start_ns[device_matmul], t.start_ns[host_matmul] - 50000);
  EXPECT_GE(device_copies, 2);
  EXPECT_GE(host_h2d, 1);
  std::printf("[ profiler ] host matmul %lld ns at %lld, device kernel %lld ns at %lld\n",
              (long long)(t.end_ns[host_matmul] - t.start_ns[host_matmul]),
              (long long)t.start_ns[host_matmul],
              (long long)(t.end_ns[device_matmul] - t.start_ns[device_matmul]),
              (long long)t.start_ns[device_matmul]);
}

}  // namespace
}  // namespace gpuaccel
