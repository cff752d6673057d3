// Convolution, pooling, softmax and batch normalization through cuDNN 9's legacy (v7-style)
// API, which still ships in libcudnn_ops/libcudnn_cnn. Descriptors (and, for convolutions, the
// algorithm and its workspace size) are made once per shape and cached (backends/cuda/plan_cache.h,
// backends/cuda/conv_plan.h); workspaces come from the device's pool. Layouts: activations are NHWC
// as Keras's default, described to cuDNN as NHWC tensors. Keras kernels are HWIO (KH, KW, C, F),
// while cuDNN's filter formats are KCRS and KRSC (F, KH, KW, C) only: the kernel's KRSC copy is
// kept with its storage and remade only after the weights change (backends/cuda/krsc_kernel.h), so
// a training step copies each kernel once and inference once in all; dw is computed in KRSC
// and copied back into the layer's HWIO (docs/gpu.md). cuDNN
// pads symmetrically only, so asymmetric ('same' with an odd total) convolution padding is done
// by convolving a zero-padded copy of the input (pooling: see its section). f16 and bf16 use
// tensor-op math with float32 accumulation; f32 uses FMA math (no TF32), so results match the
// CPU.
#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/conv_plan.h"
#include "backends/cuda/krsc_kernel.h"
#include "backends/cuda/batch_norm_kernels.h"
#include "backends/cuda/batch_norm_route.h"
#include "backends/cuda/context.h"
#include "backends/cuda/conv_candidates.h"
#include "backends/cuda/cudnn_descriptor.h"
#include "backends/cuda/library_handle.h"
#include "backends/cuda/ops.h"

namespace gpuaccel::cuda {

namespace {

[[noreturn]] void unimplemented(const std::string& what) {
  throw BackendError(CudaStatus::kUnimplemented, what);
}

TensorView contiguous_like(const TensorView& v, void* data, int ndim, const int64_t* shape) {
  TensorView out;
  out.data = data;
  out.dtype = v.dtype;
  out.ndim = ndim;
  int64_t stride = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out.shape[d] = shape[d];
    out.strides[d] = stride;
    stride *= shape[d];
  }
  return out;
}

}  // namespace

#if GPUACCEL_HAVE_CUDNN

namespace {

int to_int(int64_t v, const char* what) {
  GA_CUDA_REQUIRE(v >= 0 && v <= 0x7fffffff, std::string(what) + " does not fit cuDNN's int");
  return static_cast<int>(v);
}

cudnnDataType_t cudnn_type(DType dtype, const char* op) {
  switch (dtype) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string(op) + ": unsupported dtype " + dtype_name(dtype));
}

using TensorDesc = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                   cudnnDestroyTensorDescriptor>;
using FilterDesc = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                   cudnnDestroyFilterDescriptor>;
using ConvDesc = CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                 cudnnDestroyConvolutionDescriptor>;
using PoolDesc = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                 cudnnDestroyPoolingDescriptor>;

// (N, H, W, C) view -> an NHWC cuDNN tensor.
void set_nhwc(const TensorDesc& t, const TensorView& v, const char* op) {
  GA_CUDA_REQUIRE(v.ndim == 4 && v.is_contiguous(), std::string(op) + ": expected a contiguous NHWC tensor");
  GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.get(), CUDNN_TENSOR_NHWC, cudnn_type(v.dtype, op),
                                            to_int(v.shape[0], "N"), to_int(v.shape[3], "C"),
                                            to_int(v.shape[1], "H"), to_int(v.shape[2], "W")));
}

// (..., C) contiguous view -> rows x C x 1 x 1.
void set_rows(const TensorDesc& t, const TensorView& v, const char* op) {
  GA_CUDA_REQUIRE(v.ndim >= 1 && v.is_contiguous(), std::string(op) + ": expected a contiguous tensor");
  const int64_t c = v.shape[v.ndim - 1];
  const int64_t rows = c == 0 ? 0 : v.numel() / c;
  GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.get(), CUDNN_TENSOR_NCHW, cudnn_type(v.dtype, op),
                                            to_int(rows, "rows"), to_int(c, "C"), 1, 1));
}

// Scale factors: float for float/half/bf16 data (cuDNN's rule for everything but double).
const float kOne = 1.0f;
const float kZero = 0.0f;

// ---- convolution ----
//
// Plans are cached per shape (backends/cuda/conv_plan.h): the first call of a problem creates its
// descriptors and asks cuDNN for an algorithm (cudnnGet*Algorithm_v7 heuristics, whose first
// successful pick is used) and its workspace size; every later call of the shape only launches,
// with its workspace from the device's WorkspaceArena. The per-call work left is, for asymmetric
// padding, the padded input; the kernel's HWIO -> KRSC copy is made once per weights version.

bool symmetric(const Conv2dParams& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

bool stream_capturing(int device) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GA_CUDA_CHECK(cudaStreamIsCapturing(device_stream(device), &status));
  return status != cudaStreamCaptureStatusNone;
}

// The kernel in KRSC order (backends/cuda/krsc_kernel.h): the copy kept with w's storage, or one
// made into `buffer` for this call (held by `keep` / `buffer` until the call returns; freeing
// then is safe, every user of the pool is ordered on the device's stream).
TensorView krsc_copy(int device, const TensorView& w, std::optional<ScratchBuffer>& buffer,
                     std::shared_ptr<void>& keep) {
  return krsc_kernel(
      w, stream_capturing(device),
      [&] {
        buffer.emplace(device, static_cast<size_t>(w.numel()) * dtype_size(w.dtype));
        return buffer->get();
      },
      [&](const TensorView& src, const TensorView& dst) { copy(device, src, dst); }, keep);
}

// For asymmetric padding: x with the padding made explicit (zeros), in `buffer`.
TensorView padded_shape(const TensorView& x, const Conv2dParams& p, void* data) {
  const int64_t shape[4] = {x.shape[0], x.shape[1] + p.pad_top + p.pad_bottom,
                            x.shape[2] + p.pad_left + p.pad_right, x.shape[3]};
  return contiguous_like(x, data, 4, shape);
}
// The interior of a padded tensor, where x's values go.
TensorView interior(const TensorView& padded, const TensorView& x, const Conv2dParams& p) {
  TensorView v = padded;
  for (int d = 0; d < 4; ++d) v.shape[d] = x.shape[d];
  v.data = static_cast<char*>(padded.data) +
           (p.pad_top * padded.strides[1] + p.pad_left * padded.strides[2]) * dtype_size(x.dtype);
  return v;
}

size_t bytes_of(const TensorView& v) { return static_cast<size_t>(v.numel()) * dtype_size(v.dtype); }

