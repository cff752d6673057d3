// Convolution, pooling, softmax and batch normalization through cuDNN 9's legacy (v7-style)
// API, which still ships in libcudnn_ops/libcudnn_cnn. Layouts: activations are NHWC as Keras's
// default, described to cuDNN as NHWC tensors. Keras kernels are HWIO (KH, KW, C, F), while an
// NHWC cuDNN filter is KRSC (F, KH, KW, C): the kernel is transposed into a scratch buffer with
// the backend's strided copy (and dw transposed back), which costs one small copy per call.
// cuDNN pads symmetrically only, so asymmetric ('same' with an odd total) convolution padding
// is done by convolving a zero-padded copy of the input (pooling: see its section). f16 uses
// tensor-op math with float32 accumulation; f32 uses FMA math (no TF32), so results match the CPU.
#include <limits>
#include <string>

#include "backends/cuda/context.h"
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

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { GA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d)); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { GA_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d)); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() { GA_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d)); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};
struct PoolDesc {
  cudnnPoolingDescriptor_t d = nullptr;
  PoolDesc() { GA_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d)); }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
};

// (N, H, W, C) view -> an NHWC cuDNN tensor.
void set_nhwc(const TensorDesc& t, const TensorView& v, const char* op) {
  GA_CUDA_REQUIRE(v.ndim == 4 && v.is_contiguous(), std::string(op) + ": expected a contiguous NHWC tensor");
  GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NHWC, cudnn_type(v.dtype, op),
                                            to_int(v.shape[0], "N"), to_int(v.shape[3], "C"),
                                            to_int(v.shape[1], "H"), to_int(v.shape[2], "W")));
}

// (..., C) contiguous view -> rows x C x 1 x 1.
void set_rows(const TensorDesc& t, const TensorView& v, const char* op) {
  GA_CUDA_REQUIRE(v.ndim >= 1 && v.is_contiguous(), std::string(op) + ": expected a contiguous tensor");
  const int64_t c = v.shape[v.ndim - 1];
  const int64_t rows = c == 0 ? 0 : v.numel() / c;
  GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NCHW, cudnn_type(v.dtype, op),
                                            to_int(rows, "rows"), to_int(c, "C"), 1, 1));
}

// Scale factors: float for float/half/bf16 data (cuDNN's rule for everything but double).
const float kOne = 1.0f;
const float kZero = 0.0f;

// ---- convolution ----

