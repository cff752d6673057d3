// See cuda_backend_choice.h: the loader's choice among the installed CUDA backends.
#include "core/cuda_loader/cuda_backend_choice.h"

#include <algorithm>

namespace gpuaccel {

namespace {

int major_of(int cuda_version) { return cuda_version / 1000; }

std::string version_text(int cuda_version) {
  return std::to_string(cuda_version / 1000) + "." + std::to_string((cuda_version % 1000) / 10);
}

// A driver supporting CUDA X.Y runs any runtime of major X or older (minor-version compatibility
// within a major); unknown (0) decides nothing.
bool driver_runs(int driver_cuda_version, int backend_cuda_version) {
  return driver_cuda_version <= 0 || major_of(driver_cuda_version) >= major_of(backend_cuda_version);
}

}  // namespace

CudaBackendChoice choose_cuda_backend(const std::vector<CudaBackendCandidate>& candidates,
                                      int driver_cuda_version, int loaded_runtime_major) {
  CudaBackendChoice choice;
  std::vector<const CudaBackendCandidate*> present;
  for (const CudaBackendCandidate& c : candidates) {
    if (c.present) {
      present.push_back(&c);
    } else {
      choice.refused.push_back(c.file + ": not installed next to the core");
    }
  }
  if (present.empty()) {
    choice.reason = "no CUDA backend file is installed";
    return choice;
  }
  // Newest CUDA first, so "the first that fits" is the newest that fits.
  std::stable_sort(present.begin(), present.end(), [](const auto* a, const auto* b) {
    return a->cuda_version > b->cuda_version;
  });
  const std::string driver_text =
      driver_cuda_version > 0 ? "the driver supports CUDA " + version_text(driver_cuda_version)
                              : "no driver version is known";

  const CudaBackendCandidate* chosen = nullptr;
  if (loaded_runtime_major > 0) {
    for (const auto* c : present) {
      if (major_of(c->cuda_version) == loaded_runtime_major &&
          driver_runs(driver_cuda_version, c->cuda_version)) {
        chosen = c;
        choice.reason = "the process already loaded CUDA " + std::to_string(loaded_runtime_major) +
                        "'s runtime (libcudart.so." + std::to_string(loaded_runtime_major) +
                        ", e.g. PyTorch's), so the backend of the same CUDA shares its libraries";
        break;
      }
    }
  }
  if (chosen == nullptr && driver_cuda_version > 0) {
    for (const auto* c : present) {
      if (driver_runs(driver_cuda_version, c->cuda_version)) {
        chosen = c;
        choice.reason = driver_text + ": the newest backend it can run (CUDA " +
                        version_text(c->cuda_version) + ")";
        break;
      }
    }
    if (chosen == nullptr) {
      chosen = present.back();
      choice.reason = driver_text + ", older than every installed backend; the oldest (CUDA " +
                      version_text(chosen->cuda_version) + ") needs the smallest driver update";
    }
  }
  if (chosen == nullptr) {
    chosen = present.front();
    choice.reason = driver_text + ": the newest backend (CUDA " +
                    version_text(present.front()->cuda_version) + ")";
  }
  choice.file = chosen->file;
  choice.cuda_version = chosen->cuda_version;

  for (const auto* c : present) {
    if (c == chosen) continue;
    std::string why;
    if (!driver_runs(driver_cuda_version, c->cuda_version)) {
      why = "driver too old for CUDA " + version_text(c->cuda_version) + " (" + driver_text + ")";
    } else if (loaded_runtime_major > 0 && major_of(c->cuda_version) != loaded_runtime_major &&
               major_of(chosen->cuda_version) == loaded_runtime_major) {
      why = "built with CUDA " + version_text(c->cuda_version) + ", but the process already loaded CUDA " +
            std::to_string(loaded_runtime_major) + "'s runtime";
    } else {
      why = "built with CUDA " + version_text(c->cuda_version) + "; " + choice.file + " was preferred";
    }
    choice.refused.push_back(c->file + ": " + why);
  }
  return choice;
}

std::vector<CudaBackendCandidate> cuda_backend_candidates(
    const std::string& primary_file, int primary_cuda_version,
    const std::function<bool(const std::string& file)>& present) {
  std::vector<CudaBackendCandidate> candidates;
  if (primary_file.empty()) return candidates;  // built without the CUDA backend
  candidates.push_back({primary_file, primary_cuda_version, present(primary_file)});
  if (primary_file != kCuda12BackendFile && major_of(primary_cuda_version) != 12) {
    candidates.push_back({kCuda12BackendFile, 12000, present(kCuda12BackendFile)});
  }
  return candidates;
}

}  // namespace gpuaccel
