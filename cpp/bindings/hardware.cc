// Bindings of what the machine has and what gpuaccel was built with: the CUDA backend's status
// and versions, the CPU's instruction sets, oneDNN's version and NVML's GPU table. Everything
// crosses as plain dicts; python/gpuaccel/{cuda,version,utils,info}.py give them their faces.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/onednn_info.h"
#include "backends/cpu/onednn_ops.h"
#include "bindings/bindings.h"
#include "core/cpu_info.h"
#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/errors.h"
#include "core/nvml.h"
#include "profiler/profiler.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

// None for "unknown" (0), so Python shows None rather than a fake version.
py::object version_or_none(int version) {
  return version > 0 ? py::object(py::int_(version)) : py::object(py::none());
}

py::dict status_to_dict(const CudaBackendStatus& s) {
  py::dict out;
  out["built"] = s.built;
  out["loaded"] = s.loaded;
  out["library_path"] = s.library_path;
  out["path_from_env"] = s.path_from_env;
  out["reason"] = s.reason;
  out["problem"] = cuda_problem_name(s.problem);
  out["detail"] = s.detail;
  out["status"] = static_cast<int>(s.status);
  out["device_count"] = s.device_count;
  out["runtime_version"] = version_or_none(s.runtime_version);
  out["driver_version"] = version_or_none(s.driver_version);
  out["cudnn_version"] = version_or_none(s.cudnn_version);
  out["cublas_version"] = version_or_none(s.cublas_version);
  out["cuda_visible_devices"] = s.cuda_visible_devices;
  out["missing_libraries"] = s.missing_libraries;
  out["cudnn_warning"] = s.cudnn_warning;
  out["backend_choice"] = s.backend_choice;
  out["refused_backends"] = s.refused_backends;
  py::list libraries;
  for (const CudaLibraryCopy& c : s.cuda_libraries) {
    py::dict d;
    d["soname"] = c.soname;
    d["wheel_path"] = c.wheel_path;
    d["loaded_path"] = c.loaded_path;
    d["preloaded"] = c.preloaded;
    d["error"] = c.error;
    d["version"] = version_or_none(c.version);
    libraries.append(d);
  }
  out["libraries"] = libraries;
  out["wheel_roots"] = s.wheel_roots;
  return out;
}

py::dict build_info_dict() {
  const BuildInfo b = build_info();
  py::dict out;
  out["gpuaccel"] = b.gpuaccel_version;
  out["cuda"] = b.cuda_version.empty() ? py::object(py::none()) : py::object(py::str(b.cuda_version));
  out["cudnn"] = version_or_none(b.cudnn_version);
  out["cuda_backend_file"] = b.cuda_backend_file;
  return out;
}

py::dict cpu_info_dict() {
  const CpuInfo c = cpu_info();
  py::dict flags;
  for (const auto& [name, present] : c.flags()) flags[py::str(name)] = present;
  py::dict out;
  out["vendor"] = c.vendor;
  out["model_name"] = c.model_name;
  out["logical_cpus"] = c.logical_cpus;
  out["usable_cpus"] = c.usable_cpus;
  out["physical_cores"] = c.physical_cores;
  out["flags"] = flags;
  out["isa_cap"] = c.isa_cap.empty() ? py::object(py::none()) : py::object(py::str(c.isa_cap));
  out["isa_cap_recognized"] = c.isa_cap_recognized;
  out["isa_cap_variable"] = c.isa_cap_variable;
  return out;
}

py::dict onednn_version_dict() {
  const cpu::OneDnnVersion v = cpu::onednn_version();
  py::dict out;
  out["version"] = v.str();
  out["major"] = v.major;
  out["minor"] = v.minor;
  out["patch"] = v.patch;
  out["hash"] = v.hash;
  out["cpu_runtime"] = v.cpu_runtime;
  return out;
}

py::dict nvml_report_dict() {
  NvmlReport r;
  {
    py::gil_scoped_release release;  // NVML queries can take a moment per GPU
    r = nvml_report();
  }
  py::list gpus;
  for (const NvmlGpu& g : r.gpus) {
    py::dict d;
    d["index"] = g.index;
    d["name"] = g.name;
    d["temperature_c"] = g.temperature_c;
    d["gpu_utilization_pct"] = g.gpu_utilization_pct;
    d["memory_utilization_pct"] = g.memory_utilization_pct;
    d["memory_used_bytes"] = g.memory_used_bytes;
    d["memory_total_bytes"] = g.memory_total_bytes;
    d["power_draw_w"] = g.power_draw_w;
    d["power_limit_w"] = g.power_limit_w;
    d["error"] = g.error;
    gpus.append(d);
  }
  py::dict out;
  out["available"] = r.available;
  out["reason"] = r.reason;
  out["library"] = r.library;
  out["driver_version"] = r.driver_version;
  out["cuda_driver_version"] = version_or_none(r.cuda_driver_version);
  out["gpus"] = gpus;
  return out;
}

void cuda_synchronize(int physical_index) {
  CudaLibrary& cuda = require_cuda_library("synchronize");
  std::string err;
  CudaStatus status = CudaStatus::kOk;
  {
    py::gil_scoped_release release;
    profiler::TraceScope scope(profiler::EventKind::kSynchronize, "synchronize");
    if (scope.recording()) scope.set_device(physical_index);
    status = cuda.synchronize(physical_index, &err);
  }
  if (status != CudaStatus::kOk) throw_error(ErrorCode::kInternal, "synchronize", err);
}

}  // namespace

