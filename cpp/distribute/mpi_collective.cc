// MpiCollective (see mpi_collective.h). MPI does the communication; this file adapts our tensors
// to it and bounds every call by the timeout, which MPI's blocking calls do not have: each
// operation is MPI's nonblocking form, polled with MPI_Test until it completes or the deadline
// passes. The bytes MPI works on are always the collective's own buffer, so a timed-out
// operation that MPI still holds never writes into a tensor freed since.
#include "distribute/mpi_collective.h"

#include <mutex>
#include <thread>

#include "core/errors.h"
#include "distribute/cpu_collective_buffers.h"
#include "distribute/mpi_library.h"

namespace gpuaccel::distribute {

namespace {

using mpi_abi::handle;

constexpr const char* kOp = "MultiWorkerMirroredStrategy";

std::string milliseconds_text(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

class MpiCollective : public Collective {
 public:
  MpiCollective(MpiLibrary& mpi, std::chrono::milliseconds timeout) : mpi_(mpi), timeout_(timeout) {
    const mpi_abi::Functions& f = mpi_.call();
    checked("join", f.Comm_dup(handle<mpi_abi::Comm>(mpi_abi::kCommWorld), &comm_));
    // Errors come back as codes (PeerUnavailableError), instead of MPI aborting the process.
    checked("join", f.Comm_set_errhandler(comm_, handle<mpi_abi::Errhandler>(mpi_abi::kErrorsReturn)));
    checked("join", f.Comm_rank(comm_, &rank_));
    checked("join", f.Comm_size(comm_, &world_size_));
  }

  ~MpiCollective() override {
    int finalized = 0;
    mpi_.call().Finalized(&finalized);
    if (broken_.empty() && !finalized && comm_) mpi_.call().Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string engine() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  void all_reduce_sum(const std::vector<Tensor>& tensors) override {
    check_cpu_tensors("all_reduce_sum", tensors, "MPI");
    std::lock_guard<std::mutex> lock(mutex_);
    for (const DtypeGroup& group : group_by_dtype(tensors)) {
      mpi_abi::Datatype datatype;
      mpi_abi::Op op = handle<mpi_abi::Op>(mpi_abi::kOpSum);
      switch (group.dtype) {
        case DType::kFloat32: datatype = handle<mpi_abi::Datatype>(mpi_abi::kFloat); break;
        case DType::kFloat64: datatype = handle<mpi_abi::Datatype>(mpi_abi::kDouble); break;
        case DType::kInt32: datatype = handle<mpi_abi::Datatype>(mpi_abi::kInt32); break;
        case DType::kInt64: datatype = handle<mpi_abi::Datatype>(mpi_abi::kInt64); break;
        case DType::kFloat16:
        case DType::kBFloat16:
          datatype = handle<mpi_abi::Datatype>(mpi_abi::kUint16);
          op = group.dtype == DType::kFloat16 ? mpi_.float16_sum() : mpi_.bfloat16_sum();
          break;
        default:
          throw_error(ErrorCode::kInvalidArgument, "all_reduce_sum",
                      std::string("tensors of dtype ") + dtype_name(group.dtype) +
                          " cannot be summed; expected float32, float64, float16, bfloat16, int32 or int64");
      }
      if (group.bytes == 0) continue;
      char* buffer = staging(group.bytes);
      pack(group, buffer);
      const auto count = static_cast<mpi_abi::Count>(group.bytes / dtype_size(group.dtype));
      run("all_reduce_sum", [&](mpi_abi::Request* request) {
        return mpi_.call().Iallreduce_c(reinterpret_cast<const void*>(mpi_abi::kInPlace), buffer, count,
                                        datatype, op, comm_, request);
      });
      unpack(group, buffer);
    }
  }

  void broadcast(const std::vector<Tensor>& tensors, int root) override {
    if (root < 0 || root >= world_size_)
      throw_error(ErrorCode::kInvalidArgument, "broadcast",
                  "root " + std::to_string(root) + " is not a rank; expected 0.." +
                      std::to_string(world_size_ - 1));
    check_cpu_tensors("broadcast", tensors, "MPI");
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Tensor& t : tensors) {
      size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
      if (bytes == 0) continue;
      DtypeGroup one{t.dtype(), {&t}, bytes};
      char* buffer = staging(bytes);
      pack(one, buffer);
      run("broadcast", [&](mpi_abi::Request* request) {
        return mpi_.call().Ibcast_c(buffer, static_cast<mpi_abi::Count>(bytes),
                                    handle<mpi_abi::Datatype>(mpi_abi::kByte), root, comm_, request);
      });
      unpack(one, buffer);
    }
  }

  void barrier() override {
    std::lock_guard<std::mutex> lock(mutex_);
    run("barrier", [&](mpi_abi::Request* request) { return mpi_.call().Ibarrier(comm_, request); });
  }

 private:
  char* staging(size_t bytes) {
    if (!staging_ || staging_->size() < bytes) staging_ = std::make_unique<std::vector<char>>(bytes);
    return staging_->data();
  }

  void checked(const char* what, int code) {
    if (code != mpi_abi::kSuccess)
      throw_error(ErrorCode::kFailedPrecondition, kOp,
                  std::string("MPI failed to ") + what + " (" + mpi_.path() + "): " +
                      mpi_.error_text(code));
  }

  // Starts one nonblocking operation and polls it to completion, up to the timeout. Past it, or
  // on an MPI error, the collective is broken: the request (and its buffer) are abandoned, since
  // MPI cannot cancel a collective, and every later call throws the same error at once.
  template <typename Start>
  void run(const char* what, Start&& start) {
    if (!broken_.empty()) throw PeerUnavailableError(broken_);
    const mpi_abi::Functions& f = mpi_.call();
    mpi_abi::Request request = nullptr;
    int code = start(&request);
    int done = 0;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (int polls = 0; code == mpi_abi::kSuccess; ++polls) {
      code = f.Test(&request, &done, nullptr);
      if (code != mpi_abi::kSuccess || done) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        fail(what, "a peer did not answer within the timeout of " + milliseconds_text(timeout_));
      }
      // Spin briefly (a step's all-reduce usually completes within microseconds of the last
      // peer's arrival), then poll without holding a core.
      if (polls < 2000) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (code != mpi_abi::kSuccess) fail(what, "a peer failed (MPI: " + mpi_.error_text(code) + ")");
  }

  [[noreturn]] void fail(const char* what, const std::string& why) {
    broken_ = std::string("[") + what + "] rank " + std::to_string(rank_) + " of " +
              std::to_string(world_size_) + ": " + why + " (MPI engine, " + mpi_.version() + ")";
    staging_.release();  // MPI may still write into it: never freed
    mpi_.skip_finalize_at_exit();
    throw PeerUnavailableError(broken_);
  }

  MpiLibrary& mpi_;
  std::chrono::milliseconds timeout_;
  mpi_abi::Comm comm_ = nullptr;
  int rank_ = 0;
  int world_size_ = 1;
  std::mutex mutex_;  // one operation at a time: MPI matches collectives by call order
  std::unique_ptr<std::vector<char>> staging_;
  std::string broken_;
};

}  // namespace

std::unique_ptr<Collective> make_mpi_collective(const std::string& library_path, const ClusterSpec& spec,
                                                std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0)
    throw_value_error("make_mpi_collective", "timeout " + milliseconds_text(timeout) + " must be > 0");
  if (spec.source == "TF_CONFIG")
    throw_value_error(kOp, "TF_CONFIG describes " + std::to_string(spec.world_size) +
                               " workers started one by one, which the MPI engine cannot join; start "
                               "them with MPI's launcher instead, without TF_CONFIG: mpiexec -n " +
                               std::to_string(spec.world_size) + " python train.py");
  MpiLibrary& mpi = MpiLibrary::open(library_path);
  if (spec.source == "mpirun (OpenMPI)" && mpi.version().rfind("MPICH", 0) == 0)
    throw_value_error(kOp, "Open MPI's mpirun started this process, but the MPI library is " +
                               mpi.version() + " (" + mpi.path() + "), which cannot join Open MPI's "
                               "ranks: start the workers with MPICH's mpiexec (pip's mpich puts it "
                               "in the environment's bin/)");
  mpi.initialize();
  auto collective = std::make_unique<MpiCollective>(mpi, timeout);
  if (spec.world_size > 1 &&
      (collective->world_size() != spec.world_size || collective->rank() != spec.rank))
    throw_value_error(kOp, spec.source + " started this process as rank " + std::to_string(spec.rank) +
                               " of " + std::to_string(spec.world_size) + ", but " + mpi.version() +
                               " (" + mpi.path() + ") sees rank " + std::to_string(collective->rank()) +
                               " of " + std::to_string(collective->world_size()) +
                               ": start the workers with the mpiexec of that MPI (pip's mpich puts "
                               "it in the environment's bin/)");
  return collective;
}

}  // namespace gpuaccel::distribute
