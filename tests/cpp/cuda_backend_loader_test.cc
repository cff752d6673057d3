// The CUDA backend loader and the backend library itself, on a machine without a GPU: every way
// of having no GPU must give its own reason with a fix and never throw (the fake library of
// fake_cuda_library.h pretends each one, and a stale interface version), and the real library
// built here must load, export only its factory, report "no driver" through its checking macros
// and validate arguments without touching a GPU. The checks that need a GPU skip here.
#include "core/cuda_backend_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/gpu_provider.h"
#include "cuda_test_device.h"
#include "fake_cuda_library.h"

namespace gpuaccel {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool driver_present() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return h != nullptr;  // left open: the backend under test would open it anyway
}

// Restores an environment variable when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    had_ = old != nullptr;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(CudaVersionStrings, DecodeTheLibrariesEncodings) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12040), "12.4");
  EXPECT_EQ(cuda_version_string(11080), "11.8");
  EXPECT_EQ(cuda_version_string(0), "");
  EXPECT_EQ(cudnn_version_string(91900), "9.19.0");
  EXPECT_EQ(cudnn_version_string(90300), "9.3.0");
  EXPECT_EQ(cudnn_version_string(8902), "8.9.2");
  EXPECT_EQ(cudnn_version_string(0), "");
}

TEST(CudaBackendLoader, MissingLibraryReportsItsPath) {
  const std::string path = "/nonexistent/gpuaccel-test/libgpuaccel_cuda.so";
  const CudaBackendStatus s = probe_cuda_backend(path);
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kLibraryMissing);
  EXPECT_EQ(s.device_count, 0);
  EXPECT_EQ(s.library_path, path);
  EXPECT_TRUE(contains(s.reason, path)) << s.reason;
  EXPECT_TRUE(contains(s.reason, "Fix:")) << s.reason;
}

TEST(CudaBackendLoader, UnloadableFileReportsTheLoaderError) {
  char path[] = "/tmp/gpuaccel_not_a_library_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "not an ELF file", 15), 15);
  close(fd);
  const CudaBackendStatus s = probe_cuda_backend(path);
  std::remove(path);
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kLibraryLoadFailed);
  EXPECT_FALSE(s.detail.empty());
  EXPECT_TRUE(contains(s.reason, path)) << s.reason;
  EXPECT_TRUE(contains(s.reason, s.detail)) << s.reason;  // dlerror's text is passed on
}

TEST(CudaBackendLoader, LibraryWithoutTheEntryIsRejected) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&::getpid), &info), 0);  // libc: a real library
  const CudaBackendStatus s = probe_cuda_backend(info.dli_fname);
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kBadLibrary);
  EXPECT_TRUE(contains(s.reason, GPUACCEL_CUDA_LIBRARY_FACTORY)) << s.reason;
}

TEST(CudaBackendLoader, LibraryPathComesFromTheEnvironmentFirst) {
  {
    ScopedEnv env("GPUACCEL_CUDA_BACKEND", "/somewhere/else/libgpuaccel_cuda.so");
    EXPECT_EQ(cuda_backend_library_path(), "/somewhere/else/libgpuaccel_cuda.so");
  }
  ScopedEnv env("GPUACCEL_CUDA_BACKEND", nullptr);
  const std::string path = cuda_backend_library_path();
  const BuildInfo build = build_info();
  if (build.cuda_backend_file.empty()) {
    EXPECT_EQ(path, "");
  } else {
    // Next to the binary holding the core: here, the test executable's folder.
    ASSERT_GT(path.size(), build.cuda_backend_file.size());
    EXPECT_EQ(path.substr(path.size() - build.cuda_backend_file.size() - 1),
              "/" + build.cuda_backend_file);
    EXPECT_EQ(path[0], '/');
  }
}