void init_hardware(py::module_& m) {
  m.def("cuda_backend_status", [] { return status_to_dict(cuda_backend_status()); },
        "How the CUDA backend library was found and loaded, or why not (loads it on first call).");
  m.def("probe_cuda_backend", [](const std::string& path,
                                  const std::optional<std::vector<std::string>>& wheel_roots,
                                  std::optional<int> driver_cuda_version) {
    if (!driver_cuda_version) {
      return status_to_dict(wheel_roots ? probe_cuda_backend(path, *wheel_roots) : probe_cuda_backend(path));
    }
    CudaDriverProbe driver;  // pretended: 0 is "no driver", else a driver of that CUDA version
    driver.found = *driver_cuda_version > 0;
    driver.cuda_version = *driver_cuda_version;
    if (!driver.found) driver.error = "no NVIDIA driver (pretended by probe_cuda_backend)";
    const BuildInfo build = build_info();
    return status_to_dict(probe_cuda_backend(
        path, wheel_roots ? *wheel_roots : std::vector<std::string>{}, driver,
        cuda_version_number(build.cuda_version)));
  }, py::arg("library_path"), py::arg("wheel_roots") = py::none(),
     py::arg("driver_cuda_version") = py::none(),
     "Runs the CUDA backend search afresh for the library at `library_path` (diagnosis, tests); "
     "nvidia-* wheels are looked for under `wheel_roots` when given; with `driver_cuda_version` "
     "(12040; 0: none) the driver is pretended instead of probed (and wheels are looked for "
     "only under `wheel_roots`).");
  m.def("check_cudnn_runtime", &check_cudnn_runtime, py::arg("build_version"),
        py::arg("loaded_version"),
        "'' when the loaded cuDNN can run a backend built with those headers, else the warning.");
  // The wheels' folders as Python sees them: the backend, loaded later from C++, looks for
  // nvidia-* wheels in every sys.path entry of import time too (pip --user, venvs over system).
  std::vector<std::string> search_paths;
  for (const py::handle& entry : py::module_::import("sys").attr("path")) {
    if (py::isinstance<py::str>(entry)) search_paths.push_back(entry.cast<std::string>());
  }
  set_python_search_paths(search_paths);
  m.def("elf_needed_libraries", [](const std::string& path) {
    std::string error;
    std::vector<std::string> needed = elf_needed_libraries(path, &error);
    if (needed.empty() && !error.empty()) throw_error(ErrorCode::kInvalidArgument, "elf_needed_libraries", error);
    return needed;
  }, py::arg("path"), "The DT_NEEDED sonames of a shared library.");
  m.def("find_in_nvidia_wheels", &find_in_nvidia_wheels, py::arg("roots"), py::arg("soname"),
        "The first <root>/nvidia/*/lib/<soname>, or '' (how the CUDA backend finds wheels).");
  m.def("driver_supports_runtime", &driver_supports_runtime, py::arg("driver_version"),
        py::arg("runtime_version"), "True when the driver's CUDA major is at least the runtime's.");
  m.def("minimum_driver_for_cuda", &minimum_driver_for_cuda, py::arg("runtime_version"),
        "The oldest Linux NVIDIA driver for that CUDA major ('525.60.13' for 12.x).");
  m.def("cuda_backend_library_path", &cuda_backend_library_path,
        "Where the CUDA backend library is looked for ($GPUACCEL_CUDA_BACKEND or next to _C).");
  m.def("build_info", &build_info_dict, "What this gpuaccel was compiled with.");
  m.def("cuda_version_string", &cuda_version_string, "13000 -> '13.0'");
  m.def("cudnn_version_string", &cudnn_version_string, "91900 -> '9.19.0'");
  m.def("cpu_info", &cpu_info_dict, "CPU model, core counts and usable instruction sets.");
  m.def("onednn_version", &onednn_version_dict, "The oneDNN library loaded at run time.");
  m.def("set_conv2d_backward_data_impl", &cpu::set_conv2d_backward_data_impl,
        py::arg("setting"),
        "'measure', 'default' or a oneDNN implementation name (cpu/onednn_ops.h).");
  m.def("conv2d_backward_data_impl_setting", &cpu::conv2d_backward_data_impl_setting);
  m.def("set_conv2d_backward_weights_impl", &cpu::set_conv2d_backward_weights_impl,
        py::arg("setting"),
        "'measure', 'default' or a oneDNN implementation name, optionally with '@1thread' "
        "(cpu/onednn_ops.h).");
  m.def("conv2d_backward_weights_impl_setting", &cpu::conv2d_backward_weights_impl_setting);
  m.def("nvml_report", &nvml_report_dict,
        "An nvidia-smi-like snapshot of every NVIDIA GPU through NVML, or why there is none.");
  m.def("cuda_synchronize", &cuda_synchronize, py::arg("physical_index"),
        "Waits for all work on the CUDA device (index after CUDA_VISIBLE_DEVICES).");
}

}  // namespace gpuaccel::bindings