// The input as cuDNN convolves it: x itself, or, when `pad` (asymmetric padding), a copy of x
// with that padding made explicit (zeros) in `buffer`.
TensorView zero_padded_input(int device, const TensorView& x, const Conv2dParams& p, bool pad,
                             std::optional<ScratchBuffer>& buffer) {
  if (!pad) return x;
  buffer.emplace(device, bytes_of(padded_shape(x, p, nullptr)));
  const TensorView xin = padded_shape(x, p, buffer->get());
  fill(device, xin, 0.0);
  copy(device, x, interior(xin, x, p));
  return xin;
}

// The key of a problem: x as given to cuDNN (padded when the padding is asymmetric, then cuDNN
// pads nothing), the Keras kernel w (KH, KW, C / groups, F) as cuDNN's (F, KH, KW, C / groups), y.
ConvPlanKey conv_key(int device, ConvDirection direction, const TensorView& x_in, const TensorView& w_hwio,
                     const TensorView& y, const Conv2dParams& p, bool padded_input, const char* op) {
  GA_CUDA_REQUIRE(x_in.ndim == 4 && y.ndim == 4 && x_in.is_contiguous() && y.is_contiguous(),
                  std::string(op) + ": expected contiguous NHWC tensors");
  GA_CUDA_REQUIRE(w_hwio.ndim == 4, std::string(op) + ": the kernel must be (KH, KW, C / groups, F)");
  GA_CUDA_REQUIRE(p.groups >= 1 && x_in.shape[3] == w_hwio.shape[2] * p.groups &&
                      w_hwio.shape[3] % p.groups == 0,
                  std::string(op) + ": with groups=" + std::to_string(p.groups) +
                      " the kernel's input channels times groups must equal x's channels (" +
                      std::to_string(x_in.shape[3]) + ") and groups must divide its filters (" +
                      std::to_string(w_hwio.shape[3]) + ")");
  ConvPlanKey k;
  k.device = device;
  k.dtype = x_in.dtype;
  k.direction = direction;
  for (int d = 0; d < 4; ++d) {
    k.x[d] = x_in.shape[d];
    k.y[d] = y.shape[d];
  }
  k.w[0] = w_hwio.shape[3];
  k.w[1] = w_hwio.shape[0];
  k.w[2] = w_hwio.shape[1];
  k.w[3] = w_hwio.shape[2];
  k.params = p;
  if (padded_input) k.params.pad_top = k.params.pad_bottom = k.params.pad_left = k.params.pad_right = 0;
  k.tensor_op_math = x_in.dtype != DType::kFloat32;
  return k;
}

// A problem's descriptors, and the algorithms left to try for it (conv_candidates.h). The
// candidates are filled while the plan is built and advanced only under the runner's launch
// lock, so they are mutable state of a plan that is otherwise read-only.
struct CudnnConvDescriptors final : ConvDescriptors {
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv;
  mutable std::vector<ConvCandidate> candidates;
  mutable size_t next_candidate = 0;
  mutable std::string refusals;  // what cuDNN said of each candidate it refused
};

// A launch status saying that cuDNN will not run this algorithm for this problem and queued
// nothing (cudnn_refused, cudnn_status.h: the NOT_SUPPORTED family, or the BAD_PARAM family for
// a parameter it rejects for this algorithm, e.g. a misaligned pointer). The next candidate is
// tried; should every one be refused, the error lists them all. A failed execution
// (CUDNN_STATUS_EXECUTION_FAILED_*) is not retried. The workspace-size query runs on the host
// only, so any failure there just passes the candidate over.
bool refused_at_launch(cudnnStatus_t s) { return cudnn_refused(static_cast<int>(s)); }

// The general algorithms tried after the heuristic's own: the ones cuDNN's legacy API runs for
// (almost) any shape, layout and dtype, with the least workspace.
std::vector<int> fallback_algorithms(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward:
      return {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
              CUDNN_CONVOLUTION_FWD_ALGO_GEMM};
    case ConvDirection::kBackwardData:
      return {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0};
    case ConvDirection::kBackwardFilter:
      return {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3};
  }
  return {};
}

// Every algorithm the heuristic reports for one direction, as many as cuDNN has (its
// ...MaxCount: the list holds an entry per algorithm and math type).
template <typename Perf, typename MaxCount, typename Heuristic>
std::vector<ReportedConvAlgorithm> reported(MaxCount max_count, Heuristic heuristic) {
  int count = 0;
  GA_CUDNN_CHECK(max_count(&count));
  std::vector<Perf> perf(static_cast<size_t>(std::max(count, 1)));
  int returned = 0;
  GA_CUDNN_CHECK(heuristic(static_cast<int>(perf.size()), &returned, perf.data()));
  std::vector<ReportedConvAlgorithm> out;
  for (int i = 0; i < returned && i < static_cast<int>(perf.size()); ++i) {
    out.push_back({static_cast<int>(perf[i].algo), perf[i].status == CUDNN_STATUS_SUCCESS,
                   static_cast<int>(perf[i].mathType)});
  }
  return out;
}

// cuDNN as the ConvEngine of one device. Every call on the handle holds its lease (context.h).
class CudnnConvEngine final : public ConvEngine {
 public:
  explicit CudnnConvEngine(int device) : device_(device) {}

