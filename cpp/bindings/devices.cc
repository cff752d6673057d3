// Bindings of the device registry, configuration and placement. Devices cross the boundary as
// (device_type, index) tuples; python/gpuaccel/config.py turns them into TF's namedtuples.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>

#include "backends/cpu/cpu_threads.h"
#include "backends/library/library_backend.h"
#include "bindings/bindings.h"
#include "core/device_registry.h"
#include "core/device_scope.h"
#include "core/errors.h"
#include "memory/memory_manager.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

using DeviceTuple = std::pair<std::string, int>;
using ConfigTuple = std::tuple<std::optional<int64_t>, std::optional<int>, std::optional<int>>;

DeviceRegistry& registry() { return DeviceRegistry::instance(); }

// device_type strings: "CPU"/"GPU" in any case (TF itself is case-sensitive; we accept 'gpu').
std::optional<DeviceType> parse_type(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string t = *text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  if (t == "CPU") return DeviceType::kCPU;
  if (t == "GPU") return DeviceType::kGPU;
  throw_value_error("", "Unknown device_type '" + *text + "'; expected 'CPU' or 'GPU'");
}

PhysicalDevice to_physical(const DeviceTuple& t) {
  return {*parse_type(t.first), t.second};
}
DeviceTuple from_physical(const PhysicalDevice& d) { return {device_type_name(d.type), d.index}; }

std::vector<DeviceTuple> from_physical_list(const std::vector<PhysicalDevice>& list) {
  std::vector<DeviceTuple> out;
  for (const auto& d : list) out.push_back(from_physical(d));
  return out;
}

py::dict logical_to_dict(const LogicalDevice& d) {
  py::dict out;
  out["device_type"] = device_type_name(d.type);
  out["index"] = d.index;
  out["name"] = d.name();
  out["full_name"] = d.full_name();
  out["physical_index"] = d.physical_index;
  out["memory_limit_bytes"] = d.memory_limit_bytes;
  out["memory_growth"] = d.memory_growth;
  return out;
}

py::dict gpu_info_to_dict(const GpuInfo& g) {
  py::dict out;
  out["name"] = g.name;
  out["total_memory"] = g.total_memory;
  out["major"] = g.major;
  out["minor"] = g.minor;
  out["multi_processor_count"] = g.multi_processor_count;
  out["memory_bus_width"] = g.memory_bus_width_bits;
  out["memory_clock_rate"] = g.memory_clock_khz;
  out["memory_bandwidth_gbps"] = g.memory_bandwidth_gbps();
  out["pci_bus_id"] = g.pci_bus_id;
  return out;
}

// Placement log lines go to Python's sys.stderr so they show in Jupyter/Colab cells too.
void install_python_placement_logger() {
  registry().set_placement_logger([](const std::string& line) {
    py::gil_scoped_acquire gil;
    py::module_::import("sys").attr("stderr").attr("write")(line + "\n");
  });
}

}  // namespace

