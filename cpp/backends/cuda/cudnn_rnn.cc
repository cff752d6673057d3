// The fused recurrent layer on the GPU (Backend::rnn_forward/rnn_backward, backends/
// rnn_params.h): cuDNN's RNN API (cudnnRNNForward, cudnnRNNBackwardData_v8,
// cudnnRNNBackwardWeights_v8), one layer, one direction, float32 with FMA math (no TF32, as the
// convolutions: results match the CPU's). x and y are batch-major unpacked RNN data (Keras's
// (batch, time, features), every sequence of full length); the states (batch, units) are cuDNN's
// (1, batch, units). Per shape, a plan (descriptors, weight-space offsets, workspace and reserve
// sizes, the device array of sequence lengths) is made once and cached. Keras's weights are
// copied into a zeroed cuDNN weight space from the pool at each call, and the weight gradients
// back (rnn_weight_layout.h says where each block goes); the reserve space is the frontend's
// workspace tensor, kept from the forward to the backward.
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_descriptor.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/plan_cache.h"
#include "backends/cuda/rnn_weight_layout.h"

namespace gpuaccel::cuda {

#if GPUACCEL_HAVE_CUDNN

namespace {

struct RnnPlanKey {
  int device = 0;
  RnnCell cell = RnnCell::kLstm;
  int64_t batch = 0, time = 0, input = 0, units = 0;

