// Batched matmul with an optional bias through cuBLASLt: float32 with float32 compute (no TF32,
// so results match the CPU), float16 and bfloat16 with float32 accumulation (tensor cores; bf16
// needs compute capability 8.0+). Row-major views are handed to the column-major library as their
// transposes: C^T = B^T A^T, so no data moves; a strided operand that has no unit stride is made
// contiguous first. The bias epilogue adds bias[n] to every row (its pointer's alignment is part
// of the plan, see matmul_alignment.h). Plans (descriptors and the
// heuristic's algorithm) are cached per problem (backends/cuda/plan_cache.h), so a training step
// creates and asks nothing after its first call of a shape.
#include <cublasLt.h>

#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "backends/cuda/context.h"
#include "backends/cuda/library_handle.h"
#include "backends/cuda/matmul_alignment.h"
#include "backends/cuda/plan_cache.h"
#include "backends/cuda/ops.h"

namespace gpuaccel::cuda {

namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// A row-major (rows x cols) matrix with element strides, as cuBLASLt sees its transpose.
struct ColumnMajor {
  cublasOperation_t op;
  uint64_t rows, cols;  // of the stored column-major matrix
  int64_t ld;
};

// nullopt-like: ok=false when neither stride is 1 (the caller copies it contiguous).
bool describe(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, ColumnMajor* out) {
  // Stored column-major as X^T (cols x rows) when the columns of X are unit-stride.
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    *out = {CUBLAS_OP_N, static_cast<uint64_t>(cols), static_cast<uint64_t>(rows),
            rows == 1 ? std::max<int64_t>(cols, 1) : row_stride};
    return true;
  }
  // Stored column-major as X (rows x cols) when the rows of X are unit-stride; read transposed.
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    *out = {CUBLAS_OP_T, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols),
            cols == 1 ? std::max<int64_t>(rows, 1) : col_stride};
    return true;
  }
  return false;
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return CUDA_R_32F;
    case DType::kFloat16: return CUDA_R_16F;
    case DType::kBFloat16: return CUDA_R_16BF;
    case DType::kFloat64: return CUDA_R_64F;
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string("matmul: unsupported dtype ") + dtype_name(dtype) +
                         " (float32, float16, bfloat16, float64)");
}

// The cuBLASLt descriptors of one problem.
struct LtDescriptors {
  LibraryHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> op;
  LibraryHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> a, b, c;
};

void set_batch(cublasLtMatrixLayout_t layout, int32_t batch, int64_t stride) {
  GA_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                                   sizeof(batch)));
  GA_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                   &stride, sizeof(stride)));
}

// Per-device workspace from the device's pool, allocated once and kept (its pointer stays the
// same for every call, as a captured CUDA graph needs).
std::mutex workspace_mutex;
std::map<int, void*>& workspace_buffers() {
  static auto* buffers = new std::map<int, void*>();  // never destroyed, like the streams
  return *buffers;
}

void* workspace(int device) {
  std::lock_guard<std::mutex> lock(workspace_mutex);
  void*& p = workspace_buffers()[device];
  if (p == nullptr) {
    // Allocated during a capture it would come from the graph's private memory, which goes back
    // to the pool with the graph while this block is kept for every later call. The eager
    // warm-up step always allocates it first; refuse rather than keep a dangling block.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    GA_CUDA_CHECK(cudaStreamIsCapturing(device_stream(device), &status));
    GA_CUDA_REQUIRE(status == cudaStreamCaptureStatusNone,
                    "matmul: the cuBLASLt workspace cannot be first allocated inside a CUDA graph capture");
    p = device_services(device).allocate(kWorkspaceBytes, "cuBLASLt workspace");
  }
  return p;
}

