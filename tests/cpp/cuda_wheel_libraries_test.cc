// Loading CUDA libraries from PyPI's nvidia-* wheels, without a GPU or a CUDA library: the
// backend's DT_NEEDED list is read from its ELF headers, the wheel folders of cu12 (nvidia/
// cublas/lib) and CUDA 13 (nvidia/cu13/lib) layouts are found in root order, a fake NCCL copied
// into a fake wheel is what the process loads (and reports 2.27.3), a copy already loaded is
// kept, and the driver/runtime rule and its message name what to install.
#include "core/cuda_loader/cuda_wheel_libraries.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/cuda_loader/cuda_backend_loader.h"

namespace gpuaccel {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) {
  for (const std::string& s : v) {
    if (s == x) return true;
  }
  return false;
}

// A fresh folder under /tmp, removed (with what the test put there) at the end.
class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/gpuaccel_wheels_XXXXXX";
    path_ = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

  // Writes `source`'s bytes (or a text when source is empty) to path()/relative, making folders.
  std::string put(const std::string& relative, const std::string& source = "") {
    const std::string target = path_ + "/" + relative;
    std::system(("mkdir -p \"$(dirname '" + target + "')\"").c_str());
    std::ofstream out(target, std::ios::binary);
    if (source.empty()) {
      out << "not a library";
    } else {
      std::ifstream in(source, std::ios::binary);
      out << in.rdbuf();
    }
    return target;
  }

 private:
  std::string path_;
};

TEST(CudaWheelLibraries, ReadsTheNeededLibrariesOfASharedObject) {
  std::string error;
  const std::vector<std::string> needed = elf_needed_libraries(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, &error);
  EXPECT_TRUE(contains(needed, "libc.so.6")) << error;
  EXPECT_FALSE(contains(needed, "libcublas.so.13"));  // the fake links no CUDA library

  TempDir dir;
  const std::string text = dir.put("notelf.so");
  EXPECT_TRUE(elf_needed_libraries(text, &error).empty());
  EXPECT_NE(error.find("not a 64-bit ELF"), std::string::npos) << error;
  EXPECT_TRUE(elf_needed_libraries(dir.path() + "/missing.so", &error).empty());
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(CudaWheelLibraries, OnlyTheCudaLibrariesComeFromWheels) {
  for (const char* name : {"libcudart.so.12", "libcublas.so.12", "libcublasLt.so.13",
                           "libcudnn.so.9", "libcudnn_ops.so.9", "libnccl.so.2"}) {
    EXPECT_TRUE(is_cuda_wheel_library(name)) << name;
  }
  // The driver (libcuda) belongs to the machine, never to a wheel.
  for (const char* name : {"libcuda.so.1", "libc.so.6", "libstdc++.so.6", "libdnnl.so.3"}) {
    EXPECT_FALSE(is_cuda_wheel_library(name)) << name;
  }
}

TEST(CudaWheelLibraries, FindsCu12AndCuda13LayoutsInRootOrder) {
  TempDir a, b;
  const std::string cu12 = a.put("nvidia/cublas/lib/libcublas.so.12");
  const std::string cu13 = b.put("nvidia/cu13/lib/libcublas.so.13");
  const std::string second = b.put("nvidia/cublas/lib/libcublas.so.12");
  EXPECT_EQ(find_in_nvidia_wheels({a.path(), b.path()}, "libcublas.so.12"), cu12);
  EXPECT_EQ(find_in_nvidia_wheels({b.path(), a.path()}, "libcublas.so.12"), second);
  EXPECT_EQ(find_in_nvidia_wheels({a.path(), b.path()}, "libcublas.so.13"), cu13);
  EXPECT_EQ(find_in_nvidia_wheels({a.path()}, "libcudnn.so.9"), "");
  EXPECT_EQ(find_in_nvidia_wheels({"/nonexistent/root"}, "libcublas.so.12"), "");
}

TEST(CudaWheelLibraries, PreloadsTheWheelCopyAndKeepsOneAlreadyLoaded) {
  TempDir first, second;
  const std::string nccl = first.put("nvidia/nccl/lib/libnccl.so.2", GPUACCEL_TEST_FAKE_NCCL_LIBRARY);
  second.put("nvidia/nccl/lib/libnccl.so.2", GPUACCEL_TEST_FAKE_NCCL_LIBRARY);

  std::vector<CudaLibraryCopy> copies =
      preload_cuda_wheel_libraries({"libc.so.6", "libnccl.so.2", "libcudnn.so.9"}, {first.path()});
  ASSERT_EQ(copies.size(), 2u);  // libc is not a wheel library
  record_loaded_copies(&copies);
  const CudaLibraryCopy& loaded = copies[0].soname == "libnccl.so.2" ? copies[0] : copies[1];
  const CudaLibraryCopy& absent = copies[0].soname == "libnccl.so.2" ? copies[1] : copies[0];
  EXPECT_TRUE(loaded.preloaded) << loaded.error;
  EXPECT_EQ(loaded.wheel_path, nccl);
  EXPECT_EQ(loaded.loaded_path, nccl);
  EXPECT_EQ(loaded.version, 22703);
  EXPECT_EQ(absent.soname, "libcudnn.so.9");
  EXPECT_FALSE(absent.preloaded);
  EXPECT_EQ(absent.wheel_path, "");
  EXPECT_EQ(absent.loaded_path, "");

  // A second wheel with the same soname is found but not loaded over the first.
  copies = preload_cuda_wheel_libraries({"libnccl.so.2"}, {second.path()});
  record_loaded_copies(&copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_FALSE(copies[0].preloaded);
  EXPECT_EQ(copies[0].wheel_path, second.path() + "/nvidia/nccl/lib/libnccl.so.2");
  EXPECT_EQ(copies[0].loaded_path, nccl);
}

TEST(CudaWheelLibraries, CuBlasLtIsLoadedBeforeCuBlas) {
  TempDir dir;
  // Not loadable (text files): the order shows in the errors' order, cuBLASLt's first.
  dir.put("nvidia/cublas/lib/libcublas.so.12");
  dir.put("nvidia/cublas/lib/libcublasLt.so.12");
  const std::vector<CudaLibraryCopy> copies =
      preload_cuda_wheel_libraries({"libcublas.so.12", "libcublasLt.so.12"}, {dir.path()});
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].soname, "libcublasLt.so.12");
  EXPECT_EQ(copies[1].soname, "libcublas.so.12");
  EXPECT_FALSE(copies[0].preloaded);
  EXPECT_FALSE(copies[0].error.empty());  // dlerror's "invalid ELF header"
}

