// Loads the CUDA backend library at run time (see cuda_backend_loader.h) and is the real
// GpuProvider over it. Each way of having no GPU -- not built, library missing, CUDA libraries
// missing, no driver, driver too old, no device, devices hidden -- is found by its own check,
// in that order, so the reason names the first thing a student has to fix.
#include "core/cuda_loader/cuda_backend_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <vector>

#include "core/cuda_loader/cuda_backend_choice.h"
#include "core/errors.h"
#include "core/gpu_provider.h"

#ifndef GPUACCEL_VERSION
#define GPUACCEL_VERSION ""
#endif
#ifndef GPUACCEL_CUDA_BUILD_VERSION
#define GPUACCEL_CUDA_BUILD_VERSION ""
#endif
#ifndef GPUACCEL_CUDNN_BUILD_VERSION
#define GPUACCEL_CUDNN_BUILD_VERSION ""
#endif
#ifndef GPUACCEL_CUDA_BACKEND_FILE
#define GPUACCEL_CUDA_BACKEND_FILE ""
#endif

namespace gpuaccel {

namespace {

constexpr const char* kBackendEnv = "GPUACCEL_CUDA_BACKEND";
constexpr const char* kDriverLibrary = "libcuda.so.1";  // named in the no-driver reason
struct LoadResult {
  CudaBackendStatus status;
  CudaLibrary* library = nullptr;
};

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string dl_error_text() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The directory of the binary this code is linked into (the Python module _C, or a test).
std::string core_binary_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuda_backend_library_path), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) != nullptr) path = resolved;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool built_with_cuda() { return std::string(GPUACCEL_CUDA_BACKEND_FILE).size() > 0; }

// The CUDA version the backend was built with (13000); 0 when this gpuaccel has none.
int build_cuda_version() { return cuda_version_number(GPUACCEL_CUDA_BUILD_VERSION); }

// The nvidia-* wheel that provides `soname` for CUDA `major` (CUDA 13's runtime and cuBLAS
// dropped the -cu13 suffix; cuDNN and NCCL kept it); empty for a library no wheel provides.
std::string wheel_for_library(const std::string& soname, int major) {
  const std::string suffix = "-cu" + std::to_string(major);
  const std::string unsuffixed = major >= 13 ? "" : suffix;
  auto starts = [&](const char* prefix) { return soname.rfind(prefix, 0) == 0; };
  if (starts("libcudart.so")) return "nvidia-cuda-runtime" + unsuffixed;
  if (starts("libcublas")) return "nvidia-cublas" + unsuffixed;  // cuBLAS and cuBLASLt
  if (starts("libcudnn")) return "nvidia-cudnn" + suffix;
  if (starts("libnccl")) return "nvidia-nccl" + suffix;
  return "";
}

