// MpiLibrary (see mpi_library.h): dlopen, symbol lookup, the ABI check, MPI_Init_thread once,
// MPI_Finalize at exit.
#include "distribute/mpi_library.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "core/errors.h"
#include "distribute/elementwise_sum.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::distribute {

namespace {

constexpr const char* kOp = "MultiWorkerMirroredStrategy";
constexpr const char* kInstallHint =
    "pip install mpich (PyPI's MPICH 5, whose lib/libmpi_abi.so.1 speaks the MPI 5.0 standard "
    "ABI), or set GPUACCEL_MPI_LIBRARY to such a libmpi_abi.so.1";

std::mutex g_mutex;
MpiLibrary* g_library = nullptr;  // never freed: MPI stays initialized until exit
bool g_initialized_here = false;
std::atomic<bool> g_skip_finalize{false};

void finalize_at_exit() {
  if (!g_library || !g_initialized_here || g_skip_finalize.load()) return;
  int finalized = 0;
  g_library->call().Finalized(&finalized);
  if (!finalized) g_library->call().Finalize();
}

template <typename H>
void sum_halves(void* in, void* inout, mpi_abi::Count* length, mpi_abi::Datatype*) {
  sum_into_half<H>(inout, in, inout, static_cast<size_t>(*length));
}

[[noreturn]] void cannot_use(const std::string& path, const std::string& why) {
  throw_error(ErrorCode::kFailedPrecondition, kOp,
              "the MPI engine cannot use '" + path + "': " + why + "; to get it: " + kInstallHint);
}

}  // namespace

MpiLibrary::MpiLibrary(const std::string& path) : path_(path.empty() ? mpi_abi::kLibrarySoname : path) {
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    cannot_use(path_, why ? why : "dlopen failed");
  }
  auto resolve = [&](auto& function, const char* name) {
    void* symbol = dlsym(handle_, name);
    if (!symbol) {
      dlclose(handle_);
      cannot_use(path_, std::string("it has no ") + name + " (not an MPI 5.0 standard-ABI library)");
    }
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
  };
  mpi_abi::Functions& f = functions_;
  resolve(f.Abi_get_version, "MPI_Abi_get_version");
  int major = 0, minor = 0;
  if (f.Abi_get_version(&major, &minor) != mpi_abi::kSuccess || major != mpi_abi::kAbiMajorVersion) {
    dlclose(handle_);
    cannot_use(path_, "it speaks MPI ABI " + std::to_string(major) + "." + std::to_string(minor) +
                          "; gpuaccel expects ABI " + std::to_string(mpi_abi::kAbiMajorVersion) + ".x");
  }
  resolve(f.Get_library_version, "MPI_Get_library_version");
  resolve(f.Initialized, "MPI_Initialized");
  resolve(f.Init_thread, "MPI_Init_thread");
  resolve(f.Finalized, "MPI_Finalized");
  resolve(f.Finalize, "MPI_Finalize");
  resolve(f.Error_string, "MPI_Error_string");
  resolve(f.Comm_dup, "MPI_Comm_dup");
  resolve(f.Comm_free, "MPI_Comm_free");
  resolve(f.Comm_rank, "MPI_Comm_rank");
  resolve(f.Comm_size, "MPI_Comm_size");
  resolve(f.Comm_set_errhandler, "MPI_Comm_set_errhandler");
  resolve(f.Op_create_c, "MPI_Op_create_c");
  resolve(f.Iallreduce_c, "MPI_Iallreduce_c");
  resolve(f.Ibcast_c, "MPI_Ibcast_c");
  resolve(f.Ibarrier, "MPI_Ibarrier");
  resolve(f.Test, "MPI_Test");

  std::string version(mpi_abi::kMaxLibraryVersionString, '\0');
  int length = 0;
  f.Get_library_version(version.data(), &length);
  version.resize(static_cast<size_t>(length));
  version_ = version.substr(0, version.find('\n'));
}

void MpiLibrary::initialize() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (float16_sum_) return;
  const mpi_abi::Functions& f = functions_;
  int initialized = 0;
  f.Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    int code = f.Init_thread(nullptr, nullptr, mpi_abi::kThreadMultiple, &provided);
    if (code != mpi_abi::kSuccess) cannot_use(path_, "MPI_Init_thread failed: " + error_text(code));
    g_initialized_here = true;
    std::atexit(&finalize_at_exit);
    if (provided < mpi_abi::kThreadSerialized)
      cannot_use(path_, "MPI offers thread level " + std::to_string(provided) +
                            "; gpuaccel calls it from a communication thread and needs "
                            "MPI_THREAD_SERIALIZED (" + std::to_string(mpi_abi::kThreadSerialized) +
                            ") or more");
  }
  int code = f.Op_create_c(&sum_halves<Half>, 1, &float16_sum_);
  if (code == mpi_abi::kSuccess) code = f.Op_create_c(&sum_halves<BFloat16>, 1, &bfloat16_sum_);
  if (code != mpi_abi::kSuccess) cannot_use(path_, "MPI_Op_create_c failed: " + error_text(code));
}

MpiLibrary& MpiLibrary::open(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const std::string wanted = path.empty() ? mpi_abi::kLibrarySoname : path;
  if (g_library) {
    if (g_library->path() != wanted)
      throw_value_error(kOp, "this process already uses the MPI library '" + g_library->path() +
                                 "'; it cannot switch to '" + wanted +
                                 "' (MPI is initialized once per process)");
    return *g_library;
  }
  g_library = new MpiLibrary(path);
  return *g_library;
}

std::string MpiLibrary::error_text(int code) const {
  std::string text(mpi_abi::kMaxErrorString, '\0');
  int length = 0;
  if (functions_.Error_string(code, text.data(), &length) != mpi_abi::kSuccess)
    return "MPI error " + std::to_string(code);
  text.resize(static_cast<size_t>(length));
  return text;
}

void MpiLibrary::skip_finalize_at_exit() { g_skip_finalize = true; }

}  // namespace gpuaccel::distribute
