// The CUDA backend loader and the backend library itself, on a machine without a GPU: every way
// of having no GPU must give its own reason with a fix and never throw, and the real backend
// built here must load, report "no driver" through its checking macros, and validate arguments
// without touching a GPU. The checks that need a GPU skip here and run on Colab.
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
  EXPECT_TRUE(contains(s.reason, GPUACCEL_CUDA_BACKEND_ENTRY)) << s.reason;
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
    EXPECT_THROW(require_cuda_backend("MatMul"), std::exception);
  }
}

#ifdef GPUACCEL_TEST_CUDA_BACKEND

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
  EXPECT_EQ(s.status, GPUACCEL_CUDA_NO_DRIVER);
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
  EXPECT_NE(cuda_backend(), nullptr);
  EXPECT_EQ(cuda_backend()->abi_version, GPUACCEL_CUDA_BACKEND_ABI_VERSION);
  if (s.device_count == 0) {
    try {
      require_cuda_backend("MatMul");
      ADD_FAILURE() << "require_cuda_backend succeeded without a device";
    } catch (const std::exception& e) {
      EXPECT_TRUE(contains(e.what(), "[MatMul]")) << e.what();
      EXPECT_TRUE(contains(e.what(), s.reason)) << e.what();
    }
  }
}

// The backend's own table, opened directly, to test its error mapping and argument checks.
class CudaBackendTable : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(GPUACCEL_TEST_CUDA_BACKEND, RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto entry = reinterpret_cast<gpuaccel_cuda_backend_entry_fn>(
        dlsym(handle_, GPUACCEL_CUDA_BACKEND_ENTRY));
    ASSERT_NE(entry, nullptr);
    table_ = entry();
    ASSERT_NE(table_, nullptr);
  }
  const gpuaccel_cuda_backend* table_ = nullptr;
  void* handle_ = nullptr;
  char err_[1024] = {0};
};

TEST_F(CudaBackendTable, ExportsOnlyTheEntryPoint) {
  // The static CUDA runtime inside must stay private to the library.
  EXPECT_EQ(dlsym(handle_, "cudaGetDeviceCount"), nullptr);
  EXPECT_EQ(dlsym(handle_, "cudaMalloc"), nullptr);
}

