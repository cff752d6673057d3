// The CUDA backend loader and the backend library itself, on a machine without a GPU: every way
// of having no GPU must give its own reason with a fix and never throw (the fake library of
// fake_cuda_library.h pretends each one, and a stale interface version), and the real library
// built here must load, export only its factory, report "no driver" through its checking macros
// and validate arguments without touching a GPU. The checks that need a GPU skip here.
#include "core/cuda_loader/cuda_backend_loader.h"

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

// A driver as probe_cuda_driver would find it: `cuda_version` 0 is "no driver".
CudaDriverProbe pretend_driver(int cuda_version) {
  CudaDriverProbe driver;
  driver.found = cuda_version > 0;
  driver.cuda_version = cuda_version;
  if (!driver.found) driver.error = "libcuda.so.1: cannot open shared object file (pretended)";
  return driver;
}

// A file that exists but no dlopen can load: a backend whose CUDA libraries are missing looks
// the same to the loader (dlopen fails), without needing such a library.
class UnloadableBackend {
 public:
  UnloadableBackend() {
    const int fd = mkstemp(path_);
    if (fd >= 0) {
      ok_ = write(fd, "not an ELF file", 15) == 15;
      close(fd);
    }
  }
  ~UnloadableBackend() { std::remove(path_); }
  bool ok() const { return ok_; }
  const char* path() const { return path_; }

 private:
  char path_[64] = "/tmp/gpuaccel_not_a_library_XXXXXX";
  bool ok_ = false;
};

constexpr int kCuda13 = 13000;

TEST(CudaBackendLoader, UnloadableFileReportsTheLoaderError) {
  const UnloadableBackend file;
  ASSERT_TRUE(file.ok());
  const std::string path = file.path();
  const CudaBackendStatus s = probe_cuda_backend(path, {}, pretend_driver(kCuda13), kCuda13);
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
// The driver probe pretends none (as on this machine), so the fake library's own answers decide
// on any machine.
CudaBackendStatus probe_fake(const char* mode) {
  ScopedEnv fake(GPUACCEL_FAKE_CUDA_ENV, mode);
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", nullptr);
  return probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, {}, pretend_driver(0), kCuda13);
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
    s = probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, {}, pretend_driver(0), kCuda13);
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


// ---- the driver first: a CUDA 12 driver (Colab's) and a CUDA 13 backend ----

TEST(CudaLoaderDecision, ADriverOfAnOlderCudaMajorStopsTheLoadBeforeItStarts) {
  EXPECT_EQ(problem_before_backend_load(pretend_driver(12040), 13000), CudaProblem::kDriverTooOld);
  EXPECT_EQ(problem_before_backend_load(pretend_driver(12080), 13000), CudaProblem::kDriverTooOld);
  EXPECT_EQ(problem_before_backend_load(pretend_driver(13000), 13000), CudaProblem::kNone);
  EXPECT_EQ(problem_before_backend_load(pretend_driver(13020), 13000), CudaProblem::kNone);
  // Within a major, minor-version compatibility runs a newer runtime on an older driver.
  EXPECT_EQ(problem_before_backend_load(pretend_driver(12020), 12060), CudaProblem::kNone);
  // Unknown on either side decides nothing here (the backend's own queries say more).
  EXPECT_EQ(problem_before_backend_load(pretend_driver(0), 13000), CudaProblem::kNone);
  CudaDriverProbe version_unknown = pretend_driver(12040);
  version_unknown.cuda_version = 0;
  EXPECT_EQ(problem_before_backend_load(version_unknown, 13000), CudaProblem::kNone);
  EXPECT_EQ(problem_before_backend_load(pretend_driver(12040), 0), CudaProblem::kNone);

  // When the backend then fails to load: without a driver that is the first thing to fix.
  EXPECT_EQ(problem_when_backend_load_fails(pretend_driver(0)), CudaProblem::kNoDriver);
  EXPECT_EQ(problem_when_backend_load_fails(pretend_driver(13000)), CudaProblem::kLibraryLoadFailed);
}

