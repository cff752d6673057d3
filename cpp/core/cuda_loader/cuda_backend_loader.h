// Finds and loads the CUDA backend library (libgpuaccel_cuda.so, see cuda_library.h) on
// first use, never at import. Where it is: $GPUACCEL_CUDA_BACKEND if set (an explicit path; a
// missing file there is reported, which is how tests prove the no-CUDA path), else next to the
// binary that holds the core (the Python module _C). Every failure becomes a reason in plain
// words with the fix, so `gpuaccel.cuda.diagnose()` can explain it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cuda_loader/cuda_library.h"
#include "core/cuda_loader/cuda_wheel_libraries.h"

namespace gpuaccel {

// Why no GPU can be used, one value per distinct cause (each has its own reason and fix).
enum class CudaProblem {
  kNone,               // loaded, at least one device
  kNotBuilt,           // this gpuaccel was compiled without the CUDA backend
  kLibraryMissing,     // libgpuaccel_cuda.so is not where it should be
  kLibraryLoadFailed,  // it is there but dlopen failed (usually cuBLAS/cuDNN missing)
  kBadLibrary,         // not a backend, or one of another interface version
  kNoDriver,           // libcuda.so.1 (the NVIDIA driver) cannot be loaded
  kDriverTooOld,       // the driver is older than the CUDA runtime the backend was built with
  kNoDevice,           // driver fine, no CUDA device
  kHiddenByEnv,        // CUDA_VISIBLE_DEVICES hides every device
  kError,              // anything else; the reason carries the library's message
};

// "no_driver", "driver_too_old", ... (stable names for Python and tests).
const char* cuda_problem_name(CudaProblem problem);

struct CudaBackendStatus {
  bool built = false;         // this gpuaccel was compiled with the CUDA backend
  bool loaded = false;        // the library was found and loaded
  std::string library_path;   // where it was looked for / loaded from
  std::string reason;         // empty when loaded and at least one GPU is usable
  int device_count = 0;       // visible CUDA devices (0 when not usable)
  CudaStatus status = CudaStatus::kOk;  // the library's status of the failure, if any