TEST(CudaBackendLoader, EveryProblemHasItsOwnExplanationWithAFix) {
  CudaBackendStatus facts;
  facts.library_path = "/opt/x/libgpuaccel_cuda.so";
  facts.detail = "DETAIL-TEXT";
  facts.driver_version = 12040;
  facts.runtime_version = 13000;
  facts.cuda_visible_devices = "-1";
  std::set<std::string> texts;
  std::set<std::string> names;
  for (CudaProblem p : {CudaProblem::kNotBuilt, CudaProblem::kLibraryMissing,
                        CudaProblem::kLibraryLoadFailed, CudaProblem::kBadLibrary,
                        CudaProblem::kNoDriver, CudaProblem::kDriverTooOld,
                        CudaProblem::kNoDevice, CudaProblem::kHiddenByEnv}) {
    const std::string text = explain_cuda_problem(p, facts);
    EXPECT_TRUE(contains(text, "Fix:")) << cuda_problem_name(p) << ": " << text;
    texts.insert(text);
    names.insert(cuda_problem_name(p));
  }
  EXPECT_EQ(texts.size(), 8u);
  EXPECT_EQ(names.size(), 8u);
  EXPECT_EQ(explain_cuda_problem(CudaProblem::kNone, facts), "");

  // TensorFlow's words, so the message students search for is the one they get.
  EXPECT_TRUE(contains(explain_cuda_problem(CudaProblem::kNoDriver, facts),
                       "Could not find cuda drivers"));
  const std::string too_old = explain_cuda_problem(CudaProblem::kDriverTooOld, facts);
  EXPECT_TRUE(contains(too_old, "12.4")) << too_old;  // what the driver supports
  EXPECT_TRUE(contains(too_old, "13.0")) << too_old;  // what the backend needs
  EXPECT_TRUE(contains(explain_cuda_problem(CudaProblem::kHiddenByEnv, facts),
                       "CUDA_VISIBLE_DEVICES='-1'"));
  EXPECT_TRUE(contains(explain_cuda_problem(CudaProblem::kLibraryMissing, facts),
                       "/opt/x/libgpuaccel_cuda.so"));
  EXPECT_TRUE(contains(explain_cuda_problem(CudaProblem::kLibraryLoadFailed, facts),
                       "DETAIL-TEXT"));
  facts.path_from_env = true;
  EXPECT_TRUE(contains(explain_cuda_problem(CudaProblem::kLibraryMissing, facts),
                       "GPUACCEL_CUDA_BACKEND"));
}

TEST(CudaBackendLoader, ProviderNeverThrowsAndExplainsAnEmptyList) {
  std::unique_ptr<GpuProvider> provider;
  ASSERT_NO_THROW(provider = make_cuda_gpu_provider());
  EXPECT_EQ(provider->kind(), "cuda");
  std::vector<GpuInfo> gpus;
  ASSERT_NO_THROW(gpus = provider->discover());
  const CudaBackendStatus& s = cuda_backend_status();
  EXPECT_EQ(static_cast<int>(gpus.size()), s.device_count);
  if (gpus.empty()) {
    EXPECT_FALSE(s.reason.empty());
    EXPECT_EQ(provider->unavailable_reason(), s.reason);
    EXPECT_THROW(require_cuda_library("MatMul"), std::exception);
  }
}

// ---- the fake library: every diagnosis, on any machine ----

// The status the loader reports for the fake library pretending `mode`.
CudaBackendStatus probe_fake(const char* mode) {
  ScopedEnv fake(GPUACCEL_FAKE_CUDA_ENV, mode);
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", nullptr);
  return probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY);
}

TEST(CudaBackendLoaderFake, LoadsAndCountsItsDevices) {
  const CudaBackendStatus s = probe_fake("ok");
  ASSERT_TRUE(s.loaded) << s.reason;
  EXPECT_EQ(s.problem, CudaProblem::kNone);
  EXPECT_EQ(s.device_count, 2);
  EXPECT_EQ(s.reason, "");
  EXPECT_EQ(s.runtime_version, 13000);
  EXPECT_EQ(s.driver_version, 13000);
  EXPECT_EQ(s.cudnn_version, 91900);
}

TEST(CudaBackendLoaderFake, EachFailingQueryHasItsDiagnosis) {
  CudaBackendStatus s = probe_fake("no_driver");
  EXPECT_TRUE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kNoDriver);
  EXPECT_EQ(s.status, CudaStatus::kNoDriver);
  EXPECT_EQ(s.device_count, 0);
  EXPECT_TRUE(contains(s.reason, "Could not find cuda drivers")) << s.reason;

  s = probe_fake("driver_too_old");
  EXPECT_EQ(s.problem, CudaProblem::kDriverTooOld);
  EXPECT_TRUE(contains(s.reason, "12.4")) << s.reason;  // what the driver supports
  EXPECT_TRUE(contains(s.reason, "13.0")) << s.reason;  // what the library was built with

  // Whatever error the runtime gives, a driver of an older CUDA major is named as too old.
  s = probe_fake("driver_too_old_generic");
  EXPECT_EQ(s.problem, CudaProblem::kDriverTooOld);
  EXPECT_TRUE(contains(s.reason, "580.65.06")) << s.reason;  // the driver branch for CUDA 13

  s = probe_fake("no_device");
  EXPECT_EQ(s.problem, CudaProblem::kNoDevice);
  EXPECT_TRUE(contains(s.reason, "fake CUDA: no_device")) << s.reason;
  {
    ScopedEnv fake(GPUACCEL_FAKE_CUDA_ENV, "no_device");
    ScopedEnv visible("CUDA_VISIBLE_DEVICES", "-1");
    s = probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY);
    EXPECT_EQ(s.problem, CudaProblem::kHiddenByEnv);
  }
}