struct ConvSetup {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

bool symmetric(const Conv2dParams& p) {
  return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right;
}

void set_conv(ConvSetup& s, DType dtype, const Conv2dParams& p, bool padded_input) {
  const int ph = padded_input ? 0 : to_int(p.pad_top, "pad");
  const int pw = padded_input ? 0 : to_int(p.pad_left, "pad");
  GA_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      s.conv.d, ph, pw, to_int(p.stride_h, "stride"), to_int(p.stride_w, "stride"),
      to_int(p.dilation_h, "dilation"), to_int(p.dilation_w, "dilation"), CUDNN_CROSS_CORRELATION,
      CUDNN_DATA_FLOAT));
  GA_CUDNN_CHECK(cudnnSetConvolutionMathType(
      s.conv.d, dtype == DType::kFloat32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
}

// Keras (KH, KW, C, F) view of w, read as (F, KH, KW, C).
TensorView hwio_as_krsc(const TensorView& w) {
  TensorView v = w;
  v.shape[0] = w.shape[3]; v.strides[0] = w.strides[3];
  v.shape[1] = w.shape[0]; v.strides[1] = w.strides[0];
  v.shape[2] = w.shape[1]; v.strides[2] = w.strides[1];
  v.shape[3] = w.shape[2]; v.strides[3] = w.strides[2];
  return v;
}

void set_filter(const FilterDesc& f, const TensorView& w_hwio, const char* op) {
  GA_CUDA_REQUIRE(w_hwio.ndim == 4, std::string(op) + ": the kernel must be (KH, KW, C, F)");
  GA_CUDNN_CHECK(cudnnSetFilter4dDescriptor(f.d, cudnn_type(w_hwio.dtype, op), CUDNN_TENSOR_NHWC,
                                            to_int(w_hwio.shape[3], "F"), to_int(w_hwio.shape[2], "C"),
                                            to_int(w_hwio.shape[0], "KH"), to_int(w_hwio.shape[1], "KW")));
}

// The kernel in KRSC order in a scratch buffer.
TensorView krsc_copy(int device, const TensorView& w, ScratchBuffer& buffer) {
  const TensorView src = hwio_as_krsc(w);
  const TensorView dst = contiguous_like(w, buffer.get(), 4, src.shape);
  copy(device, src, dst);
  return dst;
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

}  // namespace

void conv2d_forward(int device, const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y) {
  const char* op = "conv2d_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == w.dtype && x.dtype == y.dtype, "conv2d_forward: dtypes differ");
  if (y.numel() == 0) return;
  cudnnHandle_t h = cudnn_handle(device);
  const bool pad = !symmetric(p);
  ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(x, p, nullptr)) : 0);
  TensorView xin = x;
  if (pad) {
    xin = padded_shape(x, p, padded_buf.get());
    fill(device, xin, 0.0);
    copy(device, x, interior(xin, x, p));
  }
  ScratchBuffer w_buf(device, bytes_of(w));
  const TensorView wk = krsc_copy(device, w, w_buf);
  ConvSetup s;
  set_nhwc(s.x, xin, op);
  set_nhwc(s.y, y, op);
  set_filter(s.w, w, op);
  set_conv(s, x.dtype, p, pad);

  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int returned = 0;
  GA_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, s.x.d, s.w.d, s.conv.d, s.y.d, 8, &returned, perf));
  int pick = -1;
  for (int i = 0; i < returned && pick < 0; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = i;
  }
  if (pick < 0) unimplemented("conv2d_forward: cuDNN has no algorithm for this convolution");
  GA_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.d, perf[pick].mathType));
  size_t ws_bytes = 0;
  GA_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, s.x.d, s.w.d, s.conv.d, s.y.d, perf[pick].algo, &ws_bytes));
  ScratchBuffer ws(device, ws_bytes);
  GA_CUDNN_CHECK(cudnnConvolutionForward(h, &kOne, s.x.d, xin.data, s.w.d, wk.data, s.conv.d, perf[pick].algo,
                                         ws.get(), ws_bytes, &kZero, s.y.d, y.data));
  if (bias != nullptr) {
    GA_CUDA_REQUIRE(bias->dtype == y.dtype && bias->numel() == y.shape[3], "conv2d_forward: bias must be (F,)");
    TensorDesc b;
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.d, CUDNN_TENSOR_NHWC, cudnn_type(bias->dtype, op), 1,
                                              to_int(y.shape[3], "F"), 1, 1));
    GA_CUDNN_CHECK(cudnnAddTensor(h, &kOne, b.d, bias->data, &kOne, s.y.d, y.data));
  }
}

void conv2d_backward_data(int device, const TensorView& dy, const TensorView& w,
                          const Conv2dParams& p, const TensorView& dx) {
  const char* op = "conv2d_backward_data";
  require_dtype_supported(device, dx.dtype, op);
  GA_CUDA_REQUIRE(dy.dtype == w.dtype && dy.dtype == dx.dtype, "conv2d_backward_data: dtypes differ");
  if (dx.numel() == 0) return;
  cudnnHandle_t h = cudnn_handle(device);
  const bool pad = !symmetric(p);
  ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(dx, p, nullptr)) : 0);
  const TensorView dxin = pad ? padded_shape(dx, p, padded_buf.get()) : dx;
  ScratchBuffer w_buf(device, bytes_of(w));
  const TensorView wk = krsc_copy(device, w, w_buf);
  ConvSetup s;
  set_nhwc(s.x, dxin, op);
  set_nhwc(s.y, dy, op);
  set_filter(s.w, w, op);
  set_conv(s, dx.dtype, p, pad);

  cudnnConvolutionBwdDataAlgoPerf_t perf[8];
  int returned = 0;
  GA_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s.w.d, s.y.d, s.conv.d, s.x.d, 8, &returned, perf));
  int pick = -1;
  for (int i = 0; i < returned && pick < 0; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = i;
  }
  if (pick < 0) unimplemented("conv2d_backward_data: cuDNN has no algorithm for this convolution");
  GA_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.d, perf[pick].mathType));
  size_t ws_bytes = 0;
  GA_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, s.w.d, s.y.d, s.conv.d, s.x.d, perf[pick].algo,
                                                              &ws_bytes));
  ScratchBuffer ws(device, ws_bytes);
  GA_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &kOne, s.w.d, wk.data, s.y.d, dy.data, s.conv.d, perf[pick].algo,
                                              ws.get(), ws_bytes, &kZero, s.x.d, dxin.data));
  if (pad) copy(device, interior(dxin, dx, p), dx);
}