TEST(CudaWheelLibraries, SearchRootsStartAtThePackagesSitePackages) {
  set_python_search_paths({"/x/site-packages", "/y/dist-packages"});
  const std::vector<std::string> roots = nvidia_wheel_search_roots("/x/site-packages/gpuaccel");
  EXPECT_EQ(roots, (std::vector<std::string>{"/x/site-packages", "/y/dist-packages"}));
  set_python_search_paths({});
}

TEST(CudaWheelLibraries, ProbeReportsTheRootsItSearched) {
  TempDir dir;
  const CudaBackendStatus s = probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, {dir.path()});
  EXPECT_TRUE(s.loaded) << s.reason;
  EXPECT_EQ(s.wheel_roots, std::vector<std::string>{dir.path()});
  EXPECT_TRUE(s.cuda_libraries.empty());  // the fake needs no CUDA library
}

TEST(CudaDriverRuntime, AnOlderMajorCannotRunTheRuntime) {
  EXPECT_TRUE(driver_supports_runtime(12040, 12060));   // minor-version compatibility
  EXPECT_TRUE(driver_supports_runtime(13000, 12060));
  EXPECT_FALSE(driver_supports_runtime(12080, 13000));  // Colab's CUDA 12 driver, CUDA 13 backend
  EXPECT_TRUE(driver_supports_runtime(0, 13000));       // unknown: nothing to say
  EXPECT_EQ(minimum_driver_for_cuda(12060), "525.60.13");
  EXPECT_EQ(minimum_driver_for_cuda(13000), "580.65.06");
  EXPECT_EQ(minimum_driver_for_cuda(9000), "");

  CudaBackendStatus facts;
  facts.driver_version = 12040;
  facts.runtime_version = 13000;
  facts.detail = "cudaErrorInsufficientDriver";
  const std::string text = explain_cuda_problem(CudaProblem::kDriverTooOld, facts);
  EXPECT_NE(text.find("580.65.06"), std::string::npos) << text;  // the driver to install
  EXPECT_NE(text.find("00_colab_gpu.ipynb"), std::string::npos) << text;  // or the Colab way
}

}  // namespace
}  // namespace gpuaccel
