// Bindings of the memory area: per-device stats and controls behind gpuaccel.memory (TF's
// get_memory_info/reset_memory_stats and PyTorch's memory_* calls), the memory-fraction knob,
// and test hooks (raw allocations from Python until tensors exist; forgetting every pool when
// the runtime is reset). Devices cross as name strings; None means the default device.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "backends/library/library_backend.h"
#include "bindings/bindings.h"
#include "core/device_registry.h"
#include "core/errors.h"
#include "memory/memory_manager.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

LogicalDevice resolve(const std::optional<std::string>& device) {
  return resolve_logical_device(device ? std::optional<DeviceSpec>(parse_device_name(*device))
                                       : std::nullopt,
                                device ? *device : std::string("None"));
}

py::dict counter_dict(const StatCounter& c) {
  py::dict d;
  d["current"] = c.current;
  d["peak"] = c.peak;
  d["allocated"] = c.allocated;
  d["freed"] = c.freed;
  return d;
}

py::dict stats_dict(const LogicalDevice& device, const Allocator* allocator) {
  MemoryStats s;
  if (allocator) {
    s = allocator->stats();
  } else if (device.memory_limit_bytes) {
    s.limit_bytes = device.memory_limit_bytes;
  }
  py::dict d;
  d["device"] = device.name();
  d["pool"] = allocator ? allocator->name()
                        : std::string(device_type_name(device.type)) + "_" +
                              std::to_string(device.index) + "_pool";
  d["created"] = allocator != nullptr;
  d["caching"] = allocator ? allocator->caching() : !caching_disabled_by_env();
  d["allocated_bytes"] = counter_dict(s.allocated_bytes);
  d["requested_bytes"] = counter_dict(s.requested_bytes);
  d["reserved_bytes"] = counter_dict(s.reserved_bytes);
  d["allocation"] = counter_dict(s.allocations);
  d["segment"] = counter_dict(s.segments);
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  d["free_chunks"] = s.free_chunks;
  d["free_bytes"] = s.free_bytes;
  d["inactive_split"] = s.inactive_split;
  d["inactive_split_bytes"] = s.inactive_split_bytes;
  d["largest_free_chunk"] = s.largest_free_chunk;
  d["fragmentation"] = s.fragmentation();
  d["limit_bytes"] = s.limit_bytes;
  return d;
}

// Raw allocations made from Python (tests and notebooks, until tensors exist).
struct TestAllocation {
  std::shared_ptr<Allocator> allocator;
  void* ptr;
};
std::mutex g_test_mutex;
std::unordered_map<int64_t, TestAllocation> g_test_allocations;
int64_t g_next_handle = 1;

}  // namespace

void init_memory(py::module_& m) {
  m.def("_memory_stats", [](std::optional<std::string> device, bool initialize) -> py::object {
    if (!initialize && !DeviceRegistry::instance().initialized()) {
      if (device) parse_device_name(*device);  // still reject malformed names
      return py::none();
    }
    const LogicalDevice d = resolve(device);
    const auto allocator = MemoryManager::instance().find(d);
    return stats_dict(d, allocator.get());
  }, py::arg("device") = py::none(), py::arg("initialize") = true,
     "Stats of a logical device's allocator (zeros if it was never used). With initialize=False "
     "and the runtime not started, returns None instead of starting it.");

  m.def("_memory_reset_peak", [](std::optional<std::string> device) {
    if (auto a = MemoryManager::instance().find(resolve(device))) a->reset_peak_stats();
  }, py::arg("device") = py::none());
  m.def("_memory_reset_accumulated", [](std::optional<std::string> device) {
    if (auto a = MemoryManager::instance().find(resolve(device))) a->reset_accumulated_stats();
  }, py::arg("device") = py::none());

  m.def("_memory_empty_cache", [](std::optional<std::string> device) -> int64_t {
    size_t released = 0;
    if (device) {
      if (auto a = MemoryManager::instance().find(resolve(device))) released = a->empty_cache();
    } else {
      for (const auto& a : MemoryManager::instance().allocators()) released += a->empty_cache();
    }
    return static_cast<int64_t>(released);
  }, py::arg("device") = py::none(),
     "Gives unused regions back to the device (all devices when None); returns the bytes.");

  m.def("_memory_device_name", [](std::optional<std::string> device) {
    return resolve(device).name();
  }, py::arg("device") = py::none());
  m.def("_memory_caching_enabled", [] { return !caching_disabled_by_env(); });
  m.def("_memory_set_gpu_memory_fraction", [](double fraction) {
    MemoryManager::instance().set_gpu_memory_fraction(fraction);
  });
  m.def("_memory_gpu_memory_fraction", [] { return MemoryManager::instance().gpu_memory_fraction(); });

  m.def("_memory_allocate_for_testing", [](std::optional<std::string> device, int64_t nbytes) {
    if (nbytes < 0) throw_value_error("_memory_allocate_for_testing", "nbytes must be >= 0");
    auto allocator = MemoryManager::instance().allocator_for(resolve(device));
    void* ptr = nullptr;
    {
      py::gil_scoped_release release;
      ptr = allocator->allocate(static_cast<size_t>(nbytes));
    }
    std::lock_guard<std::mutex> lock(g_test_mutex);
    const int64_t handle = g_next_handle++;
    g_test_allocations[handle] = {std::move(allocator), ptr};
    return handle;
  }, py::arg("device"), py::arg("nbytes"),
     "Test hook: allocates raw bytes on a device; returns a handle for _memory_free_for_testing.");
  m.def("_memory_free_for_testing", [](int64_t handle) {
    TestAllocation a;
    {
      std::lock_guard<std::mutex> lock(g_test_mutex);
      auto it = g_test_allocations.find(handle);
      if (it == g_test_allocations.end()) {
        throw_value_error("_memory_free_for_testing", "unknown or already freed handle " +
                                                          std::to_string(handle));
      }
      a = std::move(it->second);
      g_test_allocations.erase(it);
    }
    a.allocator->deallocate(a.ptr);
  }, py::arg("handle"));

  m.def("_memory_reset_for_testing", [] {
          release_cuda_backend_memory();
          MemoryManager::instance().reset();
        },
        "Test hook: forgets every memory pool (call with _reset_runtime_for_testing). Pools "
        "still holding test allocations live on until those are freed.");
}

}  // namespace gpuaccel::bindings