void conv2d_backward_weights(int device, const TensorView& x, const TensorView& dy,
                             const Conv2dParams& p, const TensorView& dw,
                             const TensorView* dbias) {
  const char* op = "conv2d_backward_weights";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == dy.dtype && x.dtype == dw.dtype, "conv2d_backward_weights: dtypes differ");
  cudnnHandle_t h = cudnn_handle(device);
  if (dw.numel() > 0) {
    const bool pad = !symmetric(p);
    ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(x, p, nullptr)) : 0);
    TensorView xin = x;
    if (pad) {
      xin = padded_shape(x, p, padded_buf.get());
      fill(device, xin, 0.0);
      copy(device, x, interior(xin, x, p));
    }
    ScratchBuffer w_buf(device, bytes_of(dw));
    const TensorView krsc_src = hwio_as_krsc(dw);  // dw's HWIO memory read as KRSC
    const TensorView dwk = contiguous_like(dw, w_buf.get(), 4, krsc_src.shape);
    ConvSetup s;
    set_nhwc(s.x, xin, op);
    set_nhwc(s.y, dy, op);
    set_filter(s.w, dw, op);
    set_conv(s, x.dtype, p, pad);
    cudnnConvolutionBwdFilterAlgoPerf_t perf[8];
    int returned = 0;
    GA_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s.x.d, s.y.d, s.conv.d, s.w.d, 8, &returned, perf));
    int pick = -1;
    for (int i = 0; i < returned && pick < 0; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS) pick = i;
    }
    if (pick < 0) unimplemented("conv2d_backward_weights: cuDNN has no algorithm for this convolution");
    GA_CUDNN_CHECK(cudnnSetConvolutionMathType(s.conv.d, perf[pick].mathType));
    size_t ws_bytes = 0;
    GA_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, s.x.d, s.y.d, s.conv.d, s.w.d,
                                                                  perf[pick].algo, &ws_bytes));
    ScratchBuffer ws(device, ws_bytes);
    GA_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, &kOne, s.x.d, xin.data, s.y.d, dy.data, s.conv.d,
                                                  perf[pick].algo, ws.get(), ws_bytes, &kZero, s.w.d, dwk.data));
    // KRSC back into Keras's HWIO.
    TensorView dst = hwio_as_krsc(dw);
    copy(device, dwk, dst);
  }
  if (dbias != nullptr && dbias->numel() > 0) {
    GA_CUDA_REQUIRE(dbias->dtype == dy.dtype && dbias->numel() == dy.shape[3],
                    "conv2d_backward_weights: dbias must be (F,)");
    TensorDesc dyd, b;
    set_nhwc(dyd, dy, op);
    GA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(b.d, CUDNN_TENSOR_NHWC, cudnn_type(dbias->dtype, op), 1,
                                              to_int(dy.shape[3], "F"), 1, 1));
    GA_CUDNN_CHECK(cudnnConvolutionBackwardBias(h, &kOne, dyd.d, dy.data, &kZero, b.d, dbias->data));
  }
}

// ---- pooling ----
//
// Asymmetric padding: max pooling runs cuDNN without padding on a copy of x padded with -inf
// (a padded element never wins a window that holds an input element, as oneDNN ignores padding;
// only an all -inf window could route its gradient to the padding). For backward the workspace
// then holds the padded copy instead of x. Average pooling goes to the direct kernels of
// avg_pool.cu, since a padded copy would count the padding in the divisor.

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
  GA_CUDNN_CHECK(cudnnSetPooling2dDescriptor(d.d, mode, CUDNN_PROPAGATE_NAN, to_int(p.window_h, "window"),
                                             to_int(p.window_w, "window"), ph, pw, to_int(p.stride_h, "stride"),
                                             to_int(p.stride_w, "stride")));
}

// Max pooling with asymmetric padding reads a padded x (built by the forward pass).
bool padded_max(const Pool2dParams& p) { return p.kind == PoolKind::kMax && !symmetric(p); }

}  // namespace

int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p, const TensorView& y) {
  // Copies of x (padded with -inf for asymmetric max pooling) and y: cuDNN's pooling backward
  // reads both.
  const size_t x_bytes = padded_max(p) ? bytes_of(padded_shape(x, pads_of(p), nullptr)) : bytes_of(x);
  return static_cast<int64_t>(aligned(x_bytes) + bytes_of(y));
}