TEST(CudaBackendLoaderFake, AnotherInterfaceVersionIsABadLibrary) {
  const CudaBackendStatus s = probe_fake("version=4");
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kBadLibrary);
  EXPECT_TRUE(contains(s.reason, "interface version is 4")) << s.reason;
  EXPECT_TRUE(contains(s.reason, "needs " + std::to_string(kCudaLibraryInterfaceVersion))) << s.reason;
  EXPECT_TRUE(contains(s.reason, "Fix:")) << s.reason;
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND

// The GPU fixture's backend path: a caller's GPUACCEL_CUDA_BACKEND (the GPU kit's installed
// copy, .ci/device_check) is kept; only without one does the build folder's path fill in.
TEST(CudaTestDevice, CallersBackendPathWinsOverTheBuildFolders) {
  {
    ScopedEnv env("GPUACCEL_CUDA_BACKEND", "/kit/site/gpuaccel/libgpuaccel_cuda.so");
    use_test_cuda_backend_unless_overridden();
    EXPECT_STREQ(std::getenv("GPUACCEL_CUDA_BACKEND"), "/kit/site/gpuaccel/libgpuaccel_cuda.so");
  }
  ScopedEnv env("GPUACCEL_CUDA_BACKEND", nullptr);
  use_test_cuda_backend_unless_overridden();
  EXPECT_STREQ(std::getenv("GPUACCEL_CUDA_BACKEND"), GPUACCEL_TEST_CUDA_BACKEND);
}

TEST(CudaBackendLoader, RealBackendLoadsAndReportsNoDriver) {
  const CudaBackendStatus s = probe_cuda_backend(GPUACCEL_TEST_CUDA_BACKEND);
  ASSERT_TRUE(s.loaded) << s.reason;
  EXPECT_TRUE(s.built);
  const BuildInfo build = build_info();
  EXPECT_EQ(cuda_version_string(s.runtime_version), build.cuda_version);
  EXPECT_EQ(s.cudnn_version, build.cudnn_version);  // loaded through the RPATH set at build
  EXPECT_GT(s.cublas_version, 0);
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  EXPECT_EQ(s.problem, CudaProblem::kNoDriver);
  EXPECT_EQ(s.status, CudaStatus::kNoDriver);
  EXPECT_EQ(s.device_count, 0);
  EXPECT_TRUE(contains(s.reason, "Could not find cuda drivers")) << s.reason;
  EXPECT_TRUE(contains(s.reason, "libcuda.so.1")) << s.reason;
}

TEST(CudaBackendLoader, CachedStatusFollowsTheEnvironment) {
  ScopedEnv env("GPUACCEL_CUDA_BACKEND", GPUACCEL_TEST_CUDA_BACKEND);
  const CudaBackendStatus& s = cuda_backend_status();
  if (s.library_path != GPUACCEL_TEST_CUDA_BACKEND) {
    GTEST_SKIP() << "the status was cached by an earlier test in this process";
  }
  EXPECT_TRUE(s.path_from_env);
  EXPECT_TRUE(s.loaded) << s.reason;
  EXPECT_NE(cuda_library(), nullptr);
  if (s.device_count == 0) {
    try {
      require_cuda_library("MatMul");
      ADD_FAILURE() << "require_cuda_library succeeded without a device";
    } catch (const std::exception& e) {
      EXPECT_TRUE(contains(e.what(), "[MatMul]")) << e.what();
      EXPECT_TRUE(contains(e.what(), s.reason)) << e.what();
    }
  }
}

// The real library, opened directly, to test its error mapping and argument checks.
class CudaLibraryDirect : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(GPUACCEL_TEST_CUDA_BACKEND, RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto factory = reinterpret_cast<gpuaccel_cuda_library_factory_fn>(
        dlsym(handle_, GPUACCEL_CUDA_LIBRARY_FACTORY));
    ASSERT_NE(factory, nullptr);
    int version = 0;
    EXPECT_EQ(factory(kCudaLibraryInterfaceVersion + 1, &version), nullptr);
    EXPECT_EQ(version, kCudaLibraryInterfaceVersion);
    library_ = factory(kCudaLibraryInterfaceVersion, &version);
    ASSERT_NE(library_, nullptr);
  }
  CudaLibrary* library_ = nullptr;
  void* handle_ = nullptr;
  std::string err_;
};