  std::unique_ptr<ConvDescriptors> create_descriptors(const ConvPlanKey& k) override {
    const char* op = "conv2d";
    auto d = std::make_unique<CudnnConvDescriptors>();
    const cudnnDataType_t type = cudnn_type(k.dtype, op);
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d->x.get(), CUDNN_TENSOR_NHWC, type, to_int(k.x[0], "N"),
                                              to_int(k.x[3], "C"), to_int(k.x[1], "H"), to_int(k.x[2], "W")));
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d->y.get(), CUDNN_TENSOR_NHWC, type, to_int(k.y[0], "N"),
                                              to_int(k.y[3], "F"), to_int(k.y[1], "OH"), to_int(k.y[2], "OW")));
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d->bias.get(), CUDNN_TENSOR_NHWC, type, 1, to_int(k.y[3], "F"), 1, 1));
    GA_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d->w.get(), type, CUDNN_TENSOR_NHWC, to_int(k.w[0], "F"),
                                              to_int(k.w[3], "C"), to_int(k.w[1], "KH"), to_int(k.w[2], "KW")));
    const Conv2dParams& p = k.params;
    // Accumulation in float32 for every dtype (CUDNN_DATA_FLOAT compute): f16/bf16 on tensor cores.
    GA_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        d->conv.get(), to_int(p.pad_top, "pad"), to_int(p.pad_left, "pad"), to_int(p.stride_h, "stride"),
        to_int(p.stride_w, "stride"), to_int(p.dilation_h, "dilation"), to_int(p.dilation_w, "dilation"),
        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    GA_CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv.get(), k.tensor_op_math ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    // Grouped: the filter descriptor's C is the channels of one group (the kernel's third axis),
    // x's C all of them; cuDNN splits both, and the F filters, into this many parts.
    if (p.groups != 1) GA_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d->conv.get(), to_int(p.groups, "groups")));
    return d;
  }

  // The heuristic's list, then the fallbacks (conv_candidates.h); the first candidate whose
  // workspace-size query cuDNN accepts becomes the plan's algorithm.
  ConvAlgorithm choose_algorithm(const ConvPlanKey& k, const ConvDescriptors& base) override {
    const auto& d = static_cast<const CudnnConvDescriptors&>(base);
    CudnnLease h = cudnn_lease(device_);
    std::vector<ReportedConvAlgorithm> list;
    switch (k.direction) {
      case ConvDirection::kForward:
        list = reported<cudnnConvolutionFwdAlgoPerf_t>(
            [&](int* n) { return cudnnGetConvolutionForwardAlgorithmMaxCount(h.get(), n); },
            [&](int n, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
              return cudnnGetConvolutionForwardAlgorithm_v7(h.get(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                            n, returned, perf);
            });
        break;
      case ConvDirection::kBackwardData:
        list = reported<cudnnConvolutionBwdDataAlgoPerf_t>(
            [&](int* n) { return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h.get(), n); },
            [&](int n, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
              return cudnnGetConvolutionBackwardDataAlgorithm_v7(h.get(), d.w.get(), d.y.get(), d.conv.get(),
                                                                 d.x.get(), n, returned, perf);
            });
        break;
      case ConvDirection::kBackwardFilter:
        list = reported<cudnnConvolutionBwdFilterAlgoPerf_t>(
            [&](int* n) { return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h.get(), n); },
            [&](int n, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
              return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h.get(), d.x.get(), d.y.get(), d.conv.get(),
                                                                   d.w.get(), n, returned, perf);
            });
        break;
    }
    // float32 always runs with FMA math: the heuristic may report CUDNN_DEFAULT_MATH, which on
    // sm_80+ lets cuDNN use TF32 (a 10-bit mantissa), and GPU float32 must match the CPU's.
    const int fallback_math = k.tensor_op_math ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    std::vector<ConvCandidate> fallbacks;
    for (int algorithm : fallback_algorithms(k.direction)) {
      fallbacks.push_back({algorithm, fallback_math});
      if (k.tensor_op_math) fallbacks.push_back({algorithm, CUDNN_DEFAULT_MATH});
    }
    d.candidates = conv_candidates(list, !k.tensor_op_math, CUDNN_FMA_MATH, fallbacks);
    d.next_candidate = 0;
    d.refusals.clear();
    return next_accepted_or_throw(k, d, h);
  }

  bool execute(const ConvPlanKey& k, const ConvPlan& plan, const ConvOperands& o, void* workspace) override {
    const auto& d = static_cast<const CudnnConvDescriptors&>(*plan.descriptors);
    CudnnLease lease = cudnn_lease(device_);
    cudnnHandle_t h = lease.get();
    const size_t ws = plan.algorithm.workspace_bytes;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    switch (k.direction) {
      case ConvDirection::kForward:
        s = cudnnConvolutionForward(h, &kOne, d.x.get(), o.x, d.w.get(), o.w, d.conv.get(),
                                    static_cast<cudnnConvolutionFwdAlgo_t>(plan.algorithm.algorithm), workspace,
                                    ws, &kZero, d.y.get(), o.out);
        break;
      case ConvDirection::kBackwardData:
        s = cudnnConvolutionBackwardData(h, &kOne, d.w.get(), o.w, d.y.get(), o.y, d.conv.get(),
                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algorithm.algorithm),
                                         workspace, ws, &kZero, d.x.get(), o.out);
        break;
      case ConvDirection::kBackwardFilter:
        s = cudnnConvolutionBackwardFilter(h, &kOne, d.x.get(), o.x, d.y.get(), o.y, d.conv.get(),
                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algorithm.algorithm),
                                           workspace, ws, &kZero, d.w.get(), o.out);
        break;
    }
    if (refused_at_launch(s)) {
      d.refusals += std::string(d.refusals.empty() ? "" : "; ") + "algorithm " +
                    std::to_string(plan.algorithm.algorithm) + " at launch: " + cudnnGetErrorString(s);
      return false;
    }
    GA_CUDNN_CHECK(s);
    if (k.direction == ConvDirection::kForward && o.bias != nullptr) {
      GA_CUDNN_CHECK(cudnnAddTensor(h, &kOne, d.bias.get(), o.bias, &kOne, d.y.get(), o.out));
    }
    if (k.direction == ConvDirection::kBackwardFilter && o.dbias != nullptr) {
      GA_CUDNN_CHECK(cudnnConvolutionBackwardBias(h, &kOne, d.y.get(), o.y, &kZero, d.bias.get(), o.dbias));
    }
    return true;
  }

  void next_algorithm(const ConvPlanKey& k, ConvPlan& plan, size_t workspace_below) override {
    const auto& d = static_cast<const CudnnConvDescriptors&>(*plan.descriptors);
    CudnnLease h = cudnn_lease(device_);
    // The bound is this algorithm's own workspace when the pool just refused it (a bound from an
    // earlier refusal in the call is larger: every later candidate needs less).
    if (workspace_below != kAnyWorkspace && plan.algorithm.workspace_bytes == workspace_below) {
      d.refusals += std::string(d.refusals.empty() ? "" : "; ") + "algorithm " +
                    std::to_string(plan.algorithm.algorithm) + ": the pool could not give its " +
                    std::to_string(workspace_below) + "-byte workspace";
    }
    plan.algorithm = next_accepted_or_throw(k, d, h, workspace_below);
  }

 private:
  // The next candidate whose workspace-size query cuDNN accepts and whose workspace is below
  // `workspace_below`, with the descriptor's math type set to it; UnimplementedError naming the
  // problem and every refusal when none is left.
  ConvAlgorithm next_accepted_or_throw(const ConvPlanKey& k, const CudnnConvDescriptors& d, const CudnnLease& h,
                                       size_t workspace_below = kAnyWorkspace) {
    auto accepts = [&](const ConvCandidate& c, size_t* bytes) {
      GA_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv.get(), static_cast<cudnnMathType_t>(c.math_type)));
      cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
      switch (k.direction) {
        case ConvDirection::kForward:
          s = cudnnGetConvolutionForwardWorkspaceSize(h.get(), d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                      static_cast<cudnnConvolutionFwdAlgo_t>(c.algorithm), bytes);
          break;
        case ConvDirection::kBackwardData:
          s = cudnnGetConvolutionBackwardDataWorkspaceSize(
              h.get(), d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
              static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algorithm), bytes);
          break;
        case ConvDirection::kBackwardFilter:
          s = cudnnGetConvolutionBackwardFilterWorkspaceSize(
              h.get(), d.x.get(), d.y.get(), d.conv.get(), d.w.get(),
              static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algorithm), bytes);
          break;
      }
      if (s != CUDNN_STATUS_SUCCESS) {
        d.refusals += std::string(d.refusals.empty() ? "" : "; ") + "algorithm " + std::to_string(c.algorithm) +
                      " (math " + std::to_string(c.math_type) + "): " + cudnnGetErrorString(s);
        return false;
      }
      return true;
    };
    auto too_large = [&](const ConvCandidate& c, size_t bytes) {
      d.refusals += std::string(d.refusals.empty() ? "" : "; ") + "algorithm " + std::to_string(c.algorithm) +
                    " (math " + std::to_string(c.math_type) + "): needs " + std::to_string(bytes) +
                    " bytes of workspace, no less than the pool could not give";
    };
    ConvAlgorithm a;
    const std::optional<ConvCandidate> c =
        next_accepted(d.candidates, &d.next_candidate, accepts, &a.workspace_bytes, workspace_below, too_large);
    if (!c) {
      unimplemented("conv2d: cuDNN runs none of the algorithms tried for " + k.to_string() + " (tried " +
                    describe_candidates(d.candidates) + "; refused: " + (d.refusals.empty() ? "none" : d.refusals) +
                    ")");
    }
    a.algorithm = c->algorithm;
    a.math_type = c->math_type;
    return a;
  }

  const int device_;
};

