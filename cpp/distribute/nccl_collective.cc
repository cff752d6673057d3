// NcclCollective (see nccl_collective.h): checks tensors and translates NcclStatus into the
// core's errors; the NCCL calls themselves live in the CUDA library.
#include "distribute/nccl_collective.h"

#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/cuda_loader/cuda_library.h"
#include "core/errors.h"
#include "core/cuda_loader/nccl_library.h"
#include "distribute/tcp_store.h"

namespace gpuaccel::distribute {
namespace {

constexpr const char* kUniqueIdKey = "gpuaccel/nccl_unique_id";

NcclLibrary& require_nccl(const char* op) {
  NcclLibrary* nccl = require_cuda_library(op).nccl();
  if (nccl == nullptr)
    throw_error(ErrorCode::kFailedPrecondition, op,
                "the CUDA backend library was built without NCCL (nccl.h was not found); "
                "rebuild it with NCCL installed (GPUACCEL_NCCL_ROOT names its folder)");
  return *nccl;
}

void check(NcclStatus status, const char* op, const std::string& message) {
  switch (status) {
    case NcclStatus::kOk: return;
    case NcclStatus::kUnavailable: throw PeerUnavailableError("[" + std::string(op) + "] " + message);
    case NcclStatus::kInvalidArgument: throw_error(ErrorCode::kInvalidArgument, op, message);
    case NcclStatus::kNotInstalled: throw_error(ErrorCode::kFailedPrecondition, op, message);
    case NcclStatus::kError: throw_error(ErrorCode::kInternal, op, message);
  }
  throw_error(ErrorCode::kInternal, op, message);
}

class NcclCollective : public Collective {
 public:
  NcclCollective(NcclLibrary& nccl, const LogicalDevice& device, int rank, int world_size,
                 const std::string& unique_id, std::chrono::milliseconds timeout)
      : nccl_(nccl), device_(device), rank_(rank), world_size_(world_size), timeout_(timeout) {
    std::string error;
    check(nccl_.init_rank(device_.physical_index, world_size_, rank_, unique_id, timeout_.count(),
                          &communicator_, &error),
          "nccl_collective", error);
    // The barrier's token: all-reduced like a gradient, so it waits for every rank.
    barrier_token_ = Tensor::empty(Shape{1}, DType::kInt32, device_, "barrier");
  }
  ~NcclCollective() override { nccl_.destroy(communicator_); }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string engine() const override { return "nccl"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  void all_reduce_sum(const std::vector<Tensor>& tensors) override { all_reduce_sum_after(tensors, nullptr); }

  void all_reduce_sum_after(const std::vector<Tensor>& tensors, Backend::EventHandle ready) override {
    std::vector<NcclBuffer> buffers = buffers_of("all_reduce_sum", tensors);
    std::string error;
    check(nccl_.all_reduce_sum(communicator_, buffers.data(), buffers.size(), ready, timeout_.count(), &error),
          "all_reduce_sum", error);
  }

  void broadcast(const std::vector<Tensor>& tensors, int root) override {
    if (root < 0 || root >= world_size_)
      throw_error(ErrorCode::kInvalidArgument, "broadcast",
                  "root " + std::to_string(root) + " is not a rank; expected 0.." +
                      std::to_string(world_size_ - 1));
    std::vector<NcclBuffer> buffers = buffers_of("broadcast", tensors);
    std::string error;
    check(nccl_.broadcast(communicator_, buffers.data(), buffers.size(), root, timeout_.count(), &error),
          "broadcast", error);
  }

  void barrier() override { all_reduce_sum({barrier_token_}); }

 private:
  std::vector<NcclBuffer> buffers_of(const char* op, const std::vector<Tensor>& tensors) const {
    std::vector<NcclBuffer> buffers;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      if (t.device().type != DeviceType::kGPU || t.device().physical_index != device_.physical_index)
        throw_error(ErrorCode::kInvalidArgument, op,
                    "tensor " + std::to_string(i) + " is on " + t.device().name() +
                        "; this NCCL rank's tensors live on " + device_.name());
      if (!t.is_contiguous())
        throw_error(ErrorCode::kInvalidArgument, op,
                    "tensor " + std::to_string(i) + " is not contiguous; expected contiguous tensors");
      buffers.push_back({t.data(), static_cast<size_t>(t.numel()), t.dtype()});
    }
    return buffers;
  }

  NcclLibrary& nccl_;
  LogicalDevice device_;
  int rank_;
  int world_size_;
  std::chrono::milliseconds timeout_;
  void* communicator_ = nullptr;
  Tensor barrier_token_;
};

void check_device(const LogicalDevice& device, int rank, int world_size, std::chrono::milliseconds timeout) {
  if (device.type != DeviceType::kGPU)
    throw_error(ErrorCode::kInvalidArgument, "nccl_collective",
                "device " + device.name() + " is not a GPU; NCCL runs on GPUs (Gloo on CPUs)");
  if (world_size < 1 || rank < 0 || rank >= world_size)
    throw_value_error("nccl_collective", "rank " + std::to_string(rank) + " of world size " +
                                             std::to_string(world_size) +
                                             " is not valid; expected 0 <= rank < world_size");
  if (timeout.count() <= 0) throw_value_error("nccl_collective", "the timeout must be > 0");
}

}  // namespace

std::string nccl_unique_id() {
  NcclLibrary& nccl = require_nccl("nccl_unique_id");
  std::string id, error;
  check(nccl.unique_id(&id, &error), "nccl_unique_id", error);
  return id;
}

std::unique_ptr<Collective> make_nccl_collective(const LogicalDevice& device, int rank,
                                                 int world_size, const std::string& unique_id,
                                                 std::chrono::milliseconds timeout) {
  check_device(device, rank, world_size, timeout);
  return std::make_unique<NcclCollective>(require_nccl("nccl_collective"), device, rank,
                                          world_size, unique_id, timeout);
}

std::unique_ptr<Collective> make_nccl_collective(const ClusterSpec& spec,
                                                 const LogicalDevice& device,
                                                 std::chrono::milliseconds timeout) {
  check_device(device, spec.rank, spec.world_size, timeout);
  if (spec.world_size == 1) return make_nccl_collective(device, 0, 1, nccl_unique_id(), timeout);
  require_coordinator(spec, "NCCL");
  HostPort coordinator = parse_host_port("coordinator", spec.coordinator);
  TcpStore store(coordinator.host, coordinator.port, spec.rank == 0, timeout);
  std::string id;
  if (spec.rank == 0) {
    id = nccl_unique_id();
    store.set(kUniqueIdKey, std::vector<char>(id.begin(), id.end()));
  } else {
    std::vector<char> bytes = store.get(kUniqueIdKey);
    id.assign(bytes.begin(), bytes.end());
  }
  auto collective = make_nccl_collective(device, spec.rank, spec.world_size, id, timeout);
  // Rank 0's store must outlive every rank's read of the id: the communicator's init above
  // returns only once all ranks joined, and they read the id before joining.
  return collective;
}

}  // namespace gpuaccel::distribute
