// Where PyPI's NCCL wheel puts libnccl.so.2, found from the cuBLASLt file the process loaded.
// The backend opens NCCL with dlopen on first use; by its soname alone that finds only the
// system's copy (or one on LD_LIBRARY_PATH, or already loaded), never nvidia-nccl-cu12's, whose
// folder is on no search path. The core preloads the backend's other CUDA libraries from the
// nvidia-* wheels (core/cuda_loader/cuda_wheel_libraries.h), so when cuBLASLt came from a wheel,
// NCCL's
// wheel sits beside it: nvidia/cublas/lib -> nvidia/nccl/lib (CUDA 12 wheels, one package per
// library) or the same folder (CUDA 13 wheels: nvidia/cu13/lib). CUDA-free so that the CPU
// tests check it (tests/cpp/cuda_nccl_wheel_path_test.cc).
#pragma once

#include <string>
#include <vector>

namespace gpuaccel::cuda {

// The files to try, in order, for a cuBLASLt loaded from `cublaslt_file`; none when that file is
// not in an nvidia-* wheel's lib folder.
inline std::vector<std::string> nccl_wheel_candidates(const std::string& cublaslt_file) {
  const size_t slash = cublaslt_file.rfind('/');
  if (slash == std::string::npos) return {};
  const std::string lib = cublaslt_file.substr(0, slash);  // .../nvidia/<package>/lib
  const size_t package_slash = lib.rfind('/');
  if (package_slash == std::string::npos || lib.compare(package_slash, std::string::npos, "/lib") != 0) return {};
  const std::string package_dir = lib.substr(0, package_slash);
  const size_t nvidia_slash = package_dir.rfind('/');
  if (nvidia_slash == std::string::npos) return {};
  const std::string nvidia = package_dir.substr(0, nvidia_slash);
  if (nvidia.size() < 7 || nvidia.compare(nvidia.size() - 7, 7, "/nvidia") != 0) return {};
  return {lib + "/libnccl.so.2", nvidia + "/nccl/lib/libnccl.so.2"};
}

}  // namespace gpuaccel::cuda