// The convolution runner of `device` (its engine, workspace arena and plan cache), made on
// first use and kept for the process.
ConvRunner& conv_runner(int device) {
  struct DeviceConv {
    // The arena asks whether the stream is being captured: a block a graph holds is never given
    // back, and growing inside a capture is refused (backends/cuda/workspace_arena.h).
    explicit DeviceConv(int device)
        : engine(device), arena(device_services(device), [device] { return stream_capturing(device); }),
          runner(engine, arena) {}
    CudnnConvEngine engine;
    WorkspaceArena arena;
    ConvRunner runner;
  };
  static std::mutex mutex;
  static auto* devices = new std::map<int, std::unique_ptr<DeviceConv>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*devices)[device];
  if (!slot) slot = std::make_unique<DeviceConv>(device);
  return slot->runner;
}

}  // namespace

void release_conv_workspace(int device) { conv_runner(device).release_workspace(); }

void conv2d_forward(int device, const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y) {
  const char* op = "conv2d_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == w.dtype && x.dtype == y.dtype, "conv2d_forward: dtypes differ");
  if (y.numel() == 0) return;
  if (bias != nullptr) {
    GA_CUDA_REQUIRE(bias->dtype == y.dtype && bias->numel() == y.shape[3], "conv2d_forward: bias must be (F,)");
  }
  const bool pad = !symmetric(p);
  std::optional<ScratchBuffer> padded_buf;
  const TensorView xin = zero_padded_input(device, x, p, pad, padded_buf);
  std::optional<ScratchBuffer> w_buf;
  std::shared_ptr<void> w_keep;
  const TensorView wk = krsc_copy(device, w, w_buf, w_keep);
  ConvOperands o;
  o.x = xin.data;
  o.w = wk.data;
  o.out = y.data;
  o.bias = bias != nullptr ? bias->data : nullptr;
  conv_runner(device).run(conv_key(device, ConvDirection::kForward, xin, w, y, p, pad, op), o);
}

void conv2d_backward_data(int device, const TensorView& dy, const TensorView& w,
                          const Conv2dParams& p, const TensorView& dx) {
  const char* op = "conv2d_backward_data";
  require_dtype_supported(device, dx.dtype, op);
  GA_CUDA_REQUIRE(dy.dtype == w.dtype && dy.dtype == dx.dtype, "conv2d_backward_data: dtypes differ");
  if (dx.numel() == 0) return;
  const bool pad = !symmetric(p);
  ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(dx, p, nullptr)) : 0);
  const TensorView dxin = pad ? padded_shape(dx, p, padded_buf.get()) : dx;
  std::optional<ScratchBuffer> w_buf;
  std::shared_ptr<void> w_keep;
  const TensorView wk = krsc_copy(device, w, w_buf, w_keep);
  ConvOperands o;
  o.w = wk.data;
  o.y = dy.data;
  o.out = dxin.data;
  conv_runner(device).run(conv_key(device, ConvDirection::kBackwardData, dxin, w, dy, p, pad, op), o);
  if (pad) copy(device, interior(dxin, dx, p), dx);
}

// The transposed convolution is the backward-data pass of the convolution of y (same plan
// cache and algorithm choice, x in dy's place); cuDNN's backward data takes no bias, so the
// bias is added after, over y's rows.
void conv2d_transpose_forward(int device, const TensorView& x, const TensorView& w,
                              const TensorView* bias, const Conv2dParams& p, const TensorView& y) {
  const char* op = "conv2d_transpose_forward";
  if (bias != nullptr) {
    GA_CUDA_REQUIRE(bias->dtype == y.dtype && bias->numel() == y.shape[3],
                    "conv2d_transpose_forward: bias must be (F,)");
  }
  conv2d_backward_data(device, x, w, p, y);
  if (bias == nullptr || y.numel() == 0) return;
  TensorDesc yd, b;
  set_nhwc(yd, y, op);
  GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.get(), CUDNN_TENSOR_NHWC, cudnn_type(bias->dtype, op), 1,
                                            to_int(y.shape[3], "F"), 1, 1));
  GA_CUDNN_CHECK(cudnnAddTensor(cudnn_lease(device).get(), &kOne, b.get(), bias->data, &kOne, yd.get(), y.data));
}