TEST_F(CudaLibraryDirect, ExportsOnlyTheFactory) {
  // The static CUDA runtime and the library's own C++ stay private to it.
  EXPECT_EQ(dlsym(handle_, "cudaGetDeviceCount"), nullptr);
  EXPECT_EQ(dlsym(handle_, "cudaMalloc"), nullptr);
  EXPECT_EQ(dlsym(handle_, "gpuaccel_cuda_backend_v1"), nullptr);
}

TEST_F(CudaLibraryDirect, NoDriverIsMappedWithTheFailingCallAndPlace) {
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  int count = -1;
  EXPECT_EQ(library_->device_count(&count, &err_), CudaStatus::kNoDriver);
  EXPECT_EQ(count, 0);
  EXPECT_TRUE(contains(err_, "libcuda.so.1")) << err_;

  int version = -1;
  EXPECT_EQ(library_->driver_version(&version, &err_), CudaStatus::kNoDriver);
  EXPECT_EQ(version, 0);

  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(library_->malloc_device(0, 1024, &ptr, &err_), CudaStatus::kNoDriver) << err_;
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(contains(err_, "1024 bytes")) << err_;
  // The failing call's text and place (the device guard's cudaGetDevice fails first here).
  EXPECT_TRUE(contains(err_, "cudaGetDevice(&previous_) at cpp/backends/cuda/context.cc:")) << err_;
  EXPECT_TRUE(contains(err_, "cudaErrorInsufficientDriver")) << err_;
  GpuInfo props;
  EXPECT_EQ(library_->device_properties(0, &props, &err_), CudaStatus::kNoDriver);
}

TEST_F(CudaLibraryDirect, ArgumentsAreCheckedBeforeAnyGpuWork) {
  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(library_->malloc_device(0, 0, &ptr, &err_), CudaStatus::kOk);  // nothing to allocate
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(err_, "");
  EXPECT_EQ(library_->free_device(0, nullptr, &err_), CudaStatus::kOk);
  EXPECT_EQ(library_->device_count(nullptr, &err_), CudaStatus::kInvalidArgument);
  EXPECT_TRUE(contains(err_, "null output")) << err_;
  EXPECT_EQ(library_->device_count(nullptr, nullptr), CudaStatus::kInvalidArgument);
}

// ---- GPU only ----

class CudaLibraryOnGpu : public CudaLibraryDirect {
 protected:
  void SetUp() override {
    CudaLibraryDirect::SetUp();
    int count = 0;
    if (library_->device_count(&count, &err_) != CudaStatus::kOk || count == 0) {
      GTEST_SKIP() << "no CUDA device: " << err_;
    }
  }
};

TEST_F(CudaLibraryOnGpu, PropertiesAreSane) {
  GpuInfo p;
  ASSERT_EQ(library_->device_properties(0, &p, &err_), CudaStatus::kOk) << err_;
  EXPECT_GT(p.name.size(), 0u);
  EXPECT_GT(p.total_memory, int64_t{1} << 30);
  EXPECT_GE(p.major, 7);
  EXPECT_GT(p.multi_processor_count, 0);
  EXPECT_GT(p.memory_bus_width_bits, 0);
  EXPECT_GT(p.memory_clock_khz, 0);
  int count = 0;
  library_->device_count(&count, &err_);
  EXPECT_EQ(library_->device_properties(count, &p, &err_), CudaStatus::kInvalidArgument);
}

TEST_F(CudaLibraryOnGpu, OutOfMemoryIsItsOwnStatus) {
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(library_->memory_info(0, &free_bytes, &total_bytes, &err_), CudaStatus::kOk) << err_;
  EXPECT_GT(total_bytes, free_bytes);
  void* p = nullptr;
  EXPECT_EQ(library_->malloc_device(0, total_bytes * 4, &p, &err_), CudaStatus::kOutOfMemory) << err_;
  EXPECT_EQ(p, nullptr);
}

TEST_F(CudaLibraryOnGpu, PinnedHostMemoryRoundTrips) {
  void* pinned = nullptr;
  ASSERT_EQ(library_->malloc_host_pinned(4096, &pinned, &err_), CudaStatus::kOk) << err_;
  ASSERT_NE(pinned, nullptr);
  static_cast<unsigned char*>(pinned)[4095] = 0xAB;  // host-writable
  EXPECT_EQ(library_->free_host_pinned(pinned, &err_), CudaStatus::kOk) << err_;
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