// Everything a cuBLASLt plan depends on: the operands as the library sees them (our B is its
// A), batch, bias, and the alignment of the A, B and C/D pointers (matmul_alignment.h: the
// heuristic is told it, and its pick depends on it; the pool keeps it constant from step to step).
struct MatmulPlanKey {
  int device = 0;
  DType dtype = DType::kFloat32;
  ColumnMajor lib_a{}, lib_b{};  // our b, our a
  int64_t m = 0, n = 0;
  int32_t batch = 1;
  int64_t lib_a_batch_stride = 0, lib_b_batch_stride = 0;
  bool bias = false;
  uint32_t lib_a_alignment = kMaxMatmulAlignment, lib_b_alignment = kMaxMatmulAlignment;
  uint32_t out_alignment = kMaxMatmulAlignment;  // C and D are the same buffer
  uint32_t bias_alignment = kMaxMatmulAlignment;

  auto tie() const {
    return std::tie(device, dtype, lib_a.op, lib_a.rows, lib_a.cols, lib_a.ld, lib_b.op, lib_b.rows, lib_b.cols,
                    lib_b.ld, m, n, batch, lib_a_batch_stride, lib_b_batch_stride, bias, lib_a_alignment,
                    lib_b_alignment, out_alignment, bias_alignment);
  }
  bool operator==(const MatmulPlanKey& o) const { return tie() == o.tie(); }
  size_t hash() const {
    size_t h = 0;
    for (int64_t v : {int64_t(device), int64_t(dtype), int64_t(lib_a.op), int64_t(lib_a.rows), int64_t(lib_a.cols),
                      lib_a.ld, int64_t(lib_b.op), int64_t(lib_b.rows), int64_t(lib_b.cols), lib_b.ld, m, n,
                      int64_t(batch), lib_a_batch_stride, lib_b_batch_stride, int64_t(bias),
                      int64_t(lib_a_alignment), int64_t(lib_b_alignment), int64_t(out_alignment),
                      int64_t(bias_alignment)}) {
      hash_combine(h, static_cast<uint64_t>(v));
    }
    return h;
  }
  std::string to_string() const {
    return "GPU " + std::to_string(device) + " matmul " + dtype_name(dtype) + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " batch=" + std::to_string(batch) + (bias ? " +bias" : "");
  }
};

// A problem's descriptors and the algorithm cuBLASLt's heuristic picked for it. Only the bias
// pointer changes between calls; it is set on the cached descriptor under `mutex`, which also
// covers the launch.
struct MatmulPlan {
  LtDescriptors d;
  cublasLtMatmulAlgo_t algo{};
  std::mutex mutex;
};

PlanCache<MatmulPlanKey, MatmulPlan>& matmul_plans() {
  static auto* plans = new PlanCache<MatmulPlanKey, MatmulPlan>();
  return *plans;
}

// `bias`: the first call's bias pointer (null without bias), set before the heuristic runs so
// that it picks a kernel for that pointer's alignment.
std::unique_ptr<MatmulPlan> build_plan(const MatmulPlanKey& k, const void* bias) {
  auto plan = std::make_unique<MatmulPlan>();
  LtDescriptors& d = plan->d;
  const cudaDataType_t type = cuda_type(k.dtype);
  // float32 accumulation for the 16- and 32-bit dtypes: f16/bf16 inputs run on tensor cores, f32
  // without TF32. float64 accumulates and scales in float64.
  const bool float64 = k.dtype == DType::kFloat64;
  GA_CUBLAS_CHECK(cublasLtMatmulDescCreate(d.op.out(), float64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                           float64 ? CUDA_R_64F : CUDA_R_32F));
  const cublasLtMatmulDesc_t op = d.op.get();
  GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &k.lib_a.op, sizeof(k.lib_a.op)));
  GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &k.lib_b.op, sizeof(k.lib_b.op)));
  if (k.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    const int64_t bias_batch_stride = 0;  // the same bias for every batch entry
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_batch_stride,
                                                   sizeof(bias_batch_stride)));
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  GA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(d.a.out(), type, k.lib_a.rows, k.lib_a.cols, k.lib_a.ld));
  GA_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(d.b.out(), type, k.lib_b.rows, k.lib_b.cols, k.lib_b.ld));
  GA_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(d.c.out(), type, static_cast<uint64_t>(k.n), static_cast<uint64_t>(k.m), k.n));
  if (k.batch > 1) {
    set_batch(d.a.get(), k.batch, k.lib_a_batch_stride);
    set_batch(d.b.get(), k.batch, k.lib_b_batch_stride);
    set_batch(d.c.get(), k.batch, k.m * k.n);
  }
  LibraryHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  GA_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(pref.out()));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &kWorkspaceBytes, sizeof(kWorkspaceBytes));
  // Without these the heuristic assumes 256-byte aligned pointers (the preference's default)
  // and may pick a kernel that an operand starting inside a block cannot run.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, k.lib_a_alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, k.lib_b_alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, k.out_alignment},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, k.out_alignment}};
  for (const auto& [attribute, bytes] : alignments) {
    if (s == CUBLAS_STATUS_SUCCESS) {
      s = cublasLtMatmulPreferenceSetAttribute(pref.get(), attribute, &bytes, sizeof(bytes));
    }
  }
  if (s == CUBLAS_STATUS_SUCCESS) {
    s = cublasLtMatmulAlgoGetHeuristic(cublaslt_lease(k.device).get(), d.op.get(), d.a.get(), d.b.get(),
                                       d.c.get(), d.c.get(), pref.get(), 1, &result, &returned);
  }
  GA_CUBLAS_CHECK(s);
  if (returned == 0) {
    throw BackendError(CudaStatus::kUnimplemented, "matmul: cuBLASLt has no algorithm for " + k.to_string());
  }
  plan->algo = result.algo;
  return plan;
}

}  // namespace