void conv2d_backward_weights(int device, const TensorView& x, const TensorView& dy,
                             const Conv2dParams& p, const TensorView& dw,
                             const TensorView* dbias) {
  const char* op = "conv2d_backward_weights";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == dy.dtype && x.dtype == dw.dtype, "conv2d_backward_weights: dtypes differ");
  const bool want_dbias = dbias != nullptr && dbias->numel() > 0;
  if (want_dbias) {
    GA_CUDA_REQUIRE(dbias->dtype == dy.dtype && dbias->numel() == dy.shape[3],
                    "conv2d_backward_weights: dbias must be (F,)");
  }
  if (dw.numel() == 0) {
    // No kernel to differentiate (C == 0): dbias alone, with descriptors of this call only.
    if (want_dbias) {
      TensorDesc dyd, b;
      set_nhwc(dyd, dy, op);
      GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.get(), CUDNN_TENSOR_NHWC, cudnn_type(dbias->dtype, op), 1,
                                                to_int(dy.shape[3], "F"), 1, 1));
      GA_CUDNN_CHECK(cudnnConvolutionBackwardBias(cudnn_lease(device).get(), &kOne, dyd.get(), dy.data, &kZero, b.get(),
                                                  dbias->data));
    }
    return;
  }
  const bool pad = !symmetric(p);
  std::optional<ScratchBuffer> padded_buf;
  const TensorView xin = zero_padded_input(device, x, p, pad, padded_buf);
  ScratchBuffer w_buf(device, bytes_of(dw));
  const TensorView krsc_src = hwio_as_krsc(dw);  // dw's HWIO memory read as KRSC
  const TensorView dwk = contiguous_like(dw, w_buf.get(), 4, krsc_src.shape);
  ConvOperands o;
  o.x = xin.data;
  o.y = dy.data;
  o.out = dwk.data;
  o.dbias = want_dbias ? dbias->data : nullptr;
  conv_runner(device).run(conv_key(device, ConvDirection::kBackwardFilter, xin, dw, dy, p, pad, op), o);
  // KRSC back into Keras's HWIO.
  copy(device, dwk, hwio_as_krsc(dw));
}

// ---- pooling ----
//
// Asymmetric padding: max pooling runs cuDNN without padding on a copy of x padded with -inf
// (a padded element never wins a window that holds an input element, as oneDNN ignores padding;
// only an all -inf window could route its gradient to the padding). Average pooling goes to the
// direct kernels of avg_pool.cu, since a padded copy would count the padding in the divisor.
//
// Max pooling's workspace: cuDNN's backward takes x and y and finds each window's maximum again
// (the legacy API keeps no argmax). x reaches the backward as an argument (the frontend keeps
// it), so the workspace holds only a copy of y (the frontend must not keep y: it would own its
// own gradient node), a quarter of x for a 2x2 window; with asymmetric padding it also holds
// the padded x, which the forward builds there in any case.

namespace {

constexpr size_t kAlign = 256;
size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool symmetric(const Pool2dParams& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

// The pool's padding as convolution parameters, for padded_shape/interior above.
Conv2dParams pads_of(const Pool2dParams& p) {
  Conv2dParams q{};
  q.stride_h = q.stride_w = q.dilation_h = q.dilation_w = 1;
  q.pad_top = p.pad_top;
  q.pad_bottom = p.pad_bottom;
  q.pad_left = p.pad_left;
  q.pad_right = p.pad_right;
  return q;
}

// `padded_input`: x was padded explicitly, so cuDNN pads nothing.
void set_pool(const PoolDesc& d, const Pool2dParams& p, bool padded_input) {
  GA_CUDA_REQUIRE(padded_input || symmetric(p), "pool2d: cuDNN pads symmetrically only");
  const cudnnPoolingMode_t mode =
      p.kind == PoolKind::kMax ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  const int ph = padded_input ? 0 : to_int(p.pad_top, "pad");
  const int pw = padded_input ? 0 : to_int(p.pad_left, "pad");
  GA_CUDNN_CHECK(cudnnSetPooling2dDescriptor(d.get(), mode, CUDNN_PROPAGATE_NAN, to_int(p.window_h, "window"),
                                             to_int(p.window_w, "window"), ph, pw, to_int(p.stride_h, "stride"),
                                             to_int(p.stride_w, "stride")));
}

// Max pooling with asymmetric padding reads a padded x (built by the forward pass).
bool padded_max(const Pool2dParams& p) { return p.kind == PoolKind::kMax && !symmetric(p); }

}  // namespace

// ---- descriptors of pooling, softmax and batch normalization, cached per shape ----

namespace {

enum class DescSet { kPool, kRows, kBatchNorm };

// Everything such a descriptor set depends on: x and y as cuDNN sees them (NHWC for pooling,
// rows x C for softmax and batch norm, whose y has x's shape) and the pooling parameters.
struct DescKey {
  int device = 0;
  DType dtype = DType::kFloat32;
  DescSet set = DescSet::kRows;
  int64_t x[4] = {0, 0, 0, 0};
  int64_t y[4] = {0, 0, 0, 0};
  int64_t pool[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // kind, window, stride, pads, padded input

  bool operator==(const DescKey& o) const {
    return device == o.device && dtype == o.dtype && set == o.set && std::memcmp(x, o.x, sizeof(x)) == 0 &&
           std::memcmp(y, o.y, sizeof(y)) == 0 && std::memcmp(pool, o.pool, sizeof(pool)) == 0;
  }
  size_t hash() const {
    size_t h = 0;
    hash_combine(h, static_cast<uint64_t>(device));
    hash_combine(h, static_cast<uint64_t>(dtype));
    hash_combine(h, static_cast<uint64_t>(set));
    for (int64_t v : x) hash_combine(h, static_cast<uint64_t>(v));
    for (int64_t v : y) hash_combine(h, static_cast<uint64_t>(v));
    for (int64_t v : pool) hash_combine(h, static_cast<uint64_t>(v));
    return h;
  }
  std::string to_string() const {
    std::string out = "GPU " + std::to_string(device) + " " +
                      (set == DescSet::kPool ? "pool2d" : set == DescSet::kRows ? "softmax" : "batch_norm") +
                      " " + dtype_name(dtype) + " x";
    for (int64_t v : x) out += " " + std::to_string(v);
    return out;
  }
};

struct DescPlan {
  TensorDesc x, y, bn;
  PoolDesc pool;
  // Batch norm: cuDNN refused this shape in every dtype (batch_norm_route.h's run_batch_norm),
  // so its calls run in the backend's own kernels.
  mutable std::atomic<bool> batch_norm_refused{false};
};

PlanCache<DescKey, DescPlan>& desc_plans() {
  static auto* plans = new PlanCache<DescKey, DescPlan>();
  return *plans;
}

void require_nhwc(const TensorView& v, const char* op) {
  GA_CUDA_REQUIRE(v.ndim == 4 && v.is_contiguous(), std::string(op) + ": expected a contiguous NHWC tensor");
}

// The pooling descriptors of x_in (already padded when `padded_input`) -> y.
const DescPlan& pool_descs(int device, const TensorView& x_in, const TensorView& y, const Pool2dParams& p,
                           bool padded_input, const char* op) {
  require_nhwc(x_in, op);
  require_nhwc(y, op);
  DescKey k;
  k.device = device;
  k.dtype = x_in.dtype;
  k.set = DescSet::kPool;
  for (int d = 0; d < 4; ++d) {
    k.x[d] = x_in.shape[d];
    k.y[d] = y.shape[d];
  }
  const int64_t pool[10] = {static_cast<int64_t>(p.kind), p.window_h, p.window_w, p.stride_h, p.stride_w,
                            p.pad_top, p.pad_bottom, p.pad_left, p.pad_right, padded_input ? 1 : 0};
  std::memcpy(k.pool, pool, sizeof(pool));
  return desc_plans().get(k, [&] {
    auto d = std::make_unique<DescPlan>();
    set_pool(d->pool, p, padded_input);
    set_nhwc(d->x, x_in, op);
    set_nhwc(d->y, y, op);
    return d;
  });
}

// x as rows x C (softmax).
const DescPlan& rows_descs(int device, const TensorView& x, DescSet set, const char* op) {
  GA_CUDA_REQUIRE(x.ndim >= 1 && x.is_contiguous(), std::string(op) + ": expected a contiguous tensor");
  DescKey k;
  k.device = device;
  k.dtype = x.dtype;
  k.set = set;
  k.x[1] = x.shape[x.ndim - 1];
  k.x[0] = k.x[1] == 0 ? 0 : x.numel() / k.x[1];
  return desc_plans().get(k, [&] {
    auto d = std::make_unique<DescPlan>();
    set_rows(d->x, x, op);
    return d;
  });
}

// Batch norm's NHWC descriptor of x as `route` describes it (N the batch, H x W the spatial
// dimensions: batch_norm_route.h) in `dtype`, and the per-channel descriptor derived from it.
const DescPlan& batch_norm_descs(int device, DType dtype, const BatchNormRoute& route, const char* op) {
  DescKey k;
  k.device = device;
  k.dtype = dtype;
  k.set = DescSet::kBatchNorm;
  const int64_t x[4] = {route.n, route.h, route.w, route.c};
  std::memcpy(k.x, x, sizeof(x));
  return desc_plans().get(k, [&] {
    auto d = std::make_unique<DescPlan>();
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d->x.get(), CUDNN_TENSOR_NHWC, cudnn_type(dtype, op), to_int(route.n, "N"),
                                              to_int(route.c, "C"), to_int(route.h, "H"), to_int(route.w, "W")));
    GA_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(d->bn.get(), d->x.get(), CUDNN_BATCHNORM_SPATIAL));
    return d;
  });
}

}  // namespace