  bool operator==(const RnnPlanKey& o) const {
    return device == o.device && cell == o.cell && batch == o.batch && time == o.time &&
           input == o.input && units == o.units;
  }
  size_t hash() const {
    size_t h = 0;
    for (int64_t v : {int64_t(device), int64_t(cell), batch, time, input, units}) {
      hash_combine(h, static_cast<uint64_t>(v));
    }
    return h;
  }
  std::string to_string() const {
    return "GPU " + std::to_string(device) + " " + rnn_cell_name(cell) + " batch " +
           std::to_string(batch) + " time " + std::to_string(time) + " input " +
           std::to_string(input) + " units " + std::to_string(units);
  }
};

using RnnDesc = CudnnDescriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor,
                                cudnnDestroyRNNDescriptor>;
using RnnDataDesc = CudnnDescriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor,
                                    cudnnDestroyRNNDataDescriptor>;
using StateDesc = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                  cudnnDestroyTensorDescriptor>;
using DropoutDesc = CudnnDescriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor,
                                    cudnnDestroyDropoutDescriptor>;

// A device allocation from the pool held for a plan's life.
class PlanBuffer {
 public:
  PlanBuffer(int device, size_t bytes)
      : services_(&device_services(device)), ptr_(services_->allocate(bytes, "cuDNN RNN plan")) {}
  ~PlanBuffer() { services_->deallocate(ptr_); }
  PlanBuffer(const PlanBuffer&) = delete;
  PlanBuffer& operator=(const PlanBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  BackendServices* services_;
  void* ptr_;
};

struct RnnPlan {
  RnnDesc rnn;
  DropoutDesc dropout;
  RnnDataDesc x, y;
  StateDesc state;
  size_t weight_bytes = 0;
  size_t inference_work_bytes = 0, training_work_bytes = 0, reserve_bytes = 0;
  std::vector<RnnBlockCopy> to_cudnn, to_keras;
  std::unique_ptr<PlanBuffer> sequence_lengths;  // int32 (batch,), every entry `time`
};

int to_int(int64_t v, const char* what) {
  GA_CUDA_REQUIRE(v >= 0 && v <= 0x7fffffff, std::string(what) + " does not fit cuDNN's int");
  return static_cast<int>(v);
}

cudnnRNNMode_t cudnn_mode(RnnCell cell) {
  return cell == RnnCell::kLstm ? CUDNN_LSTM : cell == RnnCell::kGru ? CUDNN_GRU : CUDNN_RNN_TANH;
}

void set_sequence(const RnnDataDesc& d, const RnnPlanKey& k, int64_t width) {
  const std::vector<int> lengths(static_cast<size_t>(k.batch), to_int(k.time, "time"));
  GA_CUDNN_CHECK(cudnnSetRNNDataDescriptor(d.get(), CUDNN_DATA_FLOAT,
                                           CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                                           to_int(k.time, "time"), to_int(k.batch, "batch"),
                                           to_int(width, "features"), lengths.data(), nullptr));
}

std::unique_ptr<RnnPlan> build_plan(const RnnPlanKey& k) {
  auto plan = std::make_unique<RnnPlan>();
  CudnnLease lease = cudnn_lease(k.device);
  cudnnHandle_t handle = lease.get();
  // A single layer applies no dropout; cuDNN still wants a descriptor (rate 0, no states).
  GA_CUDNN_CHECK(cudnnSetDropoutDescriptor(plan->dropout.get(), handle, 0.0f, nullptr, 0, 0));
  GA_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
      plan->rnn.get(), CUDNN_RNN_ALGO_STANDARD, cudnn_mode(k.cell), CUDNN_RNN_DOUBLE_BIAS,
      CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
      CUDNN_FMA_MATH, to_int(k.input, "input"), to_int(k.units, "units"),
      to_int(k.units, "units"), 1, plan->dropout.get(), CUDNN_RNN_PADDED_IO_ENABLED));
  set_sequence(plan->x, k, k.input);
  set_sequence(plan->y, k, k.units);
  const int dims[3] = {1, to_int(k.batch, "batch"), to_int(k.units, "units")};
  const int strides[3] = {dims[1] * dims[2], dims[2], 1};
  GA_CUDNN_CHECK(cudnnSetTensorNdDescriptor(plan->state.get(), CUDNN_DATA_FLOAT, 3, dims, strides));
  GA_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle, plan->rnn.get(), &plan->weight_bytes));
  size_t unused_reserve = 0;
  GA_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, plan->rnn.get(), CUDNN_FWD_MODE_INFERENCE,
                                           plan->x.get(), &plan->inference_work_bytes,
                                           &unused_reserve));
  GA_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, plan->rnn.get(), CUDNN_FWD_MODE_TRAINING,
                                           plan->x.get(), &plan->training_work_bytes,
                                           &plan->reserve_bytes));
  // Each linear layer's matrix and bias offsets, read against a weight space of the right size.
  const int layers = 2 * static_cast<int>(rnn_gates(k.cell));
  std::vector<int64_t> matrix_offset(layers), bias_offset(layers);
  {
    ScratchBuffer space(k.device, plan->weight_bytes);
    StateDesc matrix, bias;  // cuDNN describes each block here; only the addresses are used
    for (int id = 0; id < layers; ++id) {
      void* m = nullptr;
      void* b = nullptr;
      GA_CUDNN_CHECK(cudnnGetRNNWeightParams(handle, plan->rnn.get(), 0, plan->weight_bytes,
                                             space.get(), id, matrix.get(), &m, bias.get(), &b));
      GA_CUDA_REQUIRE(m != nullptr && b != nullptr,
                      "cudnnGetRNNWeightParams gave no matrix or bias for a linear layer");
      const auto base = static_cast<const char*>(space.get());
      matrix_offset[id] = (static_cast<const char*>(m) - base) / int64_t(sizeof(float));
      bias_offset[id] = (static_cast<const char*>(b) - base) / int64_t(sizeof(float));
    }
  }
  plan->to_cudnn = keras_to_cudnn_copies(k.cell, k.input, k.units, matrix_offset, bias_offset);
  plan->to_keras = cudnn_to_keras_copies(k.cell, k.input, k.units, matrix_offset, bias_offset);
  plan->sequence_lengths =
      std::make_unique<PlanBuffer>(k.device, static_cast<size_t>(k.batch) * sizeof(int32_t));
  TensorView lengths;
  lengths.data = plan->sequence_lengths->get();
  lengths.dtype = DType::kInt32;
  lengths.ndim = 1;
  lengths.shape[0] = k.batch;
  lengths.strides[0] = 1;
  fill(k.device, lengths, static_cast<double>(k.time));
  return plan;
}

