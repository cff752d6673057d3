// Finds the CUDA libraries the backend needs (cudart, cuBLAS, cuBLASLt, cuDNN, NCCL) in PyPI's
// nvidia-* wheels and loads them before the backend, as PyTorch does, so a pip-installed
// gpuaccel works where no CUDA toolkit is installed (Colab's torch wheels, a fresh venv).
// Which libraries: the backend's own ELF DT_NEEDED entries, so a backend built against CUDA 12
// asks for libcublas.so.12 and one built against CUDA 13 for libcublas.so.13, and nothing is
// guessed. Where: <root>/nvidia/<package>/lib/<soname> for every search root (site-packages
// folders): nvidia/cublas/lib (cu12 wheels) and nvidia/cu13/lib (CUDA 13 wheels) alike.
// A library no wheel has is left to the system's search (RPATH, LD_LIBRARY_PATH, ldconfig).
#pragma once

#include <string>
#include <vector>

namespace gpuaccel {

// One CUDA library the backend links, and which copy of it the process uses.
struct CudaLibraryCopy {
  std::string soname;       // "libcublas.so.12"
  std::string wheel_path;   // the copy found in an nvidia-* wheel; empty when none was found
  std::string loaded_path;  // the file the process has loaded under that soname; empty if none
  bool preloaded = false;   // wheel_path was loaded (RTLD_GLOBAL) before the backend
  std::string error;        // why loading wheel_path failed (dlerror), else empty
  int version = 0;          // NCCL's ncclGetVersion() when it is loaded (22703); 0 otherwise
};

// The DT_NEEDED sonames of the ELF shared library at `path`, in file order. Empty with
// *error set when the file cannot be read or is not a 64-bit ELF shared object.
std::vector<std::string> elf_needed_libraries(const std::string& path, std::string* error);

// True for the sonames gpuaccel looks for in nvidia-* wheels: libcudart, libcublas,
// libcublasLt, libcudnn*, libnccl (any version suffix).
bool is_cuda_wheel_library(const std::string& soname);

// The first <root>/nvidia/*/lib/<soname> that exists, roots in order (then package folders in
// name order); empty when none does.
std::string find_in_nvidia_wheels(const std::vector<std::string>& roots, const std::string& soname);

// For each of `sonames` that is a CUDA wheel library: finds it in the wheels under `roots` and
// loads it with RTLD_GLOBAL, runtime and cuBLASLt before cuBLAS (cuBLAS needs cuBLASLt), so
// the backend's DT_NEEDED entries resolve to those copies. Never throws.
std::vector<CudaLibraryCopy> preload_cuda_wheel_libraries(const std::vector<std::string>& sonames,
                                                          const std::vector<std::string>& roots);

// Fills loaded_path (and NCCL's version) of each copy from what the process has loaded now:
// after the backend is loaded this tells wheel copies and system copies apart.
void record_loaded_copies(std::vector<CudaLibraryCopy>* copies);

// Search roots for the wheels: the folder that holds the gpuaccel package (its site-packages),
// then the folders registered with set_python_search_paths (sys.path at import), deduplicated.
std::vector<std::string> nvidia_wheel_search_roots(const std::string& core_binary_dir);
void set_python_search_paths(const std::vector<std::string>& paths);

}  // namespace gpuaccel
