// NCCL communicators (core/cuda_loader/nccl_library.h). libnccl is opened with dlopen the first
// time a
// communicator is asked for, so the backend has no link dependency on it: single-GPU programs
// run where NCCL is not installed, and the error for multi-GPU ones says so. Communicators are
// non-blocking (config.blocking = 0) so that every wait here polls with a deadline and can
// abort the communicator instead of hanging when a peer dies: NCCL itself would wait forever.
//
// Each communicator queues its collectives on a communication stream of its own (not a shared
// per-device one, so aborting a communicator at its deadline strands nothing another
// communicator queued), ordered by an event on the backend's compute stream of its device
// (cudaStreamWaitEvent on the communication stream). A bucket of gradients comes with the event
// its compute thread recorded when the bucket became final (distribute/overlapped_all_reduce.h),
// so the bucket is summed while the backward pass goes on queueing kernels on the compute
// stream, which the collective does not wait for; other calls (broadcast, barrier) record their
// own event behind everything queued so far. Every call still returns only once its collective
// has finished: later compute-stream work (the optimizer update) and the memory pool, which
// orders frees on the compute stream, never race with NCCL.
#include "backends/cuda/nccl_communicator.h"

#if GPUACCEL_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/nccl_wheel_path.h"
#endif

namespace gpuaccel::cuda {
#if GPUACCEL_HAVE_NCCL
namespace {

using Clock = std::chrono::steady_clock;

// The NCCL functions we call, typed from nccl.h so a signature change fails the build.
struct NcclApi {
  void* handle = nullptr;
  std::string load_error;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) comm_init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetLastError) get_last_error = nullptr;
};

template <typename F>
bool bind(void* handle, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(::dlsym(handle, name));
  if (*out == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *out != nullptr;
}

const NcclApi& nccl_api() {
  static NcclApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    // GPUACCEL_NCCL_LIBRARY names a file. Otherwise, as for the other CUDA libraries, wheels
    // first: a libnccl.so.2 already in the process (PyTorch's) is kept, else the nvidia-nccl
    // wheel beside the wheel cuBLASLt came from (nccl_wheel_path.h), else the soname through
    // RPATH, LD_LIBRARY_PATH and ldconfig (the system's libnccl2).
    const char* override_path = std::getenv("GPUACCEL_NCCL_LIBRARY");
    std::vector<std::string> names;
    if (override_path != nullptr && *override_path != '\0') {
      names.push_back(override_path);  // asked for this one only
    } else {
      if (void* loaded = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD)) {
        api.handle = loaded;
      }
      Dl_info cublaslt{};
      if (::dladdr(reinterpret_cast<void*>(&cublasLtCreate), &cublaslt) != 0 && cublaslt.dli_fname != nullptr) {
        for (const std::string& path : nccl_wheel_candidates(cublaslt.dli_fname)) {
          if (::access(path.c_str(), F_OK) == 0) names.push_back(path);
        }
      }
      names.push_back("libnccl.so.2");
      names.push_back("libnccl.so");
    }
    for (const std::string& name : names) {
      if (api.handle != nullptr) break;
      api.handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (api.handle != nullptr) break;
      const char* why = ::dlerror();
      api.load_error += std::string(api.load_error.empty() ? "" : "; ") + (why ? why : name);
    }
    if (api.handle == nullptr) {
      api.load_error = "NCCL (libnccl.so.2) could not be opened: " + api.load_error +
                       ". Install NCCL (the nvidia-nccl-cu12 or -cu13 wheel matching this CUDA, found "
                       "when cuBLAS comes from a wheel too; or apt-get install libnccl2) or set "
                       "GPUACCEL_NCCL_LIBRARY to its file";
      return;
    }
    std::string missing;
    bind(api.handle, "ncclGetVersion", &api.get_version, &missing);
    bind(api.handle, "ncclGetUniqueId", &api.get_unique_id, &missing);
    bind(api.handle, "ncclCommInitRankConfig", &api.comm_init_rank_config, &missing);
    bind(api.handle, "ncclCommGetAsyncError", &api.comm_get_async_error, &missing);
    bind(api.handle, "ncclCommAbort", &api.comm_abort, &missing);
    bind(api.handle, "ncclCommDestroy", &api.comm_destroy, &missing);
    bind(api.handle, "ncclAllReduce", &api.all_reduce, &missing);
    bind(api.handle, "ncclBroadcast", &api.broadcast, &missing);
    bind(api.handle, "ncclGroupStart", &api.group_start, &missing);
    bind(api.handle, "ncclGroupEnd", &api.group_end, &missing);
    bind(api.handle, "ncclGetErrorString", &api.get_error_string, &missing);
    bind(api.handle, "ncclGetLastError", &api.get_last_error, &missing);
    if (!missing.empty()) {
      api.load_error = "the NCCL library that was opened lacks " + missing +
                       " (gpuaccel needs NCCL >= 2.14)";
      ::dlclose(api.handle);
      api.handle = nullptr;
    }
  });
  return api;
}

