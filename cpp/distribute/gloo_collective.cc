// GlooCollective (see gloo_collective.h). Gloo does the communication; this file adapts our
// tensors and rendezvous to it and turns Gloo's exceptions into PeerUnavailableError.
#include "distribute/gloo_collective.h"

#include <cstdlib>
#include <string>

#include "core/errors.h"

#if GPUACCEL_WITH_GLOO
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include "core/dtype.h"
#include "distribute/cpu_collective_buffers.h"
#include "distribute/elementwise_sum.h"
#include "distribute/tcp_store.h"
#include "kernels/half_conversions.h"
#endif

namespace gpuaccel::distribute {

#if GPUACCEL_WITH_GLOO

namespace {

std::string milliseconds_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

// Gloo's rendezvous speaks to a gloo::rendezvous::Store; ours is the TcpStore.
class TcpStoreForGloo : public gloo::rendezvous::Store {
 public:
  explicit TcpStoreForGloo(TcpStore& store) : store_(store) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(key); }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  TcpStore& store_;
};

gloo::AllreduceOptions::Func sum_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return &sum_into<float>;
    case DType::kFloat64: return &sum_into<double>;
    case DType::kFloat16: return &sum_into_half<Half>;
    case DType::kBFloat16: return &sum_into_half<BFloat16>;
    case DType::kInt32: return &sum_into<int32_t>;
    case DType::kInt64: return &sum_into<int64_t>;
    default: return nullptr;
  }
}