namespace {
// Bytes of the workspace's padded x (asymmetric max pooling only), before y's copy.
size_t workspace_x_bytes(const TensorView& x, const Pool2dParams& p) {
  return padded_max(p) ? aligned(bytes_of(padded_shape(x, pads_of(p), nullptr))) : 0;
}

// What pool2d_forward and pool2d_backward settle before cuDNN: `dtype` must be supported and
// match `other_dtype`; an empty `out` leaves nothing to do; asymmetric average pooling runs
// `direct` (cuDNN pads symmetrically only). True when nothing is left for cuDNN.
template <class Direct>
bool pool_settled_before_cudnn(int device, DType dtype, DType other_dtype, const TensorView& out,
                               const Pool2dParams& p, const char* op, const Direct& direct) {
  require_dtype_supported(device, dtype, op);
  GA_CUDA_REQUIRE(other_dtype == dtype, std::string(op) + ": dtypes differ");
  if (out.numel() == 0) return true;
  if (p.kind == PoolKind::kAverage && !symmetric(p)) {
    direct();
    return true;
  }
  return false;
}
}  // namespace

int64_t pool2d_workspace_bytes(int, const TensorView& x, const Pool2dParams& p, const TensorView& y) {
  return static_cast<int64_t>(workspace_x_bytes(x, p) + bytes_of(y));
}

void pool2d_forward(int device, const TensorView& x, const Pool2dParams& p, const TensorView& y,
                    void* workspace) {
  const char* op = "pool2d_forward";
  if (pool_settled_before_cudnn(device, x.dtype, y.dtype, y, p, op,
                                [&] { avg_pool2d_forward_direct(device, x, p, y); })) {
    return;
  }
  const bool pad = padded_max(p);
  const Conv2dParams q = pads_of(p);
  // The padded copy goes straight into the workspace when there is one (backward reads it).
  const size_t padded_bytes = pad ? bytes_of(padded_shape(x, q, nullptr)) : 0;
  ScratchBuffer padded_buf(device, pad && workspace == nullptr ? padded_bytes : 0);
  TensorView xin = x;
  if (pad) {
    xin = padded_shape(x, q, workspace != nullptr ? workspace : padded_buf.get());
    fill(device, xin, -std::numeric_limits<double>::infinity());
    copy(device, x, interior(xin, x, q));
  }
  const DescPlan& d = pool_descs(device, xin, y, p, pad, op);
  GA_CUDNN_CHECK(cudnnPoolingForward(cudnn_lease(device).get(), d.pool.get(), &kOne, d.x.get(), xin.data, &kZero,
                                     d.y.get(), y.data));
  if (workspace != nullptr) {
    char* ws = static_cast<char*>(workspace);
    GA_CUDA_CHECK(cudaMemcpyAsync(ws + workspace_x_bytes(x, p), y.data, bytes_of(y), cudaMemcpyDeviceToDevice,
                                  device_stream(device)));
  }
}

void pool2d_backward(int device, const TensorView& dy, const Pool2dParams& p, const void* workspace,
                     const TensorView& x_in, const TensorView& dx) {
  const char* op = "pool2d_backward";
  if (pool_settled_before_cudnn(device, dx.dtype, dy.dtype, dx, p, op,
                                [&] { avg_pool2d_backward_direct(device, dy, p, dx); })) {
    return;
  }
  const bool pad = padded_max(p);
  const Conv2dParams q = pads_of(p);
  ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(dx, q, nullptr)) : 0);
  const TensorView dxin = pad ? padded_shape(dx, q, padded_buf.get()) : dx;
  const DescPlan& d = pool_descs(device, dxin, dy, p, pad, op);
  const void* x = nullptr;
  const void* y = nullptr;
  if (workspace != nullptr) {
    GA_CUDA_REQUIRE(x_in.is_contiguous() && x_in.numel() == dx.numel() && x_in.dtype == dx.dtype,
                    "pool2d_backward: x must be the forward's contiguous input");
    x = pad ? workspace : x_in.data;
    y = static_cast<const char*>(workspace) + workspace_x_bytes(dx, p);
  } else {
    // Average pooling's gradient depends on neither x nor y; cuDNN still takes the pointers.
    GA_CUDA_REQUIRE(p.kind == PoolKind::kAverage,
                    "pool2d_backward: max pooling needs the workspace written by pool2d_forward");
    x = dx.data;
    y = dy.data;
  }
  GA_CUDNN_CHECK(cudnnPoolingBackward(cudnn_lease(device).get(), d.pool.get(), &kOne, d.y.get(), y, d.y.get(), dy.data,
                                      d.x.get(), x, &kZero, d.x.get(), dxin.data));
  if (pad) copy(device, interior(dxin, dx, q), dx);
}