bool loadable_by_soname(const std::string& soname) {
  void* handle = dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

std::string version_or(int version, const std::string& unknown) {
  return version > 0 ? cuda_version_string(version) : unknown;
}

void fail(CudaBackendStatus& s, CudaProblem problem, CudaStatus status, std::string detail) {
  s.problem = problem;
  s.status = status;
  s.detail = std::move(detail);
  s.device_count = 0;
  s.reason = explain_cuda_problem(problem, s);
}

// The whole search for one library path, with nvidia-* wheels looked for under `wheel_roots`.
// Never throws (the caller catches what might).
LoadResult load(const std::string& library_path, bool path_from_env,
                const std::vector<std::string>& wheel_roots, const CudaDriverProbe& driver,
                int backend_cuda_version) {
  LoadResult r;
  CudaBackendStatus& s = r.status;
  s.built = built_with_cuda();
  s.library_path = library_path;
  s.path_from_env = path_from_env;
  s.cuda_visible_devices = env("CUDA_VISIBLE_DEVICES");
  s.wheel_roots = wheel_roots;
  s.driver_version = driver.cuda_version;
  s.runtime_version = backend_cuda_version;  // the loaded library's own answer replaces it

  if (library_path.empty()) {
    fail(s, CudaProblem::kNotBuilt, CudaStatus::kError, "built with GPUACCEL_CUDA=OFF or without nvcc");
    return r;
  }
  if (!file_exists(library_path)) {
    fail(s, CudaProblem::kLibraryMissing, CudaStatus::kError, "no such file: " + library_path);
    return r;
  }
  // The driver before any CUDA library: with a driver of an older CUDA major nothing the
  // backend loads could run, and the wheels it would load are the other CUDA's.
  if (problem_before_backend_load(driver, backend_cuda_version) == CudaProblem::kDriverTooOld) {
    fail(s, CudaProblem::kDriverTooOld, CudaStatus::kDriverTooOld,
         "cuDriverGetVersion reports CUDA " + cuda_version_string(driver.cuda_version) +
             "; the backend was built with CUDA " + cuda_version_string(backend_cuda_version));
    return r;
  }
  // The wheels' copies go in first, so the backend's DT_NEEDED entries resolve to them.
  std::string elf_error;
  s.cuda_libraries = preload_cuda_wheel_libraries(elf_needed_libraries(library_path, &elf_error),
                                                  wheel_roots);
  dlerror();
  void* handle = dlopen(library_path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  record_loaded_copies(&s.cuda_libraries);
  if (handle == nullptr) {
    const std::string load_error = dl_error_text();
    s.missing_libraries = missing_cuda_libraries(s.cuda_libraries, &loadable_by_soname);
    if (problem_when_backend_load_fails(driver) == CudaProblem::kNoDriver) {
      fail(s, CudaProblem::kNoDriver, CudaStatus::kNoDriver,
           driver.error + "; the CUDA backend itself could not be loaded either (" + load_error +
               "), which matters once a driver is there");
    } else {
      fail(s, CudaProblem::kLibraryLoadFailed, CudaStatus::kError, load_error);
    }
    return r;
  }
  dlerror();
  auto factory = reinterpret_cast<gpuaccel_cuda_library_factory_fn>(
      dlsym(handle, GPUACCEL_CUDA_LIBRARY_FACTORY));
  if (factory == nullptr) {
    fail(s, CudaProblem::kBadLibrary, CudaStatus::kError,
         std::string("it does not export ") + GPUACCEL_CUDA_LIBRARY_FACTORY + " (" + dl_error_text() + ")");
    dlclose(handle);
    return r;
  }
  int library_version = -1;
  CudaLibrary* library = factory(kCudaLibraryInterfaceVersion, &library_version);
  if (library == nullptr) {
    fail(s, CudaProblem::kBadLibrary, CudaStatus::kError,
         "its interface version is " + std::to_string(library_version) + ", this gpuaccel needs " +
             std::to_string(kCudaLibraryInterfaceVersion) +
             " (the two were built from different sources: install gpuaccel again, so that the "
             "core and its CUDA library come from one build)");
    dlclose(handle);
    return r;
  }
  // Loaded; it stays loaded (unloading CUDA libraries from a live process is not safe).
  s.loaded = true;
  r.library = library;
  s.runtime_version = library->runtime_version();
  s.cudnn_version = library->cudnn_version();
  s.cublas_version = library->cublas_version();
  s.cudnn_warning = check_cudnn_runtime(build_info().cudnn_version, s.cudnn_version);

  std::string err;
  int driver_version = 0;
  if (library->driver_version(&driver_version, &err) == CudaStatus::kOk) {
    s.driver_version = driver_version;
  }
  int count = 0;
  err.clear();
  const CudaStatus status = library->device_count(&count, &err);
  if (status == CudaStatus::kOk && count > 0) {
    s.device_count = count;
    s.status = CudaStatus::kOk;
    s.problem = CudaProblem::kNone;
    s.reason.clear();
    return r;
  }
  switch (status) {
    case CudaStatus::kNoDriver:
      fail(s, CudaProblem::kNoDriver, status, err);
      break;
    case CudaStatus::kDriverTooOld:
      fail(s, CudaProblem::kDriverTooOld, status, err);
      break;
    case CudaStatus::kError:
      // Whatever the runtime called it, a driver of an older CUDA major cannot run it.
      if (s.driver_version > 0 && !driver_supports_runtime(s.driver_version, s.runtime_version)) {
        fail(s, CudaProblem::kDriverTooOld, CudaStatus::kDriverTooOld, err);
      } else {
        fail(s, CudaProblem::kError, status, err);
      }
      break;
    case CudaStatus::kOk:
    case CudaStatus::kNoDevice:
      fail(s, s.cuda_visible_devices ? CudaProblem::kHiddenByEnv : CudaProblem::kNoDevice,
           CudaStatus::kNoDevice, status == CudaStatus::kOk ? "0 devices" : err);
      break;
    default:
      fail(s, CudaProblem::kError, status, err);
  }
  return r;
}

LoadResult load_guarded(const std::string& library_path, bool path_from_env,
                        const std::vector<std::string>& wheel_roots,
                        const CudaDriverProbe& driver, int backend_cuda_version) {
  try {
    return load(library_path, path_from_env, wheel_roots, driver, backend_cuda_version);
  } catch (const std::exception& e) {
    LoadResult r;
    r.status.built = built_with_cuda();
    r.status.library_path = library_path;
    fail(r.status, CudaProblem::kError, CudaStatus::kError, e.what());
    return r;
  } catch (...) {
    LoadResult r;
    r.status.built = built_with_cuda();
    r.status.library_path = library_path;
    fail(r.status, CudaProblem::kError, CudaStatus::kError, "unknown error");
    return r;
  }
}

// The CUDA runtime major already loaded in this process (12 when PyTorch cu12 loaded
// libcudart.so.12), 0 when none: RTLD_NOLOAD only looks, it loads nothing.
int loaded_cuda_runtime_major() {
  for (int major : {13, 12}) {
    const std::string soname = "libcudart.so." + std::to_string(major);
    if (void* handle = dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(handle);
      return major;
    }
  }
  return 0;
}

// Which installed backend file to load (cuda_backend_choice.h); an empty file when none is.
CudaBackendChoice choose_installed_backend(const CudaDriverProbe& driver) {
  const std::string dir = core_binary_dir();
  const auto candidates = cuda_backend_candidates(
      GPUACCEL_CUDA_BACKEND_FILE, build_cuda_version(),
      [&dir](const std::string& file) { return file_exists((dir.empty() ? "" : dir + "/") + file); });
  return choose_cuda_backend(candidates, driver.found ? driver.cuda_version : 0,
                             loaded_cuda_runtime_major());
}

const LoadResult& cached() {
  static const LoadResult result = [] {
    const std::optional<std::string> from_env = env(kBackendEnv);
    const CudaDriverProbe driver = probe_cuda_driver();
    if ((from_env && !from_env->empty()) || !built_with_cuda()) {
      return load_guarded(cuda_backend_library_path(), from_env && !from_env->empty(),
                          nvidia_wheel_search_roots(core_binary_dir()), driver, build_cuda_version());
    }
    const CudaBackendChoice choice = choose_installed_backend(driver);
    const std::string dir = core_binary_dir();
    const std::string file = choice.file.empty() ? GPUACCEL_CUDA_BACKEND_FILE : choice.file;
    LoadResult r = load_guarded((dir.empty() ? "" : dir + "/") + file, false,
                                nvidia_wheel_search_roots(dir), driver,
                                choice.file.empty() ? build_cuda_version() : choice.cuda_version);
    r.status.backend_choice = choice.reason;
    r.status.refused_backends = choice.refused;
    return r;
  }();
  return result;
}

// The real GpuProvider: one GpuInfo per device the backend reports.
class CudaGpuProvider : public GpuProvider {
 public:
  std::vector<GpuInfo> discover() override {
    std::vector<GpuInfo> gpus;
    try {
      const CudaBackendStatus& s = cuda_backend_status();
      CudaLibrary* library = cuda_library();
      if (library == nullptr || s.device_count == 0) return gpus;
      for (int i = 0; i < s.device_count; ++i) {
        GpuInfo g;
        std::string err;
        if (library->device_properties(i, &g, &err) != CudaStatus::kOk) {
          properties_error_ = "reading the properties of CUDA device " + std::to_string(i) +
                              " failed: " + err;
          std::cerr << "gpuaccel: " << properties_error_ << "; skipping it.\n";
          continue;
        }
        gpus.push_back(g);
      }
    } catch (...) {
      gpus.clear();
    }
    return gpus;
  }

  std::string unavailable_reason() const override {
    const std::string& reason = cuda_backend_status().reason;
    if (!reason.empty()) return reason;
    return properties_error_.empty() ? "no usable CUDA device was found" : properties_error_;
  }

  std::string kind() const override { return "cuda"; }

 private:
  std::string properties_error_;
};

}  // namespace

const char* cuda_problem_name(CudaProblem problem) {
  switch (problem) {
    case CudaProblem::kNone: return "none";
    case CudaProblem::kNotBuilt: return "not_built";
    case CudaProblem::kLibraryMissing: return "library_missing";
    case CudaProblem::kLibraryLoadFailed: return "library_load_failed";
    case CudaProblem::kBadLibrary: return "bad_library";
    case CudaProblem::kNoDriver: return "no_driver";
    case CudaProblem::kDriverTooOld: return "driver_too_old";
    case CudaProblem::kNoDevice: return "no_device";
    case CudaProblem::kHiddenByEnv: return "hidden_by_cuda_visible_devices";
    case CudaProblem::kError: return "error";
  }
  return "error";
}

std::string cuda_version_string(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

int cuda_version_number(const std::string& text) {
  const size_t dot = text.find('.');
  const int major = std::atoi(text.substr(0, dot).c_str());
  const int minor = dot == std::string::npos ? 0 : std::atoi(text.substr(dot + 1).c_str());
  return major > 0 ? major * 1000 + minor * 10 : 0;
}

std::string cudnn_version_string(int version) {
  if (version <= 0) return "";
  // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN 8 and older major*1000 + minor*100 + patch.
  const int major_unit = version >= 90000 ? 10000 : 1000;
  return std::to_string(version / major_unit) + "." +
         std::to_string((version % major_unit) / 100) + "." + std::to_string(version % 100);
}

std::string explain_cuda_problem(CudaProblem problem, const CudaBackendStatus& s) {
  const BuildInfo build = build_info();
  const std::string built_cuda = build.cuda_version.empty() ? "?" : build.cuda_version;
  switch (problem) {
    case CudaProblem::kNone:
      return "";
    case CudaProblem::kNotBuilt:
      return "This gpuaccel was built without its CUDA backend (no nvcc was found when it was "
             "compiled, or GPUACCEL_CUDA=OFF), so it cannot use a GPU. Fix: install the CUDA "
             "toolkit so that nvcc is on PATH (or at /usr/local/cuda/bin/nvcc) and reinstall "
             "gpuaccel (bash .ci/setup, or pip install . -C cmake.define.GPUACCEL_CUDA=ON).";
    case CudaProblem::kLibraryMissing:
      return "The CUDA backend library was not found at " + s.library_path +
             (s.path_from_env ? " (the path given by GPUACCEL_CUDA_BACKEND)" : "") +
             ", so no GPU can be used. Fix: " +
             (s.path_from_env ? "unset GPUACCEL_CUDA_BACKEND or point it at an existing "
                                "libgpuaccel_cuda.so."
                              : "reinstall gpuaccel (bash .ci/setup) so that "
                                "libgpuaccel_cuda.so sits next to its _C module.");
    case CudaProblem::kLibraryLoadFailed: {
      const int cuda = s.runtime_version > 0 ? s.runtime_version : build_cuda_version();
      std::string text = "The CUDA backend library " + s.library_path +
                         " exists but could not be loaded: " + s.detail + ". ";
      const std::string install = wheel_install_command(s.missing_libraries, cuda);
      if (!s.missing_libraries.empty()) {
        std::string names;
        for (const std::string& name : s.missing_libraries) names += (names.empty() ? "" : ", ") + name;
        text += "It needs " + names + " (CUDA " + version_or(cuda, built_cuda) + "), which no "
                "nvidia-* wheel and no system folder provides. Fix: " +
                (install.empty() ? std::string("install them") : install) +
                " (gpuaccel loads them from the nvidia-* wheels, as PyTorch does), or add their "
                "folder to LD_LIBRARY_PATH, or rebuild gpuaccel on this machine (bash "
                ".ci/setup) so it links the CUDA that is installed here.";
      } else {
        text += "Fix: reinstall gpuaccel (bash .ci/setup) so the backend matches this machine; "
                "if the message names a CUDA library, install only the nvidia-* wheel that "
                "provides it, never one that replaces a cuDNN another framework (PyTorch) uses "
                "(nvidia-cudnn-cu12 and -cu13 install the same nvidia/cudnn/lib/libcudnn.so.9).";
      }
      return text;
    }
    case CudaProblem::kBadLibrary:
      return s.library_path + " is not a CUDA backend this gpuaccel can use: " + s.detail +
             ". Fix: reinstall gpuaccel so that the backend and the _C module come from the "
             "same build.";
    case CudaProblem::kNoDriver:
      return "Could not find cuda drivers on your machine, GPU will not be used. The NVIDIA "
             "driver's CUDA library (" + std::string(kDriverLibrary) + ") cannot be loaded (" +
             s.detail + "). Fix: on a machine with an NVIDIA GPU install the NVIDIA driver "
             "(nvidia-smi must work); on Colab pick Runtime > Change runtime type > T4 GPU.";
    case CudaProblem::kDriverTooOld: {
      const std::string needed = version_or(s.runtime_version, built_cuda);
      const std::string needed_major = needed.substr(0, needed.find('.'));
      const std::string branch = minimum_driver_for_cuda(s.runtime_version);
      const std::string driver = version_or(s.driver_version, "(unknown)");
      const std::string driver_major = driver.substr(0, driver.find('.'));
      return "The NVIDIA driver is too old for this gpuaccel: the driver supports CUDA " + driver +
             ", this build's GPU backend needs CUDA " + needed + " (" + s.detail + "). Fix: "
             "update the NVIDIA driver to one for CUDA " + needed_major + " or newer" +
             (branch.empty() ? std::string() : " (Linux driver " + branch + " or newer)") +
             ", or install a gpuaccel built for CUDA " + driver_major + " (where the driver "
             "cannot change, as on Colab: pip install builds it from source with the machine's "
             "own nvcc; notebooks/00_colab_gpu.ipynb does this). Installing CUDA " + needed_major +
             " libraries (nvidia-*-cu" + needed_major + " wheels) does not help with an old "
             "driver, and their cuDNN would replace the one PyTorch uses.";
    }
    case CudaProblem::kNoDevice:
      return "The NVIDIA driver" +
             (s.driver_version ? " (CUDA " + cuda_version_string(s.driver_version) + ")" : std::string()) +
             " is installed but reports no CUDA device (" + s.detail + "). Fix: check that "
             "nvidia-smi lists a GPU; in a container, start it with GPU access (docker run "
             "--gpus all); on Colab pick Runtime > Change runtime type > T4 GPU.";
    case CudaProblem::kHiddenByEnv:
      return "No GPU is visible because CUDA_VISIBLE_DEVICES='" +
             s.cuda_visible_devices.value_or("") + "' hides every device (" + s.detail +
             "). Fix: unset CUDA_VISIBLE_DEVICES, or set it to the GPUs to use (e.g. "
             "CUDA_VISIBLE_DEVICES=0), before Python starts; in a notebook restart the kernel "
             "after changing it.";
    case CudaProblem::kError:
      return "The CUDA backend failed while looking for GPUs: " + s.detail;
  }
  return s.detail;
}

std::string cuda_backend_library_path() {
  const std::optional<std::string> from_env = env(kBackendEnv);
  if (from_env && !from_env->empty()) return *from_env;
  if (!built_with_cuda()) return "";
  const std::string dir = core_binary_dir();
  // The installed backend the loader would choose now (cuda_backend_choice.h), else this build's.
  const CudaBackendChoice choice = choose_installed_backend(probe_cuda_driver());
  return (dir.empty() ? std::string() : dir + "/") +
         (choice.file.empty() ? std::string(GPUACCEL_CUDA_BACKEND_FILE) : choice.file);
}

CudaBackendStatus probe_cuda_backend(const std::string& library_path) {
  return probe_cuda_backend(library_path, nvidia_wheel_search_roots(core_binary_dir()));
}

CudaBackendStatus probe_cuda_backend(const std::string& library_path,
                                     const std::vector<std::string>& wheel_roots) {
  return probe_cuda_backend(library_path, wheel_roots, probe_cuda_driver(), build_cuda_version());
}

CudaBackendStatus probe_cuda_backend(const std::string& library_path,
                                     const std::vector<std::string>& wheel_roots,
                                     const CudaDriverProbe& driver, int backend_cuda_version) {
  return load_guarded(library_path, false, wheel_roots, driver, backend_cuda_version).status;
}

CudaDriverProbe probe_cuda_driver(const std::string& driver_library) {
  CudaDriverProbe probe;
  dlerror();
  // Left open: the backend opens the same driver library right after.
  void* handle = dlopen(driver_library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    probe.error = "the NVIDIA driver library " + driver_library + " cannot be loaded: " + dl_error_text();
    return probe;
  }
  probe.found = true;
  using DriverGetVersionFn = int (*)(int*);  // CUresult cuDriverGetVersion(int*); 0 is CUDA_SUCCESS
  auto get_version = reinterpret_cast<DriverGetVersionFn>(dlsym(handle, "cuDriverGetVersion"));
  if (get_version == nullptr) {
    probe.error = driver_library + " has no cuDriverGetVersion";
    return probe;
  }
  int version = 0;
  const int result = get_version(&version);
  if (result != 0 || version <= 0) {
    probe.error = "cuDriverGetVersion failed (CUresult " + std::to_string(result) + ")";
    return probe;
  }
  probe.cuda_version = version;
  return probe;
}

CudaProblem problem_before_backend_load(const CudaDriverProbe& driver, int backend_cuda_version) {
  if (!driver.found || driver.cuda_version <= 0 || backend_cuda_version <= 0) return CudaProblem::kNone;
  return driver_supports_runtime(driver.cuda_version, backend_cuda_version) ? CudaProblem::kNone
                                                                             : CudaProblem::kDriverTooOld;
}

CudaProblem problem_when_backend_load_fails(const CudaDriverProbe& driver) {
  return driver.found ? CudaProblem::kLibraryLoadFailed : CudaProblem::kNoDriver;
}

std::vector<std::string> missing_cuda_libraries(const std::vector<CudaLibraryCopy>& copies,
                                                bool (*loadable)(const std::string& soname)) {
  std::vector<std::string> missing;
  for (const CudaLibraryCopy& copy : copies) {
    if (!copy.loaded_path.empty() || copy.preloaded) continue;
    if (loadable != nullptr && loadable(copy.soname)) continue;
    missing.push_back(copy.soname);
  }
  return missing;
}

std::string wheel_install_command(const std::vector<std::string>& sonames, int cuda_version) {
  std::vector<std::string> wheels;
  for (const std::string& soname : sonames) {
    const std::string wheel = wheel_for_library(soname, cuda_version / 1000);
    if (wheel.empty()) continue;
    bool listed = false;
    for (const std::string& w : wheels) listed = listed || w == wheel;
    if (!listed) wheels.push_back(wheel);
  }
  if (wheels.empty()) return "";
  std::string command = "pip install";
  for (const std::string& w : wheels) command += " " + w;
  return command;
}

std::string check_cudnn_runtime(int build_version, int loaded_version) {
  if (build_version <= 0 || loaded_version <= 0) return "";
  // cuDNN 9's encoding: major*10000 + minor*100 + patch (see cudnn_version_string).
  const int build_major = build_version / 10000, loaded_major = loaded_version / 10000;
  const int build_minor = build_version / 100 % 100, loaded_minor = loaded_version / 100 % 100;
  const std::string built = cudnn_version_string(build_version);
  const std::string loaded = cudnn_version_string(loaded_version);
  if (loaded_major == build_major && loaded_minor >= build_minor) return "";
  return "The cuDNN loaded at run time (" + loaded + ") is older than the cuDNN " + built +
         " headers the CUDA backend was built with. cuDNN guarantees compatibility only with "
         "applications built against the same major and the same or an older minor release, so "
         "cuDNN operations (convolution, batch norm, pooling) may fail with a cuDNN error or a "
         "missing symbol; the rest of the GPU works. Usually another framework (PyTorch) brought "
         "the older cuDNN. Fix: rebuild gpuaccel against the cuDNN installed here (bash "
         ".ci/setup), or, if nothing else needs the older one, upgrade cuDNN to " +
         std::to_string(build_major) + "." + std::to_string(build_minor) + " or newer.";
}

bool driver_supports_runtime(int driver_version, int runtime_version) {
  if (driver_version <= 0 || runtime_version <= 0) return true;  // unknown: nothing to say
  return driver_version / 1000 >= runtime_version / 1000;
}

std::string minimum_driver_for_cuda(int runtime_version) {
  switch (runtime_version / 1000) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580.65.06";
    default: return "";
  }
}

const CudaBackendStatus& cuda_backend_status() { return cached().status; }

CudaLibrary* cuda_library() { return cached().library; }

CudaLibrary& require_cuda_library(const std::string& op) {
  const LoadResult& r = cached();
  if (r.library == nullptr || r.status.device_count == 0) {
    throw_error(ErrorCode::kFailedPrecondition, op, "no CUDA GPU can be used: " + r.status.reason);
  }
  return *r.library;
}

BuildInfo build_info() {
  BuildInfo b;
  b.gpuaccel_version = GPUACCEL_VERSION;
  b.cuda_version = GPUACCEL_CUDA_BUILD_VERSION;
  b.cudnn_version = std::atoi(GPUACCEL_CUDNN_BUILD_VERSION);
  b.cuda_backend_file = GPUACCEL_CUDA_BACKEND_FILE;
  return b;
}

std::unique_ptr<GpuProvider> make_cuda_gpu_provider() {
  return std::make_unique<CudaGpuProvider>();
}

}  // namespace gpuaccel