PlanCache<RnnPlanKey, RnnPlan>& rnn_plans() {
  static auto* plans = new PlanCache<RnnPlanKey, RnnPlan>();
  return *plans;
}

void require_float32(const TensorView& v, const char* what) {
  GA_CUDA_REQUIRE(v.dtype == DType::kFloat32 && v.is_contiguous(),
                  std::string("fused RNN: ") + what + " must be contiguous float32");
}

RnnPlan& plan_for(int device, const RnnParams& p, const TensorView& x,
                  const TensorView& recurrent_kernel) {
  require_float32(x, "x");
  const RnnPlanKey key{device, p.cell, x.shape[0], x.shape[1], x.shape[2],
                       recurrent_kernel.shape[0]};
  return rnn_plans().get(key, [&] { return build_plan(key); });
}

const float* operand(RnnOperand which, const TensorView& kernel, const TensorView& recurrent,
                     const TensorView& bias, const void* space) {
  switch (which) {
    case RnnOperand::kKernel: return static_cast<const float*>(kernel.data);
    case RnnOperand::kRecurrentKernel: return static_cast<const float*>(recurrent.data);
    case RnnOperand::kBias: return static_cast<const float*>(bias.data);
    case RnnOperand::kWeightSpace: break;
  }
  return static_cast<const float*>(space);
}

// Keras's weights in a zeroed cuDNN weight space.
void fill_weight_space(int device, const RnnPlan& plan, const TensorView& kernel,
                       const TensorView& recurrent, const TensorView& bias, void* space) {
  GA_CUDA_CHECK(cudaMemsetAsync(space, 0, plan.weight_bytes, device_stream(device)));
  for (const RnnBlockCopy& c : plan.to_cudnn) {
    run_rnn_block_copy(device, c, operand(c.src, kernel, recurrent, bias, space),
                       static_cast<float*>(space));
  }
}

}  // namespace

int64_t rnn_workspace_bytes(int device, const RnnParams& p, const TensorView& x,
                            const TensorView& recurrent_kernel) {
  DeviceGuard guard(device);  // a first call builds the plan with the device's cuDNN handle
  return static_cast<int64_t>(plan_for(device, p, x, recurrent_kernel).reserve_bytes);
}

void rnn_forward(int device, const RnnParams& p, const TensorView& x, const TensorView& h0,
                 const TensorView& c0, const TensorView& kernel,
                 const TensorView& recurrent_kernel, const TensorView& bias, const TensorView& y,
                 const TensorView& h_last, const TensorView& c_last, void* workspace) {
  RnnPlan& plan = plan_for(device, p, x, recurrent_kernel);
  const bool training = workspace != nullptr;
  ScratchBuffer weights(device, plan.weight_bytes);
  fill_weight_space(device, plan, kernel, recurrent_kernel, bias, weights.get());
  const size_t work_bytes = training ? plan.training_work_bytes : plan.inference_work_bytes;
  ScratchBuffer work(device, work_bytes);
  const bool lstm = p.cell == RnnCell::kLstm;
  CudnnLease lease = cudnn_lease(device);
  GA_CUDNN_CHECK(cudnnRNNForward(
      lease.get(), plan.rnn.get(), training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
      static_cast<const int32_t*>(plan.sequence_lengths->get()), plan.x.get(), x.data,
      plan.y.get(), y.data, plan.state.get(), h0.data, h_last.data, plan.state.get(),
      lstm ? c0.data : nullptr, lstm ? c_last.data : nullptr, plan.weight_bytes, weights.get(),
      work_bytes, work.get(), training ? plan.reserve_bytes : 0, workspace));
}