TEST(CudaLoaderDecision, ColabsCuda12DriverIsNamedNotTheMissingCuda13Libraries) {
  const UnloadableBackend file;  // as a CUDA 13 backend without libcublas.so.13 fails
  ASSERT_TRUE(file.ok());
  const CudaBackendStatus s = probe_cuda_backend(file.path(), {}, pretend_driver(12040), kCuda13);
  EXPECT_FALSE(s.loaded);
  EXPECT_EQ(s.problem, CudaProblem::kDriverTooOld);
  EXPECT_EQ(s.status, CudaStatus::kDriverTooOld);
  EXPECT_EQ(s.driver_version, 12040);
  EXPECT_EQ(s.runtime_version, kCuda13);
  EXPECT_TRUE(s.cuda_libraries.empty());  // nothing was preloaded: no CUDA 13 wheel copy
  EXPECT_TRUE(contains(s.reason, "supports CUDA 12.4")) << s.reason;
  EXPECT_TRUE(contains(s.reason, "needs CUDA 13.0")) << s.reason;
  EXPECT_TRUE(contains(s.reason, "update the NVIDIA driver")) << s.reason;
  EXPECT_TRUE(contains(s.reason, "gpuaccel built for CUDA 12")) << s.reason;
  EXPECT_FALSE(contains(s.reason, "pip install nvidia")) << s.reason;

  // The same file with a CUDA 13 driver is a load failure, and with no driver the driver.
  const CudaBackendStatus new_driver = probe_cuda_backend(file.path(), {}, pretend_driver(13000), kCuda13);
  EXPECT_EQ(new_driver.problem, CudaProblem::kLibraryLoadFailed);
  EXPECT_FALSE(contains(new_driver.reason, "nvidia-cudnn-cu13")) << new_driver.reason;
  const CudaBackendStatus no_driver = probe_cuda_backend(file.path(), {}, pretend_driver(0), kCuda13);
  EXPECT_EQ(no_driver.problem, CudaProblem::kNoDriver);
  EXPECT_TRUE(contains(no_driver.reason, "Could not find cuda drivers")) << no_driver.reason;
  EXPECT_TRUE(contains(no_driver.reason, "could not be loaded either")) << no_driver.reason;
}

TEST(CudaLoaderDecision, ALibraryThatLoadsIsStillRefusedOnAnOldDriver) {
  ScopedEnv fake(GPUACCEL_FAKE_CUDA_ENV, "ok");
  const CudaBackendStatus old_driver =
      probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, {}, pretend_driver(12040), kCuda13);
  EXPECT_FALSE(old_driver.loaded);
  EXPECT_EQ(old_driver.problem, CudaProblem::kDriverTooOld);
  EXPECT_TRUE(contains(old_driver.reason, "580.65.06")) << old_driver.reason;
  const CudaBackendStatus new_driver =
      probe_cuda_backend(GPUACCEL_TEST_FAKE_CUDA_LIBRARY, {}, pretend_driver(13000), kCuda13);
  EXPECT_TRUE(new_driver.loaded) << new_driver.reason;
  EXPECT_EQ(new_driver.problem, CudaProblem::kNone);
}

TEST(CudaLoaderDecision, NoDriverLibraryIsFoundAsNone) {
  const CudaDriverProbe probe = probe_cuda_driver("/nonexistent/gpuaccel-test/libcuda.so.1");
  EXPECT_FALSE(probe.found);
  EXPECT_EQ(probe.cuda_version, 0);
  EXPECT_TRUE(contains(probe.error, "/nonexistent/gpuaccel-test/libcuda.so.1")) << probe.error;
  // A library without cuDriverGetVersion (libc here) is found, its version unknown.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&::getpid), &info), 0);
  const CudaDriverProbe libc = probe_cuda_driver(info.dli_fname);
  EXPECT_TRUE(libc.found);
  EXPECT_EQ(libc.cuda_version, 0);
  EXPECT_TRUE(contains(libc.error, "cuDriverGetVersion")) << libc.error;
}

bool nothing_loads(const std::string&) { return false; }
bool only_system_cudnn_loads(const std::string& soname) { return soname == "libcudnn.so.9"; }

CudaLibraryCopy copy_of(const std::string& soname, const std::string& loaded = "") {
  CudaLibraryCopy c;
  c.soname = soname;
  c.loaded_path = loaded;
  return c;
}