struct Communicator {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;       // the communication stream
  cudaEvent_t compute_done = nullptr;  // recorded on the compute stream by calls with no event
  int device = 0;
  int rank = 0;
  int world_size = 0;
  bool aborted = false;
  std::string abort_reason;
};

bool nccl_dtype(DType dtype, ncclDataType_t* out) {
  switch (dtype) {
    case DType::kFloat32: *out = ncclFloat32; return true;
    case DType::kFloat64: *out = ncclFloat64; return true;
    case DType::kFloat16: *out = ncclFloat16; return true;
    case DType::kBFloat16: *out = ncclBfloat16; return true;
    case DType::kInt32: *out = ncclInt32; return true;
    case DType::kInt64: *out = ncclInt64; return true;
    case DType::kUInt8: *out = ncclUint8; return true;
    case DType::kInt8: *out = ncclInt8; return true;
    default: return false;
  }
}

class NcclLibraryImpl final : public NcclLibrary {
 public:
  int version(std::string* error) override {
    const NcclApi& api = nccl_api();
    if (api.handle == nullptr) {
      if (error) *error = api.load_error;
      return 0;
    }
    int code = 0;
    if (api.get_version(&code) != ncclSuccess) code = 0;
    return code;
  }

  NcclStatus unique_id(std::string* id, std::string* error) override {
    return protect(error, [&] {
      const NcclApi& api = nccl_api();
      if (api.handle == nullptr) return fail(NcclStatus::kNotInstalled, api.load_error, error);
      ncclUniqueId raw;
      ncclResult_t result = api.get_unique_id(&raw);
      if (result != ncclSuccess) return fail(NcclStatus::kError, "ncclGetUniqueId failed: " + text(result), error);
      id->assign(raw.internal, sizeof(raw.internal));
      return NcclStatus::kOk;
    });
  }

  NcclStatus init_rank(int device, int world_size, int rank, const std::string& id,
                       int64_t timeout_ms, void** communicator, std::string* error) override {
    *communicator = nullptr;
    return protect(error, [&] { return init_rank_unprotected(device, world_size, rank, id, timeout_ms, communicator, error); });
  }

  NcclStatus all_reduce_sum(void* communicator, const NcclBuffer* buffers, size_t count,
                            void* ready_event, int64_t timeout_ms, std::string* error) override {
    return protect(error, [&] {
      return run_group(communicator, buffers, count, "all_reduce_sum", ready_event, timeout_ms, error,
                       [&](Communicator& c, const NcclBuffer& b, ncclDataType_t type, cudaStream_t stream) {
                         return nccl_api().all_reduce(b.data, b.data, b.count, type, ncclSum, c.comm, stream);
                       });
    });
  }

  NcclStatus broadcast(void* communicator, const NcclBuffer* buffers, size_t count, int root,
                       int64_t timeout_ms, std::string* error) override {
    return protect(error, [&] {
      return run_group(communicator, buffers, count, "broadcast", /*ready_event=*/nullptr, timeout_ms, error,
                       [&](Communicator& c, const NcclBuffer& b, ncclDataType_t type, cudaStream_t stream) {
                         return nccl_api().broadcast(b.data, b.data, b.count, type, root, c.comm, stream);
                       });
    });
  }

  void destroy(void* communicator) override {
    auto* c = static_cast<Communicator*>(communicator);
    if (c == nullptr) return;
    // An aborted communicator is already freed; a healthy one is destroyed after its work.
    if (c->comm != nullptr && !c->aborted) {
      std::string ignored;
      protect(&ignored, [&] {
        DeviceGuard guard(c->device);
        nccl_api().comm_destroy(c->comm);
        return NcclStatus::kOk;
      });
    }
    release_stream(*c);
    delete c;
  }