void init_devices(py::module_& m) {
  install_python_placement_logger();

  m.def("physical_devices", [](std::optional<std::string> type) {
    return from_physical_list(registry().physical_devices(parse_type(type)));
  }, py::arg("device_type") = py::none());
  m.def("visible_devices", [](std::optional<std::string> type) {
    return from_physical_list(registry().visible_devices(parse_type(type)));
  }, py::arg("device_type") = py::none());
  m.def("set_visible_devices", [](const std::vector<DeviceTuple>& devices,
                                  std::optional<std::string> type) {
    std::vector<PhysicalDevice> list;
    for (const auto& d : devices) list.push_back(to_physical(d));
    registry().set_visible_devices(list, parse_type(type));
  }, py::arg("devices"), py::arg("device_type") = py::none());

  m.def("set_memory_growth", [](const DeviceTuple& d, bool enable) {
    registry().set_memory_growth(to_physical(d), enable);
  });
  m.def("memory_growth", [](const DeviceTuple& d) { return registry().memory_growth(to_physical(d)); });
  m.def("forced_gpu_memory_growth", &forced_gpu_memory_growth_from_env);

  m.def("set_logical_device_configuration", [](const DeviceTuple& d,
                                               const std::vector<ConfigTuple>& configs) {
    std::vector<LogicalDeviceConfiguration> list;
    for (const auto& [limit, priority, ordinal] : configs) list.push_back({limit, priority, ordinal});
    registry().set_logical_device_configuration(to_physical(d), list);
  });
  m.def("logical_device_configuration", [](const DeviceTuple& d)
                                            -> std::optional<std::vector<ConfigTuple>> {
    auto configs = registry().logical_device_configuration(to_physical(d));
    if (!configs) return std::nullopt;
    std::vector<ConfigTuple> out;
    for (const auto& c : *configs) {
      out.emplace_back(c.memory_limit_mb, c.experimental_priority, c.experimental_device_ordinal);
    }
    return out;
  });

  m.def("is_initialized", [] { return registry().initialized(); });
  m.def("ensure_initialized", [] { registry().ensure_initialized(); });
  m.def("logical_devices", [](std::optional<std::string> type) {
    py::list out;
    for (const auto& d : registry().logical_devices(parse_type(type))) out.append(logical_to_dict(d));
    return out;
  }, py::arg("device_type") = py::none());

  m.def("gpu_info", [](int i) { return gpu_info_to_dict(registry().gpu_info(i)); });
  m.def("gpu_unavailable_reason", [] { return registry().gpu_unavailable_reason(); });
  m.def("gpu_provider_kind", [] { return registry().gpu_provider_kind(); });

  m.def("set_soft_device_placement", [](bool on) { registry().set_soft_device_placement(on); });
  m.def("soft_device_placement", [] { return registry().soft_device_placement(); });
  m.def("set_intra_op_parallelism_threads",
        [](int n) { registry().set_intra_op_parallelism_threads(n); });
  m.def("intra_op_parallelism_threads", [] { return registry().intra_op_parallelism_threads(); });
  m.def("set_inter_op_parallelism_threads",
        [](int n) { registry().set_inter_op_parallelism_threads(n); });
  m.def("inter_op_parallelism_threads", [] { return registry().inter_op_parallelism_threads(); });
  // The team size an op started from this thread uses now (tests and gpuaccel.info).
  m.def("cpu_threads_for_this_thread", [] { return cpu::threads_for_this_thread(); });
  m.def("set_log_device_placement", [](bool on) { registry().set_log_device_placement(on); });
  m.def("log_device_placement", [] { return registry().log_device_placement(); });

  m.def("parse_device_name", [](const std::string& text) {
    const DeviceSpec spec = parse_device_name(text);
    return std::make_pair(std::string(device_type_name(spec.type)), spec.index);
  });
  m.def("push_device_scope", [](std::optional<std::string> name) {
    push_device_scope(name ? std::optional<DeviceSpec>(parse_device_name(*name)) : std::nullopt);
  });
  m.def("pop_device_scope", &pop_device_scope);
  m.def("place_op", [](const std::string& op) {
    return logical_to_dict(registry().place_op(op, current_device_scope()));
  }, "Decides (and logs, when logging is on) where `op` runs under the current device scope.");

  m.def("_reset_runtime_for_testing", [](std::optional<std::vector<py::dict>> simulated_gpus) {
    std::unique_ptr<GpuProvider> provider;
    if (simulated_gpus) {
      std::vector<GpuInfo> gpus;
      for (const auto& d : *simulated_gpus) {
        GpuInfo g;
        g.name = d["name"].cast<std::string>();
        g.total_memory = d["total_memory"].cast<int64_t>();
        g.major = d["major"].cast<int>();
        g.minor = d["minor"].cast<int>();
        if (d.contains("multi_processor_count")) g.multi_processor_count = d["multi_processor_count"].cast<int>();
        gpus.push_back(g);
      }
      provider = std::make_unique<SimulatedGpuProvider>(gpus);
    }
    // Pools first: they were made for the old registry's logical devices. The GPU backends
    // give back the workspaces they keep, or those would keep the old pools' regions.
    release_cuda_backend_memory();
    MemoryManager::instance().reset();
    DeviceRegistry::reset_instance(std::move(provider));
    install_python_placement_logger();
  }, py::arg("simulated_gpus") = py::none(),
     "Test hook: forgets all configuration and memory pools and starts a fresh registry, "
     "optionally over simulated GPUs (which report properties but cannot run anything).");
}

}  // namespace gpuaccel::bindings