class GlooCollective : public Collective {
 public:
  GlooCollective(const ClusterSpec& spec, std::chrono::milliseconds timeout)
      : rank_(spec.rank), world_size_(spec.world_size), timeout_(timeout) {
    auto context = std::make_shared<gloo::rendezvous::Context>(rank_, world_size_);
    context->setTimeout(timeout_);
    gloo::transport::tcp::attr attr;
    // GLOO_SOCKET_IFNAME (PyTorch's name) picks the network interface, for machines whose
    // hostname resolves to a loopback address; else this task's host from TF_CONFIG; else
    // (mpirun) Gloo resolves the machine's hostname.
    const char* interface_name = std::getenv("GLOO_SOCKET_IFNAME");
    if (interface_name && *interface_name) attr.iface = interface_name;
    else attr.hostname = spec.local_host;
    std::shared_ptr<gloo::transport::Device> device;
    try {
      device = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {  // Gloo's enforce failures are not gloo::Exception
      std::string where = !attr.iface.empty() ? "network interface GLOO_SOCKET_IFNAME='" + attr.iface + "'"
                          : !attr.hostname.empty() ? "host '" + attr.hostname + "' (this task's TF_CONFIG address)"
                                                   : "this machine's hostname";
      throw_value_error("MultiWorkerMirroredStrategy",
                        "Gloo cannot listen on " + where + " (" + e.what() +
                            "); expected an address or interface of this machine");
    }
    guarded("rendezvous", [&] {
      if (world_size_ == 1) {
        gloo::rendezvous::HashStore store;
        context->connectFullMesh(store, device);
      } else {
        HostPort coordinator = parse_host_port("coordinator", spec.coordinator);
        store_ = std::make_unique<TcpStore>(coordinator.host, coordinator.port, rank_ == 0, timeout_);
        TcpStoreForGloo store(*store_);
        context->connectFullMesh(store, device);
      }
    });
    context_ = std::move(context);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string engine() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  void all_reduce_sum(const std::vector<Tensor>& tensors) override {
    check_cpu_tensors("all_reduce_sum", tensors, "Gloo");
    // One Gloo all-reduce per dtype (cpu_collective_buffers.h).
    for (const DtypeGroup& group : group_by_dtype(tensors)) {
      if (!sum_for(group.dtype))
        throw_error(ErrorCode::kInvalidArgument, "all_reduce_sum",
                    std::string("tensors of dtype ") + dtype_name(group.dtype) +
                        " cannot be summed; expected float32, float64, float16, bfloat16, int32 or int64");
      if (group.bytes == 0) continue;
      const size_t bytes = group.bytes;
      const size_t element_size = dtype_size(group.dtype);
      char* data;
      if (group.tensors.size() == 1) {
        data = static_cast<char*>(group.tensors[0]->data());
      } else {
        scratch_.resize(bytes);
        data = scratch_.data();
        pack(group, data);
      }
      guarded("all_reduce_sum", [&] {
        gloo::AllreduceOptions options(context_);
        options.setTimeout(timeout_);
        options.setTag(next_tag());
        options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
        // The element type only sets the element size; the sum function knows the dtype.
        if (element_size == 2) options.setOutput(reinterpret_cast<uint16_t*>(data), bytes / 2);
        else if (element_size == 4) options.setOutput(reinterpret_cast<uint32_t*>(data), bytes / 4);
        else options.setOutput(reinterpret_cast<uint64_t*>(data), bytes / 8);
        options.setReduceFunction(sum_for(group.dtype));
        gloo::allreduce(options);
      });
      if (group.tensors.size() > 1) unpack(group, data);
    }
  }

  void broadcast(const std::vector<Tensor>& tensors, int root) override {
    if (root < 0 || root >= world_size_)
      throw_error(ErrorCode::kInvalidArgument, "broadcast",
                  "root " + std::to_string(root) + " is not a rank; expected 0.." +
                      std::to_string(world_size_ - 1));
    check_cpu_tensors("broadcast", tensors, "Gloo");
    for (const Tensor& t : tensors) {
      size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
      if (bytes == 0) continue;
      guarded("broadcast", [&] {
        gloo::BroadcastOptions options(context_);
        options.setTimeout(timeout_);
        options.setTag(next_tag());
        options.setRoot(root);
        options.setOutput(static_cast<char*>(t.data()), bytes);
        gloo::broadcast(options);
      });
    }
  }

  void barrier() override {
    guarded("barrier", [&] {
      gloo::BarrierOptions options(context_);
      options.setTimeout(timeout_);
      options.setTag(next_tag());
      gloo::barrier(options);
    });
  }

 private:
  uint32_t next_tag() { return next_tag_++; }

  // Runs one Gloo call; a Gloo error (peer gone, timeout) becomes PeerUnavailableError and
  // leaves the collective broken, since Gloo's pairs cannot be reused after one.
  template <typename F>
  void guarded(const char* what, F&& call) {
    if (!broken_.empty()) throw PeerUnavailableError(broken_);
    try {
      call();
    } catch (const gloo::Exception& e) {
      broken_ = std::string("[") + what + "] rank " + std::to_string(rank_) + " of " +
                std::to_string(world_size_) + ": a peer died or did not answer within the timeout of " +
                milliseconds_text(timeout_) + " (Gloo: " + e.what() + ")";
      throw PeerUnavailableError(broken_);
    } catch (const PeerUnavailableError& e) {
      broken_ = std::string(e.what()) + " [rank " + std::to_string(rank_) + " of " +
                std::to_string(world_size_) + "]";
      throw PeerUnavailableError(broken_);
    }
  }

  int rank_;
  int world_size_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<TcpStore> store_;  // rank 0 serves the rendezvous for as long as it lives
  std::shared_ptr<gloo::rendezvous::Context> context_;
  uint32_t next_tag_ = 0;
  std::string broken_;
  std::vector<char> scratch_;
};

}  // namespace

bool gloo_available() { return true; }

std::unique_ptr<Collective> make_gloo_collective(const ClusterSpec& spec,
                                                 std::chrono::milliseconds timeout) {
  if (spec.world_size < 1 || spec.rank < 0 || spec.rank >= spec.world_size)
    throw_value_error("make_gloo_collective", "rank " + std::to_string(spec.rank) + " of world size " +
                                                  std::to_string(spec.world_size) +
                                                  " is not valid; expected 0 <= rank < world_size");
  if (timeout.count() <= 0)
    throw_value_error("make_gloo_collective", "timeout " + milliseconds_text(timeout) + " must be > 0");
  require_coordinator(spec, "Gloo");
  if (spec.world_size > 1 && spec.coordinator.empty())
    throw_value_error("make_gloo_collective", "a job of " + std::to_string(spec.world_size) +
                                                  " ranks needs the coordinator's \"host:port\"");
  return std::make_unique<GlooCollective>(spec, timeout);
}

#else  // no Gloo in this build

bool gloo_available() { return false; }

std::unique_ptr<Collective> make_gloo_collective(const ClusterSpec&, std::chrono::milliseconds) {
  throw_error(ErrorCode::kFailedPrecondition, "MultiWorkerMirroredStrategy",
              "this build of gpuaccel has no Gloo, the engine that connects several workers; "
              "install it (apt-get install libgloo-dev) and rebuild gpuaccel (pip install . or "
              "cmake with -DGPUACCEL_GLOO=ON)");
}

#endif

}  // namespace gpuaccel::distribute