  CudaProblem problem = CudaProblem::kNone;
  std::string detail;         // the raw error text behind `reason` (dlerror, CUDA's message)
  bool path_from_env = false; // library_path came from $GPUACCEL_CUDA_BACKEND
  // Versions in the CUDA APIs' encoding (13000 = 13.0, 90300 = cuDNN 9.3.0); 0 when unknown.
  int runtime_version = 0;    // the runtime compiled into the loaded backend
  int driver_version = 0;     // the CUDA version the driver supports
  int cudnn_version = 0;      // cuDNN as loaded at run time
  int cublas_version = 0;     // cuBLAS as loaded at run time
  std::optional<std::string> cuda_visible_devices;  // the variable's value, when set
  // The CUDA libraries the backend links (its DT_NEEDED cudart/cuBLAS/cuDNN/NCCL entries) and
  // which copy of each the process loaded: an nvidia-* wheel's, or the system's.
  std::vector<CudaLibraryCopy> cuda_libraries;
  std::vector<std::string> wheel_roots;  // where nvidia-* wheels were looked for
  // When the backend could not be loaded: the CUDA libraries it needs that neither a wheel nor
  // the system provides ("libcublas.so.13"), so the advice names only what to install.
  std::vector<std::string> missing_libraries;
  // Set when the loaded cuDNN is an older minor release than the headers the backend was built
  // with (see check_cudnn_runtime): the GPU stays usable; diagnose() shows this warning.
  std::string cudnn_warning;
  // Which of the installed backend files was chosen and why (cuda_backend_choice.h: the
  // driver's CUDA, the runtime already loaded), and "<file>: <why not>" for each other one.
  // Empty when $GPUACCEL_CUDA_BACKEND names the file or the probe was given a path.
  std::string backend_choice;
  std::vector<std::string> refused_backends;
};

// The NVIDIA driver as seen before any CUDA library is loaded: libcuda.so.1 opened with dlopen
// and asked cuDriverGetVersion, which needs neither cuInit nor a device. The loader checks it
// first, so a driver too old for the backend's CUDA is named as such instead of as missing
// libraries (whose advice, to install the other CUDA's wheels, would replace the cuDNN another
// framework uses).
struct CudaDriverProbe {
  bool found = false;    // the driver library could be loaded
  int cuda_version = 0;  // the CUDA version it supports (12040); 0 when unknown
  std::string error;     // why it was not found, or why its version is unknown
};
CudaDriverProbe probe_cuda_driver(const std::string& driver_library = "libcuda.so.1");

// The loader's decisions around the backend's dlopen, as pure functions of what it found.
// Before loading: kDriverTooOld when a driver was found whose CUDA major is older than
// `backend_cuda_version` (the CUDA the backend was built with, 13000), else kNone (go on; an
// unknown version decides nothing).
CudaProblem problem_before_backend_load(const CudaDriverProbe& driver, int backend_cuda_version);
// When the backend's dlopen failed: kNoDriver when there is no driver (the first thing to fix:
// no library would make a GPU usable), else kLibraryLoadFailed.
CudaProblem problem_when_backend_load_fails(const CudaDriverProbe& driver);
// The CUDA libraries of `copies` (the backend's DT_NEEDED ones) with neither a loaded copy nor
// a wheel copy that `loadable` (asked by soname) cannot load either: the ones really missing.
std::vector<std::string> missing_cuda_libraries(const std::vector<CudaLibraryCopy>& copies,
                                                bool (*loadable)(const std::string& soname));
// The pip command that installs the nvidia-* wheels providing `sonames` for CUDA
// `cuda_version` (13000): "pip install nvidia-cublas" for libcublas.so.13. Only the libraries
// named, so no cuDNN is installed over one that is there. Empty when none maps to a wheel.
std::string wheel_install_command(const std::vector<std::string>& sonames, int cuda_version);

// cuDNN keeps binary compatibility only with applications built against the same or an older
// minor release of the same major (cuDNN's "API Compatibility" rules): the empty string when
// the loaded cuDNN `loaded_version` can run a backend built with `build_version` headers (or
// either is unknown), else the warning with its consequence and fix. Versions are cuDNN 9's
// encoding (91900).
std::string check_cudnn_runtime(int build_version, int loaded_version);

// Loads on first call (thread-safe); never throws.
const CudaBackendStatus& cuda_backend_status();
// The loaded library, or nullptr when it is not loaded.
CudaLibrary* cuda_library();
// The library when at least one GPU is usable, else a FailedPreconditionError for `op` that
// carries the reason.
CudaLibrary& require_cuda_library(const std::string& op);

// Runs the whole search afresh for the library at `library_path` (ignoring the cached status
// and $GPUACCEL_CUDA_BACKEND): what cuda_backend_status() would say if the library were there.
// For tests and diagnosis; never throws. A library it loads stays loaded.
CudaBackendStatus probe_cuda_backend(const std::string& library_path);
// The same, looking for nvidia-* wheels under `wheel_roots` only (tests' fake layouts).
CudaBackendStatus probe_cuda_backend(const std::string& library_path,
                                     const std::vector<std::string>& wheel_roots);
// The same with the driver's facts given instead of probed, and the CUDA version the backend
// was built with (13000; 0: unknown): a driver or CUDA version this machine lacks, for tests.
CudaBackendStatus probe_cuda_backend(const std::string& library_path,
                                     const std::vector<std::string>& wheel_roots,
                                     const CudaDriverProbe& driver, int backend_cuda_version);

// True when a driver supporting CUDA `driver_version` can run a runtime of `runtime_version`
// (APIs' encoding, 12040 = 12.4): the same major or newer. Within a major, CUDA's minor-version
// compatibility runs a newer runtime's SASS on an older driver (not PTX newer than the driver).
bool driver_supports_runtime(int driver_version, int runtime_version);
// The oldest Linux NVIDIA driver branch for a CUDA major version ("525" for 12, "580" for 13);
// empty when unknown.
std::string minimum_driver_for_cuda(int runtime_version);

// Where the library is looked for now: $GPUACCEL_CUDA_BACKEND, else next to the core's binary.
// Empty when the backend was not built and the variable is unset.
std::string cuda_backend_library_path();

// The reason text (with its fix) for `problem`, from the facts in `status` (library_path,
// detail, versions, cuda_visible_devices). Exposed so every cause's text can be tested.
std::string explain_cuda_problem(CudaProblem problem, const CudaBackendStatus& status);

// 13000 -> "13.0", 12040 -> "12.4" (the encoding of cudaRuntimeGetVersion); "" for 0.
std::string cuda_version_string(int version);
// "13.0" -> 13000, the inverse of cuda_version_string; 0 for "" or text that is no version.
int cuda_version_number(const std::string& text);
// 91900 -> "9.19.0" (cuDNN 9's major*10000 + minor*100 + patch); "" for 0.
std::string cudnn_version_string(int version);

// What this core was compiled with.
struct BuildInfo {
  std::string gpuaccel_version;   // "0.1.0"
  std::string cuda_version;       // "13.0"; empty when built without the CUDA backend
  int cudnn_version = 0;          // 91900; 0 when built without cuDNN
  std::string cuda_backend_file;  // "libgpuaccel_cuda.so"; empty when not built
};
BuildInfo build_info();

}  // namespace gpuaccel