TEST(CudaLoaderDecision, TheAdviceNamesOnlyTheLibrariesReallyMissing) {
  // PyTorch's cuDNN is loaded (same soname for CUDA 12 and 13): cuBLAS 13 is what is missing,
  // and the advice must not install a cuDNN wheel over PyTorch's.
  const std::vector<CudaLibraryCopy> copies = {
      copy_of("libcublasLt.so.13"), copy_of("libcublas.so.13"),
      copy_of("libcudnn.so.9", "/usr/lib/python3/site-packages/nvidia/cudnn/lib/libcudnn.so.9")};
  const std::vector<std::string> missing = missing_cuda_libraries(copies, &nothing_loads);
  EXPECT_EQ(missing, (std::vector<std::string>{"libcublasLt.so.13", "libcublas.so.13"}));
  EXPECT_EQ(wheel_install_command(missing, 13000), "pip install nvidia-cublas");
  // A library the system provides is not missing either.
  EXPECT_EQ(missing_cuda_libraries({copy_of("libcudnn.so.9")}, &only_system_cudnn_loads),
            std::vector<std::string>{});

  EXPECT_EQ(wheel_install_command({"libcudnn.so.9", "libcudart.so.13", "libnccl.so.2"}, 13000),
            "pip install nvidia-cudnn-cu13 nvidia-cuda-runtime nvidia-nccl-cu13");
  EXPECT_EQ(wheel_install_command({"libcublas.so.12", "libcudnn.so.9"}, 12060),
            "pip install nvidia-cublas-cu12 nvidia-cudnn-cu12");
  EXPECT_EQ(wheel_install_command({"libfoo.so.1"}, 13000), "");

  CudaBackendStatus facts;
  facts.library_path = "/opt/x/libgpuaccel_cuda.so";
  facts.detail = "libcublas.so.13: cannot open shared object file";
  facts.runtime_version = 13000;
  facts.driver_version = 13000;
  facts.missing_libraries = missing;
  const std::string text = explain_cuda_problem(CudaProblem::kLibraryLoadFailed, facts);
  EXPECT_TRUE(contains(text, "pip install nvidia-cublas ")) << text;
  EXPECT_TRUE(contains(text, "libcublasLt.so.13, libcublas.so.13")) << text;
  EXPECT_FALSE(contains(text, "cudnn")) << text;
}

// ---- cuDNN at run time against the headers of the build ----

TEST(CudnnRuntimeCheck, AnOlderMinorThanTheHeadersIsWarnedAbout) {
  EXPECT_EQ(check_cudnn_runtime(91900, 91900), "");
  EXPECT_EQ(check_cudnn_runtime(91900, 92600), "");  // newer minor: compatible
  EXPECT_EQ(check_cudnn_runtime(91902, 91900), "");  // patch releases: both ways
  EXPECT_EQ(check_cudnn_runtime(0, 91000), "");      // built without cuDNN: nothing to say
  EXPECT_EQ(check_cudnn_runtime(91900, 0), "");      // none loaded: nothing to compare
  const std::string older = check_cudnn_runtime(91900, 91002);  // PyTorch cu12's cuDNN 9.10
  EXPECT_TRUE(contains(older, "(9.10.2) is older than the cuDNN 9.19.0")) << older;
  EXPECT_TRUE(contains(older, "Fix:")) << older;
  EXPECT_TRUE(contains(older, "9.19 or newer")) << older;
  EXPECT_FALSE(check_cudnn_runtime(91900, 81000).empty());  // another major
}

TEST(CudnnRuntimeCheck, TheLoaderComparesTheLoadedCudnnWithTheBuilds) {
  const int build = build_info().cudnn_version;
  ScopedEnv older(GPUACCEL_FAKE_CUDA_CUDNN_VERSION_ENV, "91000");
  CudaBackendStatus s = probe_fake("ok");
  ASSERT_TRUE(s.loaded) << s.reason;
  EXPECT_EQ(s.cudnn_version, 91000);
  EXPECT_EQ(s.cudnn_warning, check_cudnn_runtime(build, 91000));
  if (build > 91099) EXPECT_TRUE(contains(s.cudnn_warning, "older than")) << s.cudnn_warning;
  EXPECT_EQ(s.problem, CudaProblem::kNone);  // a warning: the GPU stays usable
  EXPECT_EQ(s.device_count, 2);

  ScopedEnv same(GPUACCEL_FAKE_CUDA_CUDNN_VERSION_ENV, std::to_string(build).c_str());
  s = probe_fake("ok");
  EXPECT_EQ(s.cudnn_warning, "");
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