TEST_F(CudaBackendTable, NoDriverIsMappedWithTheFailingCallAndPlace) {
  if (driver_present()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  int count = -1;
  EXPECT_EQ(table_->device_count(&count, err_, sizeof(err_)), GPUACCEL_CUDA_NO_DRIVER);
  EXPECT_EQ(count, 0);
  const std::string message = err_;
  EXPECT_TRUE(contains(message, "cudaGetDeviceCount(&count)")) << message;
  EXPECT_TRUE(contains(message, "cpp/backends/cuda/backend.cc:")) << message;
  EXPECT_TRUE(contains(message, "cudaErrorInsufficientDriver")) << message;

  int version = -1;
  EXPECT_EQ(table_->driver_version(&version, err_, sizeof(err_)), GPUACCEL_CUDA_NO_DRIVER);
  EXPECT_EQ(version, 0);

  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(table_->malloc_device(0, 1024, &ptr, err_, sizeof(err_)), GPUACCEL_CUDA_NO_DRIVER)
      << err_;
  EXPECT_EQ(ptr, nullptr);
  EXPECT_TRUE(contains(err_, "1024 bytes")) << err_;
  gpuaccel_cuda_device_properties props{};
  EXPECT_EQ(table_->device_properties(0, &props, err_, sizeof(err_)), GPUACCEL_CUDA_NO_DRIVER);
}

TEST_F(CudaBackendTable, ArgumentsAreCheckedBeforeAnyGpuWork) {
  EXPECT_EQ(table_->matmul_f32(0, nullptr, nullptr, nullptr, -1, 2, 2, err_, sizeof(err_)),
            GPUACCEL_CUDA_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(err_, "m=-1")) << err_;
  // Empty results need no device at all.
  EXPECT_EQ(table_->matmul_f32(0, nullptr, nullptr, nullptr, 0, 5, 3, err_, sizeof(err_)),
            GPUACCEL_CUDA_OK) << err_;
  EXPECT_EQ(std::string(err_), "");
  void* ptr = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(table_->malloc_device(0, 0, &ptr, err_, sizeof(err_)), GPUACCEL_CUDA_OK);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(table_->free_device(0, nullptr, err_, sizeof(err_)), GPUACCEL_CUDA_OK);
  EXPECT_EQ(table_->device_count(nullptr, err_, sizeof(err_)), GPUACCEL_CUDA_INVALID_ARGUMENT);
  // A tiny buffer gets a truncated, terminated message rather than an overflow.
  char tiny[8];
  EXPECT_EQ(table_->device_count(nullptr, tiny, sizeof(tiny)), GPUACCEL_CUDA_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(tiny).size(), sizeof(tiny) - 1);
}

// ---- GPU only: run on Colab ----

class CudaBackendOnGpu : public CudaBackendTable {
 protected:
  void SetUp() override {
    CudaBackendTable::SetUp();
    int count = 0;
    if (table_->device_count(&count, err_, sizeof(err_)) != GPUACCEL_CUDA_OK || count == 0) {
      GTEST_SKIP() << "no CUDA device: " << err_;
    }
  }
  void* device_alloc(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(table_->malloc_device(0, bytes, &p, err_, sizeof(err_)), GPUACCEL_CUDA_OK) << err_;
    return p;
  }
};

TEST_F(CudaBackendOnGpu, PropertiesAreSane) {
  gpuaccel_cuda_device_properties p{};
  ASSERT_EQ(table_->device_properties(0, &p, err_, sizeof(err_)), GPUACCEL_CUDA_OK) << err_;
  EXPECT_GT(std::string(p.name).size(), 0u);
  EXPECT_GT(p.total_memory, int64_t{1} << 30);
  EXPECT_GE(p.major, 7);
  EXPECT_GT(p.multi_processor_count, 0);
  EXPECT_GT(p.memory_bus_width_bits, 0);
  EXPECT_GT(p.memory_clock_khz, 0);
  int count = 0;
  table_->device_count(&count, err_, sizeof(err_));
  EXPECT_EQ(table_->device_properties(count, &p, err_, sizeof(err_)),
            GPUACCEL_CUDA_INVALID_ARGUMENT);
}

TEST_F(CudaBackendOnGpu, MatmulIsRowMajor) {
  // [2x3] x [3x2]: a transposed result would be easy to spot.
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  const std::vector<float> expected = {58, 64, 139, 154};
  float* da = static_cast<float*>(device_alloc(a.size() * 4));
  float* db = static_cast<float*>(device_alloc(b.size() * 4));
  float* dc = static_cast<float*>(device_alloc(expected.size() * 4));
  ASSERT_EQ(table_->copy_to_device(0, da, a.data(), a.size() * 4, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(table_->copy_to_device(0, db, b.data(), b.size() * 4, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(table_->matmul_f32(0, da, db, dc, 2, 2, 3, err_, sizeof(err_)), 0) << err_;
  std::vector<float> c(4, -1.0f);
  ASSERT_EQ(table_->copy_to_host(0, c.data(), dc, c.size() * 4, err_, sizeof(err_)), 0) << err_;
  EXPECT_EQ(c, expected);
  // k == 0 runs the fill kernel: every element becomes exactly zero.
  ASSERT_EQ(table_->matmul_f32(0, da, db, dc, 2, 2, 0, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(table_->synchronize(0, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(table_->copy_to_host(0, c.data(), dc, c.size() * 4, err_, sizeof(err_)), 0) << err_;
  EXPECT_EQ(c, std::vector<float>(4, 0.0f));
  for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(dc)}) {
    EXPECT_EQ(table_->free_device(0, p, err_, sizeof(err_)), 0) << err_;
  }
}

TEST_F(CudaBackendOnGpu, OutOfMemoryIsItsOwnStatus) {
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(table_->memory_info(0, &free_bytes, &total_bytes, err_, sizeof(err_)), 0) << err_;
  EXPECT_GT(total_bytes, free_bytes);
  void* p = nullptr;
  EXPECT_EQ(table_->malloc_device(0, total_bytes * 4, &p, err_, sizeof(err_)),
            GPUACCEL_CUDA_OUT_OF_MEMORY) << err_;
  EXPECT_EQ(p, nullptr);
}

TEST_F(CudaBackendOnGpu, PinnedHostMemoryRoundTrips) {
  void* pinned = nullptr;
  ASSERT_EQ(table_->malloc_host_pinned(4096, &pinned, err_, sizeof(err_)), 0) << err_;
  ASSERT_NE(pinned, nullptr);
  static_cast<unsigned char*>(pinned)[4095] = 0xAB;  // host-writable
  EXPECT_EQ(table_->free_host_pinned(pinned, err_, sizeof(err_)), 0) << err_;
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