// ---- softmax ----

void softmax_forward(int device, const TensorView& x, bool log, const TensorView& y) {
  const char* op = "softmax_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == y.dtype, "softmax_forward: dtypes differ");
  if (x.numel() == 0) return;
  GA_CUDA_REQUIRE(y.is_contiguous() && y.numel() == x.numel(), "softmax_forward: y must be contiguous like x");
  const DescPlan& d = rows_descs(device, x, DescSet::kRows, op);
  GA_CUDNN_CHECK(cudnnSoftmaxForward(cudnn_lease(device).get(), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                     CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, d.x.get(), x.data, &kZero, d.x.get(), y.data));
}

void softmax_backward(int device, const TensorView& y, const TensorView& dy, bool log, const TensorView& dx) {
  const char* op = "softmax_backward";
  require_dtype_supported(device, y.dtype, op);
  GA_CUDA_REQUIRE(y.dtype == dy.dtype && y.dtype == dx.dtype, "softmax_backward: dtypes differ");
  if (y.numel() == 0) return;
  GA_CUDA_REQUIRE(dy.is_contiguous() && dx.is_contiguous(), "softmax_backward: dy and dx must be contiguous");
  const cudnnTensorDescriptor_t d = rows_descs(device, y, DescSet::kRows, op).x.get();
  GA_CUDNN_CHECK(cudnnSoftmaxBackward(cudnn_lease(device).get(), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, d, y.data, d, dy.data, &kZero, d,
                                      dx.data));
}

// ---- batch normalization ----
//
// batch_norm_route.h decides what cuDNN is given: x as NHWC with N the batch (inputs with
// spatial dimensions, within cuDNN's bounds on N); the rest runs in the backend's own kernels
// (batch_norm.cu), as does a shape cuDNN refuses at run time. A 16-bit call cuDNN refuses is
// asked again on float32 copies, and only when cuDNN takes that was the dtype refused: then every
// later call of the dtype goes to float32 at once (run_batch_norm). Through cuDNN, the biased
// variance Keras normalizes with is the unbiased one cuDNN returns times (count - 1) / count,
// scaled by the backend's own kernels (fill and a broadcast multiply), not cuBLAS: a captured
// step then holds nothing but kernel launches, cuDNN's and ours.

namespace {

void check_params(const TensorView& x, std::initializer_list<const TensorView*> params, const char* op) {
  const int64_t c = x.shape[x.ndim - 1];
  for (const TensorView* v : params) {
    GA_CUDA_REQUIRE(v->dtype == DType::kFloat32 && v->numel() == c && v->is_contiguous(),
                    std::string(op) + ": gamma/beta/mean/var must be contiguous float32 (C,)");
  }
}

// Whether cuDNN refused batch norm on this 16-bit dtype itself (then it runs in float32); null
// for float32.
std::atomic<bool>* batch_norm_dtype_refused(DType dtype) {
  static std::atomic<bool> f16{false}, bf16{false};
  if (dtype == DType::kFloat32) return nullptr;
  return dtype == DType::kBFloat16 ? &bf16 : &f16;
}

// A float32 copy of `v` in `buffer` (converted on the device's stream).
TensorView float32_copy(int device, const TensorView& v, ScratchBuffer& buffer) {
  TensorView out = contiguous_like(v, buffer.get(), v.ndim, v.shape);
  out.dtype = DType::kFloat32;
  copy(device, v, out);
  return out;
}

// Runs one batch norm along `route`: `call(descriptors, inputs, outputs)` is cuDNN's call on views
// of one dtype, returning its status; `own()` the backend's kernels. `inputs` are read and
// `outputs` written, converted to and from float32 when cuDNN runs on float32 copies.
template <typename Call, typename Own>
void run_batch_norm_on(int device, const BatchNormRoute& route, const std::vector<const TensorView*>& inputs,
                       const std::vector<const TensorView*>& outputs, const char* op, Call&& call, Own&& own) {
  const DType dtype = inputs.front()->dtype;
  const DescPlan* plan = route.cudnn ? &batch_norm_descs(device, dtype, route, op) : nullptr;
  auto cudnn = [&](bool in_float32) -> int {
    if (!in_float32 || dtype == DType::kFloat32) return static_cast<int>(call(*plan, inputs, outputs));
    std::vector<std::unique_ptr<ScratchBuffer>> buffers;
    std::vector<TensorView> wide;
    for (const TensorView* v : inputs) {
      buffers.push_back(std::make_unique<ScratchBuffer>(device, static_cast<size_t>(v->numel()) * sizeof(float)));
      wide.push_back(float32_copy(device, *v, *buffers.back()));
    }
    for (const TensorView* v : outputs) {
      buffers.push_back(std::make_unique<ScratchBuffer>(device, static_cast<size_t>(v->numel()) * sizeof(float)));
      TensorView w = contiguous_like(*v, buffers.back()->get(), v->ndim, v->shape);
      w.dtype = DType::kFloat32;
      wide.push_back(w);
    }
    std::vector<const TensorView*> wide_inputs, wide_outputs;
    for (size_t i = 0; i < wide.size(); ++i) (i < inputs.size() ? wide_inputs : wide_outputs).push_back(&wide[i]);
    const cudnnStatus_t s = call(batch_norm_descs(device, DType::kFloat32, route, op), wide_inputs, wide_outputs);
    if (s == CUDNN_STATUS_SUCCESS) {
      for (size_t i = 0; i < outputs.size(); ++i) copy(device, *wide_outputs[i], *outputs[i]);
    }
    return static_cast<int>(s);
  };
  const BatchNormRefusals refused{batch_norm_dtype_refused(dtype), plan != nullptr ? &plan->batch_norm_refused : nullptr};
  run_batch_norm(route, refused, cudnn, own, [&](int s) {
    check_cudnn(static_cast<cudnnStatus_t>(s), op, __FILE__, __LINE__);
  });
}

}  // namespace