void rnn_backward(int device, const RnnParams& p, const TensorView& x, const TensorView& h0,
                  const TensorView& c0, const TensorView& kernel,
                  const TensorView& recurrent_kernel, const TensorView& bias,
                  const TensorView& y, const TensorView& /*h_last*/, const TensorView& /*c_last*/,
                  const void* workspace, const TensorView& dy, const TensorView& dh_last,
                  const TensorView& dc_last, const TensorView& dx, const TensorView& dh0,
                  const TensorView& dc0, const TensorView& dkernel,
                  const TensorView& drecurrent_kernel, const TensorView& dbias) {
  RnnPlan& plan = plan_for(device, p, x, recurrent_kernel);
  ScratchBuffer weights(device, plan.weight_bytes);
  fill_weight_space(device, plan, kernel, recurrent_kernel, bias, weights.get());
  ScratchBuffer work(device, plan.training_work_bytes);
  ScratchBuffer weight_gradients(device, plan.weight_bytes);
  GA_CUDA_CHECK(cudaMemsetAsync(weight_gradients.get(), 0, plan.weight_bytes,
                                device_stream(device)));
  // cuDNN reads and updates the reserve space in the backward passes; it is the op's own
  // workspace, used by this one backward.
  void* reserve = const_cast<void*>(workspace);
  const bool lstm = p.cell == RnnCell::kLstm;
  const auto* lengths = static_cast<const int32_t*>(plan.sequence_lengths->get());
  CudnnLease lease = cudnn_lease(device);
  GA_CUDNN_CHECK(cudnnRNNBackwardData_v8(
      lease.get(), plan.rnn.get(), lengths, plan.y.get(), y.data, dy.data, plan.x.get(), dx.data,
      plan.state.get(), h0.data, dh_last.data, dh0.data, plan.state.get(),
      lstm ? c0.data : nullptr, lstm ? dc_last.data : nullptr, lstm ? dc0.data : nullptr,
      plan.weight_bytes, weights.get(), plan.training_work_bytes, work.get(), plan.reserve_bytes,
      reserve));
  GA_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(
      lease.get(), plan.rnn.get(), CUDNN_WGRAD_MODE_ADD, lengths, plan.x.get(), x.data,
      plan.state.get(), h0.data, plan.y.get(), y.data, plan.weight_bytes,
      weight_gradients.get(), plan.training_work_bytes, work.get(), plan.reserve_bytes,
      reserve));
  for (const RnnBlockCopy& c : plan.to_keras) {
    const TensorView& target = c.dst == RnnOperand::kKernel            ? dkernel
                               : c.dst == RnnOperand::kRecurrentKernel ? drecurrent_kernel
                                                                       : dbias;
    run_rnn_block_copy(device, c, static_cast<const float*>(weight_gradients.get()),
                       static_cast<float*>(target.data));
  }
}

#else  // no cuDNN at build time

namespace {
[[noreturn]] void no_cudnn_rnn(const char* op) {
  throw BackendError(CudaStatus::kUnimplemented,
                     std::string(op) + ": this build of the CUDA backend has no cuDNN");
}
}  // namespace

int64_t rnn_workspace_bytes(int, const RnnParams&, const TensorView&, const TensorView&) {
  return 0;
}
void rnn_forward(int, const RnnParams&, const TensorView&, const TensorView&, const TensorView&,
                 const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                 const TensorView&, const TensorView&, void*) {
  no_cudnn_rnn("rnn_forward");
}
void rnn_backward(int, const RnnParams&, const TensorView&, const TensorView&, const TensorView&,
                  const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                  const TensorView&, const TensorView&, const void*, const TensorView&,
                  const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                  const TensorView&, const TensorView&, const TensorView&, const TensorView&) {
  no_cudnn_rnn("rnn_backward");
}

#endif  // GPUACCEL_HAVE_CUDNN

}  // namespace gpuaccel::cuda
