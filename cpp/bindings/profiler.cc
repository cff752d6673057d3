// Bindings of the trace recorder, gpuaccel._C.profiler: start/stop a session and get its events
// back as NumPy columns (what the Python exporters read), plus the begin/end/instant calls behind
// gpuaccel.profiler.Trace. begin/end/instant check "is a session recording?" before converting
// any argument, so an un-profiled Python scope costs one call and one atomic load.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "core/cpu_info.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "profiler/profiler.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

using profiler::EventKind;

template <typename T>
py::array_t<T> to_array(std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

EventKind to_kind(int kind) {
  if (kind < 0 || kind >= profiler::kEventKindCount) {
    throw_value_error("profiler", "unknown event kind " + std::to_string(kind) +
                                      "; use a gpuaccel._C.profiler.EventKind value");
  }
  return static_cast<EventKind>(kind);
}

// The GPUs this process sees, as the exporters describe device planes.
py::list devices_list() {
  py::list out;
  DeviceRegistry& registry = DeviceRegistry::instance();
  for (const PhysicalDevice& dev : registry.physical_devices(DeviceType::kGPU)) {
    const GpuInfo info = registry.gpu_info(dev.index);
    py::dict d;
    d["index"] = dev.index;
    d["name"] = "/device:GPU:" + std::to_string(dev.index);
    d["model"] = info.name;
    d["compute_capability"] = std::to_string(info.major) + "." + std::to_string(info.minor);
    d["memory_bytes"] = info.total_memory;
    d["memory_bandwidth_bytes_per_s"] = static_cast<int64_t>(info.memory_bandwidth_gbps() * 1e9);
    d["core_count"] = info.multi_processor_count;  // streaming multiprocessors
    d["clock_rate_khz"] = 0;  // not reported by the CUDA backend's device query (ABI v3)
    out.append(d);
  }
  return out;
}

py::dict host_dict() {
  char hostname[HOST_NAME_MAX + 1] = {0};
  if (::gethostname(hostname, sizeof(hostname) - 1) != 0) hostname[0] = '\0';
  py::dict d;
  d["hostname"] = std::string(hostname);
  d["cpu"] = cpu_info().model_name;
  return d;
}

py::dict trace_dict(profiler::Trace& t) {
  py::dict columns;
  columns["start_ns"] = to_array(t.start_ns);
  columns["end_ns"] = to_array(t.end_ns);
  columns["kind"] = to_array(t.kind);
  columns["name"] = to_array(t.name);
  columns["stats"] = to_array(t.stats);
  columns["thread"] = to_array(t.thread);
  columns["device"] = to_array(t.device);
  columns["stream"] = to_array(t.stream);
  columns["correlation_id"] = to_array(t.correlation_id);
  columns["value"] = to_array(t.value);
  columns["in_use_bytes"] = to_array(t.in_use_bytes);
  columns["reserved_bytes"] = to_array(t.reserved_bytes);
  py::list threads;
  for (size_t i = 0; i < t.threads.size(); ++i) {
    py::dict th;
    th["index"] = static_cast<int64_t>(i);
    th["name"] = t.threads[i].name;
    th["os_tid"] = t.threads[i].os_tid;
    threads.append(th);
  }
  py::dict out;
  out["columns"] = columns;
  out["strings"] = py::cast(t.strings);
  out["threads"] = threads;
  out["session_start_unix_ns"] = t.session_start_unix_ns;
  out["session_stop_unix_ns"] = t.session_stop_unix_ns;
  out["dropped_events"] = t.dropped_events;
  out["devices"] = devices_list();
  out["host"] = host_dict();
  return out;
}

const char* stats_text(const py::object& stats) {
  if (stats.is_none()) return nullptr;
  const std::string s = stats.cast<std::string>();
  return s.empty() ? nullptr : profiler::intern(s);
}

}  // namespace