void batch_norm_forward(int device, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        const TensorView& mean, const TensorView& var, double epsilon, bool training,
                        const TensorView& y) {
  const char* op = "batch_norm_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == y.dtype && x.ndim >= 2, "batch_norm_forward: x and y must match, ndim >= 2");
  GA_CUDA_REQUIRE(x.is_contiguous() && y.is_contiguous() && x.numel() == y.numel(),
                  "batch_norm_forward: x and y must be contiguous and alike");
  check_params(x, {&gamma, &beta, &mean, &var}, op);
  if (x.numel() == 0) return;
  const BatchNormRoute route =
      batch_norm_route(x.ndim, x.shape, training ? BatchNormPass::kTraining : BatchNormPass::kInference);
  auto own = [&] { batch_norm_forward_own(device, x, gamma, beta, mean, var, epsilon, training, y); };
  if (!training) {
    run_batch_norm_on(device, route, {&x}, {&y}, op, [&](const DescPlan& d, const auto& in, const auto& out) {
      return cudnnBatchNormalizationForwardInference(cudnn_lease(device).get(), CUDNN_BATCHNORM_SPATIAL, &kOne,
                                                     &kZero, d.x.get(), in[0]->data, d.x.get(), out[0]->data,
                                                     d.bn.get(), gamma.data, beta.data, mean.data, var.data, epsilon);
    }, own);
    return;
  }
  // With an average factor of 1 the "running" statistics are exactly this batch's: the mean, and
  // the unbiased variance, rescaled below to the biased one Keras normalizes with. They start
  // from zeros so that 0 * (old contents) can never be NaN.
  const int64_t c = x.shape[x.ndim - 1];
  const int64_t count = x.numel() / c;
  bool through_cudnn = false;
  run_batch_norm_on(device, route, {&x}, {&y}, op, [&](const DescPlan& d, const auto& in, const auto& out) {
    const cudaStream_t stream = device_stream(device);
    GA_CUDA_CHECK(cudaMemsetAsync(mean.data, 0, c * sizeof(float), stream));
    GA_CUDA_CHECK(cudaMemsetAsync(var.data, 0, c * sizeof(float), stream));
    const cudnnStatus_t s = cudnnBatchNormalizationForwardTraining(
        cudnn_lease(device).get(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x.get(), in[0]->data, d.x.get(),
        out[0]->data, d.bn.get(), gamma.data, beta.data, 1.0, mean.data, var.data, epsilon, nullptr, nullptr);
    through_cudnn = s == CUDNN_STATUS_SUCCESS;
    return s;
  }, own);
  if (!through_cudnn) return;  // the own kernels wrote the biased variance
  // var *= (count - 1) / count, the factor broadcast from one float (stride 0).
  ScratchBuffer factor_buffer(device, sizeof(float));
  const int64_t one[1] = {1};
  TensorView factor = contiguous_like(var, factor_buffer.get(), 1, one);
  fill(device, factor, static_cast<double>(count - 1) / static_cast<double>(count));
  factor.shape[0] = c;
  factor.strides[0] = 0;
  binary(device, BinaryOp::kMul, var, factor, var);
}

void batch_norm_backward(int device, const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon, const TensorView& dx,
                         const TensorView& dgamma, const TensorView& dbeta) {
  const char* op = "batch_norm_backward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == dy.dtype && x.dtype == dx.dtype && x.ndim >= 2, "batch_norm_backward: dtypes differ");
  GA_CUDA_REQUIRE(x.is_contiguous() && dy.is_contiguous() && dx.is_contiguous() && x.numel() == dy.numel() &&
                      x.numel() == dx.numel(),
                  "batch_norm_backward: x, dy and dx must be contiguous and alike");
  check_params(x, {&gamma, &mean, &var, &dgamma, &dbeta}, op);
  if (x.numel() == 0) return;
  const BatchNormRoute route = batch_norm_route(x.ndim, x.shape, BatchNormPass::kBackward);
  // The saved statistics are optional: without them cuDNN recomputes this batch's mean and
  // variance from x, which are exactly the `mean`/`var` the training forward wrote.
  run_batch_norm_on(device, route, {&x, &dy}, {&dx}, op, [&](const DescPlan& d, const auto& in, const auto& out) {
    return cudnnBatchNormalizationBackward(cudnn_lease(device).get(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne,
                                           &kZero, d.x.get(), in[0]->data, d.x.get(), in[1]->data, d.x.get(),
                                           out[0]->data, d.bn.get(), gamma.data, dgamma.data, dbeta.data, epsilon,
                                           nullptr, nullptr);
  }, [&] { batch_norm_backward_own(device, x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta); });
}

#else  // no cuDNN at build time

namespace {
[[noreturn]] void no_cudnn(const char* op) {
  unimplemented(std::string(op) + ": this CUDA backend was built without cuDNN");
}
}  // namespace

void release_conv_workspace(int) {}
void conv2d_forward(int, const TensorView&, const TensorView&, const TensorView*, const Conv2dParams&,
                    const TensorView&) { no_cudnn("conv2d_forward"); }
void conv2d_backward_data(int, const TensorView&, const TensorView&, const Conv2dParams&,
                          const TensorView&) { no_cudnn("conv2d_backward_data"); }
void conv2d_transpose_forward(int, const TensorView&, const TensorView&, const TensorView*,
                              const Conv2dParams&, const TensorView&) {
  no_cudnn("conv2d_transpose_forward");
}
void conv2d_backward_weights(int, const TensorView&, const TensorView&, const Conv2dParams&,
                             const TensorView&, const TensorView*) { no_cudnn("conv2d_backward_weights"); }
int64_t pool2d_workspace_bytes(int, const TensorView&, const Pool2dParams&, const TensorView&) {
  return 0;
}
void pool2d_forward(int, const TensorView&, const Pool2dParams&, const TensorView&, void*) {
  no_cudnn("pool2d_forward");
}
void pool2d_backward(int, const TensorView&, const Pool2dParams&, const void*, const TensorView&, const TensorView&) {
  no_cudnn("pool2d_backward");
}
void softmax_forward(int, const TensorView&, bool, const TensorView&) { no_cudnn("softmax_forward"); }
void softmax_backward(int, const TensorView&, const TensorView&, bool, const TensorView&) {
  no_cudnn("softmax_backward");
}
void batch_norm_forward(int, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                        const TensorView&, double, bool, const TensorView&) { no_cudnn("batch_norm_forward"); }
void batch_norm_backward(int, const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                         const TensorView&, double, const TensorView&, const TensorView&, const TensorView&) {
  no_cudnn("batch_norm_backward");
}

#endif  // GPUACCEL_HAVE_CUDNN

}  // namespace gpuaccel::cuda