void matmul(int device, const TensorView& a, const TensorView& b, const TensorView* bias,
            const TensorView& out) {
  GA_CUDA_REQUIRE(a.ndim == b.ndim && a.ndim == out.ndim && (a.ndim == 2 || a.ndim == 3),
                  "matmul: a, b and out must all be 2-d or all 3-d");
  GA_CUDA_REQUIRE(a.dtype == b.dtype && a.dtype == out.dtype, "matmul: a, b and out dtypes differ");
  cuda_type(a.dtype);  // throws InvalidArgument for a dtype other than float32/16, bfloat16, float64
  require_dtype_supported(device, a.dtype, "matmul");
  const int r = a.ndim - 2;
  const int64_t m = a.shape[r], k = a.shape[r + 1], n = b.shape[r + 1];
  GA_CUDA_REQUIRE(b.shape[r] == k && out.shape[r] == m && out.shape[r + 1] == n, "matmul: shapes do not align");
  const int64_t batch = a.ndim == 3 ? out.shape[0] : 1;
  GA_CUDA_REQUIRE(out.is_contiguous(), "matmul: out must be contiguous");
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {  // an empty sum
    fill(device, out, 0.0);
    if (bias != nullptr) {
      TensorView bias_rows = *bias;  // broadcast (N,) over out's shape
      bias_rows.ndim = out.ndim;
      for (int d = 0; d < out.ndim; ++d) {
        bias_rows.shape[d] = out.shape[d];
        bias_rows.strides[d] = d == out.ndim - 1 ? bias->strides[0] : 0;
      }
      copy(device, bias_rows, out);
    }
    return;
  }
  if (bias != nullptr && a.dtype == DType::kFloat64) {
    // float64 adds its bias after the product (the bias epilogue is a 16/32-bit feature).
    matmul(device, a, b, nullptr, out);
    TensorView bias_rows = *bias;  // broadcast (N,) over out's shape
    bias_rows.ndim = out.ndim;
    for (int d = 0; d < out.ndim; ++d) {
      bias_rows.shape[d] = out.shape[d];
      bias_rows.strides[d] = d == out.ndim - 1 ? bias->strides[0] : 0;
    }
    binary(device, BinaryOp::kAdd, out, bias_rows, out);
    return;
  }
  if (bias != nullptr) {
    GA_CUDA_REQUIRE(bias->dtype == out.dtype && bias->numel() == n && bias->is_contiguous(),
                    "matmul: bias must be a contiguous (N,) vector of out's dtype");
  }

  // Operands without a unit stride are copied contiguous (rare: frontends pass transposes).
  const size_t esize = dtype_size(a.dtype);
  auto operand = [&](const TensorView& v, int64_t rows, int64_t cols, ColumnMajor* desc,
                     std::unique_ptr<ScratchBuffer>* holder, int64_t* batch_stride) -> const void* {
    if (describe(rows, cols, v.strides[r], v.strides[r + 1], desc)) {
      *batch_stride = v.ndim == 3 ? v.strides[0] : 0;
      return v.data;
    }
    *holder = std::make_unique<ScratchBuffer>(device, static_cast<size_t>(v.numel()) * esize);
    TensorView dense = v;
    dense.data = (*holder)->get();
    int64_t stride = 1;
    for (int d = v.ndim - 1; d >= 0; --d) {
      dense.strides[d] = stride;
      stride *= v.shape[d];
    }
    copy(device, v, dense);
    describe(rows, cols, dense.strides[r], dense.strides[r + 1], desc);
    *batch_stride = v.ndim == 3 ? dense.strides[0] : 0;
    return dense.data;
  };
  ColumnMajor da{}, db{};
  std::unique_ptr<ScratchBuffer> a_copy, b_copy;
  int64_t a_batch_stride = 0, b_batch_stride = 0;
  // cuBLASLt computes D(n x m, column-major) = op(B^T) op(A^T): "A" of the library is our B.
  const void* pb = operand(b, k, n, &db, &b_copy, &b_batch_stride);
  const void* pa = operand(a, m, k, &da, &a_copy, &a_batch_stride);

  MatmulPlanKey key;
  key.device = device;
  key.dtype = a.dtype;
  key.lib_a = db;
  key.lib_b = da;
  key.m = m;
  key.n = n;
  key.batch = static_cast<int32_t>(batch);
  if (batch > 1) {
    key.lib_a_batch_stride = b_batch_stride;
    key.lib_b_batch_stride = a_batch_stride;
  }
  key.bias = bias != nullptr;
  key.lib_a_alignment = matmul_alignment(pb, key.lib_a_batch_stride * static_cast<int64_t>(esize));
  key.lib_b_alignment = matmul_alignment(pa, key.lib_b_batch_stride * static_cast<int64_t>(esize));
  key.out_alignment = matmul_alignment(out.data, batch > 1 ? m * n * static_cast<int64_t>(esize) : 0);
  std::unique_ptr<ScratchBuffer> bias_copy;
  const void* bias_ptr = bias != nullptr ? bias->data : nullptr;
  if (bias != nullptr && bias_needs_aligned_copy(bias_ptr)) {
    bias_copy = std::make_unique<ScratchBuffer>(device, static_cast<size_t>(n) * esize);
    TensorView aligned = *bias;
    aligned.data = bias_copy->get();
    copy(device, *bias, aligned);
    bias_ptr = aligned.data;
  }
  if (bias != nullptr) key.bias_alignment = matmul_alignment(bias_ptr);
  MatmulPlan& plan = matmul_plans().get(key, [&] { return build_plan(key, bias_ptr); });

  void* ws = workspace(device);
  // The scale type is the compute type's: double for float64, float otherwise.
  const float alpha = 1.0f, beta = 0.0f;
  const double alpha64 = 1.0, beta64 = 0.0;
  const bool float64 = a.dtype == DType::kFloat64;
  std::lock_guard<std::mutex> lock(plan.mutex);
  if (bias != nullptr) {
    GA_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.d.op.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                                   sizeof(bias_ptr)));
  }
  // The library's A is our b (layout d.a), its B our a (layout d.b).
  GA_CUBLAS_CHECK(cublasLtMatmul(cublaslt_lease(device).get(), plan.d.op.get(),
                                 float64 ? static_cast<const void*>(&alpha64) : &alpha, pb, plan.d.a.get(), pa,
                                 plan.d.b.get(), float64 ? static_cast<const void*>(&beta64) : &beta, out.data, plan.d.c.get(), out.data, plan.d.c.get(),
                                 &plan.algo, ws, kWorkspaceBytes, device_stream(device)));
}

void release_matmul_workspace(int device) {
  std::lock_guard<std::mutex> lock(workspace_mutex);
  auto found = workspace_buffers().find(device);
  if (found == workspace_buffers().end()) return;
  device_services(device).deallocate(found->second);
  workspace_buffers().erase(found);
}

}  // namespace gpuaccel::cuda