void pool2d_forward(int device, const TensorView& x, const Pool2dParams& p, const TensorView& y,
                    void* workspace) {
  const char* op = "pool2d_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == y.dtype, "pool2d_forward: dtypes differ");
  if (y.numel() == 0) return;
  if (p.kind == PoolKind::kAverage && !symmetric(p)) {
    avg_pool2d_forward_direct(device, x, p, y);
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
  PoolDesc pd;
  set_pool(pd, p, pad);
  TensorDesc xd, yd;
  set_nhwc(xd, xin, op);
  set_nhwc(yd, y, op);
  GA_CUDNN_CHECK(cudnnPoolingForward(cudnn_handle(device), pd.d, &kOne, xd.d, xin.data, &kZero, yd.d, y.data));
  if (workspace != nullptr) {
    char* ws = static_cast<char*>(workspace);
    const cudaStream_t stream = device_stream(device);
    if (!pad) GA_CUDA_CHECK(cudaMemcpyAsync(ws, x.data, bytes_of(x), cudaMemcpyDeviceToDevice, stream));
    GA_CUDA_CHECK(cudaMemcpyAsync(ws + aligned(bytes_of(xin)), y.data, bytes_of(y), cudaMemcpyDeviceToDevice,
                                  stream));
  }
}

void pool2d_backward(int device, const TensorView& dy, const Pool2dParams& p, const void* workspace,
                     const TensorView& dx) {
  const char* op = "pool2d_backward";
  require_dtype_supported(device, dx.dtype, op);
  GA_CUDA_REQUIRE(dy.dtype == dx.dtype, "pool2d_backward: dtypes differ");
  if (dx.numel() == 0) return;
  if (p.kind == PoolKind::kAverage && !symmetric(p)) {
    avg_pool2d_backward_direct(device, dy, p, dx);
    return;
  }
  const bool pad = padded_max(p);
  const Conv2dParams q = pads_of(p);
  ScratchBuffer padded_buf(device, pad ? bytes_of(padded_shape(dx, q, nullptr)) : 0);
  const TensorView dxin = pad ? padded_shape(dx, q, padded_buf.get()) : dx;
  PoolDesc pd;
  set_pool(pd, p, pad);
  TensorDesc xd, yd;
  set_nhwc(xd, dxin, op);
  set_nhwc(yd, dy, op);
  const void* x = nullptr;
  const void* y = nullptr;
  if (workspace != nullptr) {
    x = workspace;
    y = static_cast<const char*>(workspace) + aligned(bytes_of(dxin));
  } else {
    // Average pooling's gradient depends on neither x nor y; cuDNN still takes the pointers.
    GA_CUDA_REQUIRE(p.kind == PoolKind::kAverage,
                    "pool2d_backward: max pooling needs the workspace written by pool2d_forward");
    x = dx.data;
    y = dy.data;
  }
  GA_CUDNN_CHECK(cudnnPoolingBackward(cudnn_handle(device), pd.d, &kOne, yd.d, y, yd.d, dy.data, xd.d, x, &kZero,
                                      xd.d, dxin.data));
  if (pad) copy(device, interior(dxin, dx, q), dx);
}

// ---- softmax ----

void softmax_forward(int device, const TensorView& x, bool log, const TensorView& y) {
  const char* op = "softmax_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == y.dtype, "softmax_forward: dtypes differ");
  if (x.numel() == 0) return;
  TensorDesc xd, yd;
  set_rows(xd, x, op);
  set_rows(yd, y, op);
  GA_CUDNN_CHECK(cudnnSoftmaxForward(cudnn_handle(device), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                     CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, xd.d, x.data, &kZero, yd.d, y.data));
}

void softmax_backward(int device, const TensorView& y, const TensorView& dy, bool log, const TensorView& dx) {
  const char* op = "softmax_backward";
  require_dtype_supported(device, y.dtype, op);
  GA_CUDA_REQUIRE(y.dtype == dy.dtype && y.dtype == dx.dtype, "softmax_backward: dtypes differ");
  if (y.numel() == 0) return;
  TensorDesc d;
  set_rows(d, y, op);
  GA_CUDNN_CHECK(cudnnSoftmaxBackward(cudnn_handle(device), log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                      CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, d.d, y.data, d.d, dy.data, &kZero, d.d,
                                      dx.data));
}

// ---- batch normalization ----

namespace {

void check_params(const TensorView& x, std::initializer_list<const TensorView*> params, const char* op) {
  const int64_t c = x.shape[x.ndim - 1];
  for (const TensorView* v : params) {
    GA_CUDA_REQUIRE(v->dtype == DType::kFloat32 && v->numel() == c && v->is_contiguous(),
                    std::string(op) + ": gamma/beta/mean/var must be contiguous float32 (C,)");
  }
}

}  // namespace

void batch_norm_forward(int device, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        const TensorView& mean, const TensorView& var, double epsilon, bool training,
                        const TensorView& y) {
  const char* op = "batch_norm_forward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == y.dtype && x.ndim >= 2, "batch_norm_forward: x and y must match, ndim >= 2");
  check_params(x, {&gamma, &beta, &mean, &var}, op);
  if (x.numel() == 0) return;
  cudnnHandle_t h = cudnn_handle(device);
  TensorDesc xd, bn;
  set_rows(xd, x, op);
  GA_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bn.d, xd.d, CUDNN_BATCHNORM_SPATIAL));
  if (!training) {
    GA_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, xd.d, x.data,
                                                           xd.d, y.data, bn.d, gamma.data, beta.data, mean.data,
                                                           var.data, epsilon));
    return;
  }
  // With an average factor of 1 the "running" statistics are exactly this batch's: the mean, and
  // the unbiased variance, rescaled below to the biased one Keras normalizes with. They start
  // from zeros so that 0 * (old contents) can never be NaN.
  const int64_t c = x.shape[x.ndim - 1];
  const int64_t count = x.numel() / c;
  const cudaStream_t stream = device_stream(device);
  GA_CUDA_CHECK(cudaMemsetAsync(mean.data, 0, c * sizeof(float), stream));
  GA_CUDA_CHECK(cudaMemsetAsync(var.data, 0, c * sizeof(float), stream));
  GA_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, xd.d, x.data,
                                                        xd.d, y.data, bn.d, gamma.data, beta.data, 1.0, mean.data,
                                                        var.data, epsilon, nullptr, nullptr));
  if (count <= 1) {
    GA_CUDA_CHECK(cudaMemsetAsync(var.data, 0, c * sizeof(float), stream));
  } else {
    const float biased = static_cast<float>(static_cast<double>(count - 1) / static_cast<double>(count));
    GA_CUBLAS_CHECK(cublasSscal(cublas_handle(device), to_int(c, "C"), &biased, static_cast<float*>(var.data), 1));
  }
}