void init_profiler(py::module_& m) {
  py::module_ p = m.def_submodule("profiler", "The C++ trace recorder behind gpuaccel.profiler.");

  py::enum_<EventKind>(p, "EventKind", "What a trace event is (the numbering is the exporters').")
      .value("OP", EventKind::kOp)
      .value("LAYER", EventKind::kLayer)
      .value("BACKWARD", EventKind::kBackward)
      .value("COPY_HOST_TO_DEVICE", EventKind::kCopyHostToDevice)
      .value("COPY_DEVICE_TO_HOST", EventKind::kCopyDeviceToHost)
      .value("COPY_DEVICE_TO_DEVICE", EventKind::kCopyDeviceToDevice)
      .value("INPUT_WAIT", EventKind::kInputWait)
      .value("INPUT_PRODUCE", EventKind::kInputProduce)
      .value("OPTIMIZER", EventKind::kOptimizer)
      .value("COLLECTIVE", EventKind::kCollective)
      .value("SYNCHRONIZE", EventKind::kSynchronize)
      .value("STEP", EventKind::kStep)
      .value("USER", EventKind::kUser)
      .value("MEMORY", EventKind::kMemory)
      .value("DEVICE_KERNEL", EventKind::kDeviceKernel)
      .value("DEVICE_COPY", EventKind::kDeviceCopy);

  p.def("start", [](int64_t max_events_per_thread) {
         profiler::start(max_events_per_thread);
       }, py::arg("max_events_per_thread") = profiler::kDefaultMaxEventsPerThread,
       "Starts a profiling session (RuntimeError when one is active).");
  p.def("stop", [] {
         profiler::Trace trace;
         {
           py::gil_scoped_release release;
           trace = profiler::stop();
         }
         return trace_dict(trace);
       }, "Ends the session and returns its events as columns (RuntimeError when none is active).");
  p.def("is_active", &profiler::is_active);
  p.def("now_ns", &profiler::now_ns,
        "Nanoseconds since the session start on the events' clock; 0 when inactive.");
  // py::object arguments: nothing is converted unless a session records.
  p.def("begin", [](const py::object& name, const py::object& kind, const py::object& value,
                    const py::object& stats) {
         if (!profiler::enabled()) return;
         profiler::push_scope(to_kind(kind.cast<int>()), profiler::intern(name.cast<std::string>()),
                              value.cast<int64_t>(), stats_text(stats));
       }, py::arg("name"), py::arg("kind") = static_cast<int>(EventKind::kUser),
       py::arg("value") = 0, py::arg("stats") = "",
       "Opens a scope on this thread's stack (no-op when no session records).");
  p.def("end", [] { profiler::pop_scope(); },
        "Closes this thread's innermost begin() scope (no-op when there is none).");
  p.def("instant", [](const py::object& name, const py::object& kind, const py::object& value,
                      const py::object& stats) {
         if (!profiler::enabled()) return;
         profiler::EventArgs args;
         args.value = value.cast<int64_t>();
         args.stats = stats_text(stats);
         profiler::record_instant(to_kind(kind.cast<int>()),
                                  profiler::intern(name.cast<std::string>()), args);
       }, py::arg("name"), py::arg("kind"), py::arg("value") = 0, py::arg("stats") = "",
       "Records an instant event on this thread (no-op when no session records).");
  // For a marker whose extent is known only afterwards: the training loop's step spans the
  // batch fetch, and is recorded only once the fetch found a batch.
  p.def("record", [](const py::object& name, const py::object& kind, int64_t start_ns,
                     int64_t end_ns, const py::object& value, const py::object& stats) {
         if (!profiler::enabled()) return;
         if (end_ns < start_ns) {
           throw py::value_error("[profiler] record(): end_ns (" + std::to_string(end_ns) +
                                 ") is before start_ns (" + std::to_string(start_ns) + ")");
         }
         profiler::EventArgs args;
         args.value = value.cast<int64_t>();
         args.stats = stats_text(stats);
         profiler::record_complete(to_kind(kind.cast<int>()),
                                   profiler::intern(name.cast<std::string>()), start_ns, end_ns,
                                   args);
       }, py::arg("name"), py::arg("kind"), py::arg("start_ns"), py::arg("end_ns"),
       py::arg("value") = 0, py::arg("stats") = "",
       "Records a complete event [start_ns, end_ns) (now_ns() clock) on this thread "
       "(no-op when no session records).");
  // For benchmarks/profiler_overhead.py: what one C++ trace point (a TraceScope, as placed
  // around every op) costs with profiling off and on, in ns. Runs its own short session.
  // For benchmarks/profiler_overhead.py: what one C++ trace point costs, off and on (ns).
  p.def("scope_cost_ns", [](int64_t iterations) {
         profiler::ScopeCost cost;
         {
           py::gil_scoped_release release;
           cost = profiler::measure_scope_cost(iterations);
         }
         return std::make_pair(cost.off_ns, cost.on_ns);
       }, py::arg("iterations") = 1000000,
       "(off_ns, on_ns): the cost of one C++ trace scope with profiling off and on.");
  p.def("set_thread_name", [](const std::string& name) { profiler::set_current_thread_name(name); },
        py::arg("name"), "Names the calling thread in traces.");
}

}  // namespace gpuaccel::bindings