 private:
  // Nothing thrown inside the library (a failed cudaSetDevice in DeviceGuard, bad_alloc) may
  // cross the boundary: it becomes kError with its message.
  template <typename Body>
  static NcclStatus protect(std::string* error, Body&& body) noexcept {
    try {
      return body();
    } catch (const std::exception& e) {
      return fail(NcclStatus::kError, std::string("[NCCL] ") + e.what(), error);
    } catch (...) {
      return fail(NcclStatus::kError, "[NCCL] unknown error", error);
    }
  }

  NcclStatus init_rank_unprotected(int device, int world_size, int rank, const std::string& id,
                                   int64_t timeout_ms, void** communicator, std::string* error) {
    const NcclApi& api = nccl_api();
    if (api.handle == nullptr) return fail(NcclStatus::kNotInstalled, api.load_error, error);
    ncclUniqueId raw;
    if (id.size() != sizeof(raw.internal))
      return fail(NcclStatus::kInvalidArgument, "the NCCL id has " + std::to_string(id.size()) +
                                                    " bytes; expected " + std::to_string(sizeof(raw.internal)), error);
    std::memcpy(raw.internal, id.data(), sizeof(raw.internal));
    auto owned = std::make_unique<Communicator>();
    owned->device = device;
    owned->rank = rank;
    owned->world_size = world_size;
    try {
      DeviceGuard guard(device);
      GA_CUDA_CHECK(cudaStreamCreateWithFlags(&owned->stream, cudaStreamNonBlocking));
      GA_CUDA_CHECK(cudaEventCreateWithFlags(&owned->compute_done, cudaEventDisableTiming));
    } catch (...) {
      release_stream(*owned);
      throw;
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t result;
    {
      DeviceGuard guard(device);
      result = api.comm_init_rank_config(&owned->comm, world_size, raw, rank, &config);
    }
    if (result != ncclSuccess && result != ncclInProgress) {
      if (owned->comm) api.comm_abort(owned->comm);
      release_stream(*owned);
      return fail(status_for(result), "ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " +
                                          std::to_string(world_size) + ") failed: " + text(result), error);
    }
    NcclStatus status = wait_for_comm(*owned, "joining the communicator", timeout_ms, error);
    if (status != NcclStatus::kOk) {
      release_stream(*owned);
      return status;
    }
    *communicator = owned.release();
    return NcclStatus::kOk;
  }

  static std::string text(ncclResult_t result) {
    const NcclApi& api = nccl_api();
    return api.get_error_string ? api.get_error_string(result) : std::to_string(static_cast<int>(result));
  }

  static NcclStatus status_for(ncclResult_t result) {
    switch (result) {
      case ncclInvalidArgument: case ncclInvalidUsage: return NcclStatus::kInvalidArgument;
      case ncclRemoteError: case ncclSystemError: return NcclStatus::kUnavailable;
      default: return NcclStatus::kError;
    }
  }

  static NcclStatus fail(NcclStatus status, const std::string& message, std::string* error) {
    if (error) *error = message;
    return status;
  }

  // Frees the communication stream and its event (after the communicator is gone: nothing
  // more is queued on the stream). Errors are ignored: nothing can be done about them here.
  static void release_stream(Communicator& c) noexcept {
    try {
      DeviceGuard guard(c.device);
      if (c.stream != nullptr) (void)cudaStreamDestroy(c.stream);
      if (c.compute_done != nullptr) (void)cudaEventDestroy(c.compute_done);
      (void)cudaGetLastError();
    } catch (...) {  // the device cannot be selected: the process is losing its GPU anyway
    }
    c.stream = nullptr;
    c.compute_done = nullptr;
  }

  // Aborts the communicator (freeing it) so no later call waits on it.
  static NcclStatus abort(Communicator& c, const std::string& reason, std::string* error) {
    if (!c.aborted) {
      DeviceGuard guard(c.device);
      nccl_api().comm_abort(c.comm);
      c.aborted = true;
      c.abort_reason = reason;
    }
    return fail(NcclStatus::kUnavailable, reason, error);
  }

  // Polls the communicator's state (and, once it is ready, the stream when `stream` is set)
  // until done, failed, or the deadline.
  static NcclStatus wait_for_comm(Communicator& c, const std::string& what, int64_t timeout_ms,
                                  std::string* error, cudaStream_t stream = nullptr) {
    const NcclApi& api = nccl_api();
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string where = "rank " + std::to_string(c.rank) + " of " + std::to_string(c.world_size) +
                        " on GPU:" + std::to_string(c.device);
    while (true) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t result = api.comm_get_async_error(c.comm, &state);
      if (result != ncclSuccess) state = result;
      if (state != ncclSuccess && state != ncclInProgress) {
        std::string detail = api.get_last_error ? api.get_last_error(c.comm) : "";
        return abort(c, "[NCCL] " + where + ": " + what + " failed: " + text(state) +
                            (detail.empty() ? "" : " (" + detail + ")") + "; a peer may have died",
                     error);
      }
      if (state == ncclSuccess) {
        if (stream == nullptr) return NcclStatus::kOk;
        cudaError_t done = cudaStreamQuery(stream);
        if (done == cudaSuccess) return NcclStatus::kOk;
        if (done != cudaErrorNotReady) {
          (void)cudaGetLastError();
          return fail(NcclStatus::kError, "[NCCL] " + where + ": " + what + ": " + cudaGetErrorString(done), error);
        }
      }
      if (Clock::now() >= deadline)
        return abort(c, "[NCCL] " + where + ": " + what + " did not finish within the timeout of " +
                            std::to_string(timeout_ms) + " ms: a peer died, never arrived, or stopped answering",
                     error);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  template <typename Enqueue>
  static NcclStatus run_group(void* communicator, const NcclBuffer* buffers, size_t count,
                              const char* what, void* ready_event, int64_t timeout_ms, std::string* error,
                              Enqueue&& enqueue) {
    // Every dtype is checked before the group starts: a group left after some of its collectives
    // were enqueued would have to be ended and, on a non-blocking communicator, polled until
    // it is no longer ncclInProgress before anything else may use the communicator (NCCL's
    // "Non-blocking group operation"); refused up front, nothing reaches NCCL at all.
    std::vector<ncclDataType_t> types(count);
    for (size_t i = 0; i < count; ++i) {
      if (!nccl_dtype(buffers[i].dtype, &types[i])) {
        return fail(NcclStatus::kInvalidArgument, std::string("NCCL cannot ") + what + " tensors of dtype " +
                                                      dtype_name(buffers[i].dtype) +
                                                      " (float32, float16, bfloat16, int32, int64 or uint8 can)",
                    error);
      }
    }
    auto* c = static_cast<Communicator*>(communicator);
    if (c == nullptr) return fail(NcclStatus::kInvalidArgument, "null NCCL communicator", error);
    if (c->aborted) return fail(NcclStatus::kUnavailable, c->abort_reason, error);
    const NcclApi& api = nccl_api();
    DeviceGuard guard(c->device);
    // After the compute stream's work that made the buffers: up to the caller's event, or
    // everything queued so far when there is none.
    cudaStream_t stream = c->stream;
    cudaEvent_t ready = static_cast<cudaEvent_t>(ready_event);
    if (ready == nullptr) {
      ready = c->compute_done;
      GA_CUDA_CHECK(cudaEventRecord(ready, device_stream(c->device)));
    }
    GA_CUDA_CHECK(cudaStreamWaitEvent(stream, ready, 0));
    ncclResult_t result = api.group_start();
    for (size_t i = 0; i < count && (result == ncclSuccess || result == ncclInProgress); ++i) {
      if (buffers[i].count == 0) continue;
      result = enqueue(*c, buffers[i], types[i], stream);
    }
    ncclResult_t end = api.group_end();
    if (result == ncclSuccess || result == ncclInProgress) result = end;
    if (result != ncclSuccess && result != ncclInProgress)
      return abort(*c, std::string("[NCCL] ") + what + " failed: " + text(result), error);
    return wait_for_comm(*c, what, timeout_ms, error, stream);
  }
};

}  // namespace

NcclLibrary* nccl_library() {
  static NcclLibraryImpl library;
  return &library;
}

#else  // built without nccl.h: no NCCL communicators

NcclLibrary* nccl_library() { return nullptr; }

#endif

}  // namespace gpuaccel::cuda