void batch_norm_backward(int device, const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon, const TensorView& dx,
                         const TensorView& dgamma, const TensorView& dbeta) {
  const char* op = "batch_norm_backward";
  require_dtype_supported(device, x.dtype, op);
  GA_CUDA_REQUIRE(x.dtype == dy.dtype && x.dtype == dx.dtype && x.ndim >= 2, "batch_norm_backward: dtypes differ");
  check_params(x, {&gamma, &mean, &var, &dgamma, &dbeta}, op);
  if (x.numel() == 0) return;
  TensorDesc xd, bn;
  set_rows(xd, x, op);
  GA_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bn.d, xd.d, CUDNN_BATCHNORM_SPATIAL));
  // The saved statistics are optional: without them cuDNN recomputes this batch's mean and
  // variance from x, which are exactly the `mean`/`var` the training forward wrote.
  GA_CUDNN_CHECK(cudnnBatchNormalizationBackward(cudnn_handle(device), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero,
                                                 &kOne, &kZero, xd.d, x.data, xd.d, dy.data, xd.d, dx.data, bn.d,
                                                 gamma.data, dgamma.data, dbeta.data, epsilon, nullptr, nullptr));
}

#else  // no cuDNN at build time

namespace {
[[noreturn]] void no_cudnn(const char* op) {
  unimplemented(std::string(op) + ": this CUDA backend was built without cuDNN");
}
}  // namespace

void conv2d_forward(int, const TensorView&, const TensorView&, const TensorView*, const Conv2dParams&,
                    const TensorView&) { no_cudnn("conv2d_forward"); }
void conv2d_backward_data(int, const TensorView&, const TensorView&, const Conv2dParams&,
                          const TensorView&) { no_cudnn("conv2d_backward_data"); }
void conv2d_backward_weights(int, const TensorView&, const TensorView&, const Conv2dParams&,
                             const TensorView&, const TensorView*) { no_cudnn("conv2d_backward_weights"); }
int64_t pool2d_workspace_bytes(const TensorView&, const Pool2dParams&, const TensorView&) { return 0; }
void pool2d_forward(int, const TensorView&, const Pool2dParams&, const TensorView&, void*) {
  no_cudnn("pool2d_forward");
}
void pool2d_backward(int, const TensorView&, const Pool2dParams&, const void*, const TensorView&) {
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
