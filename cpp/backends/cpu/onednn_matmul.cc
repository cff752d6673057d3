// cpu::onednn_matmul (onednn_ops.h) on oneDNN's matmul primitive. Operand strides go to oneDNN as they
// are (a transpose costs nothing); a stride-0 batch dimension becomes oneDNN's size-1 implicit
// broadcast. Layouts oneDNN's GEMM kernels cannot read (neither of the two matrix dimensions
// unit-strided) are first copied to row-major. f16 is staged through f32.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/elementwise.h"
#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_ops.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

using namespace onednn;
using dnnl::memory;

namespace {

constexpr const char* kOp = "MatMul";

// True when the last two dimensions are row- or column-major with a usable leading dimension
// and the batch dimension (if any) is broadcast or does not overlap the matrices.
bool gemm_friendly(const TensorView& v) {
  const int r = v.ndim - 2, c = v.ndim - 1;
  const int64_t rows = v.shape[r], cols = v.shape[c];
  const int64_t sr = rows == 1 ? cols : v.strides[r];
  const int64_t sc = cols == 1 ? 1 : v.strides[c];
  const bool row_major = sc == 1 && sr >= cols;
  const bool col_major = sr == 1 && sc >= rows;
  if (!row_major && !col_major) return false;
  if (v.ndim == 3 && v.shape[0] > 1 && v.strides[0] != 0) {
    const int64_t extent = (rows - 1) * sr + (cols - 1) * sc + 1;
    if (v.strides[0] < extent) return false;
  }
  return true;
}

// A row-major copy of `v` in `buf` (same dtype), keeping a stride-0 batch broadcast.
TensorView row_major_copy(const TensorView& v, std::vector<uint8_t>& buf) {
  TensorView c = v;
  const bool batch_broadcast = v.ndim == 3 && v.strides[0] == 0;
  const int64_t batches = v.ndim == 3 && !batch_broadcast ? v.shape[0] : 1;
  const int64_t rows = v.shape[v.ndim - 2], cols = v.shape[v.ndim - 1];
  const size_t es = elem_size(v);
  buf.resize(static_cast<size_t>(batches * rows * cols) * es);
  c.data = buf.data();
  c.strides[v.ndim - 1] = 1;
  c.strides[v.ndim - 2] = cols;
  if (v.ndim == 3) c.strides[0] = batch_broadcast ? 0 : rows * cols;
  const int64_t sb = v.ndim == 3 ? v.strides[0] : 0;
  const int64_t sr = v.strides[v.ndim - 2], sc = v.strides[v.ndim - 1];
  const uint8_t* src = static_cast<const uint8_t*>(v.data);
  uint8_t* dst = buf.data();
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(dst + static_cast<size_t>((b * rows + i) * cols + j) * es,
                    src + static_cast<size_t>(b * sb + i * sr + j * sc) * es, es);
  return c;
}

// oneDNN dims/strides of an operand: a broadcast (stride 0) batch becomes a size-1 dimension;
// size-1 dimensions get a harmless dense stride.
void operand_desc(const TensorView& v, memory::dims& dims, memory::dims& strides) {
  dims.assign(v.shape, v.shape + v.ndim);
  strides.assign(v.strides, v.strides + v.ndim);
  const int r = v.ndim - 2, c = v.ndim - 1;
  if (v.ndim == 3 && (v.strides[0] == 0 || v.shape[0] == 1)) {
    dims[0] = 1;
    strides[0] = v.shape[r] * v.shape[c];
  }
  if (v.shape[c] == 1) strides[c] = 1;
  if (v.shape[r] == 1) strides[r] = v.shape[c] * strides[c];
}

void fill_k0(const TensorView* bias, const TensorView& out) {
  const int64_t n = out.shape[out.ndim - 1];
  const int64_t rows = out.numel() / (n == 0 ? 1 : n);
  const size_t es = elem_size(out);
  uint8_t* dst = static_cast<uint8_t*>(out.data);
  for (int64_t i = 0; i < rows; ++i) {
    if (bias != nullptr) {
      std::memcpy(dst + static_cast<size_t>(i * n) * es, bias->data, static_cast<size_t>(n) * es);
    } else {
      std::memset(dst + static_cast<size_t>(i * n) * es, 0, static_cast<size_t>(n) * es);
    }
  }
}

void run_native(const TensorView& a_in, const TensorView& b_in, const TensorView* bias,
                PostActivation activation, const TensorView& out) {
  std::vector<uint8_t> a_buf, b_buf;
  const TensorView a = gemm_friendly(a_in) ? a_in : row_major_copy(a_in, a_buf);
  const TensorView b = gemm_friendly(b_in) ? b_in : row_major_copy(b_in, b_buf);

  KeyBuilder key("matmul");
  key.add(a).add(b).add(out);
  if (bias != nullptr) key.add(*bias);
  key.add(static_cast<int64_t>(activation));

  auto entry = cached_primitive<dnnl::matmul>(key, [&] {
    memory::dims ad, as, bd, bs;
    operand_desc(a, ad, as);
    operand_desc(b, bd, bs);
    memory::dims od(out.shape, out.shape + out.ndim);
    const memory::desc a_md = strided_desc(ad, a.dtype, as);
    const memory::desc b_md = strided_desc(bd, b.dtype, bs);
    const memory::desc o_md = dense_desc(od, out.dtype);
    if (bias == nullptr) {
      return dnnl::matmul::primitive_desc(engine(), a_md, b_md, o_md, activation_attr(activation));
    }
    memory::dims biasd(out.ndim, 1);
    biasd.back() = out.shape[out.ndim - 1];
    return dnnl::matmul::primitive_desc(engine(), a_md, b_md, dense_desc(biasd, bias->dtype), o_md,
                                        activation_attr(activation));
  });

  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, make_memory(entry->pd.src_desc(), a.data)},
      {DNNL_ARG_WEIGHTS, make_memory(entry->pd.weights_desc(), b.data)},
      {DNNL_ARG_DST, make_memory(entry->pd.dst_desc(), out.data)},
      {DNNL_ARG_SCRATCHPAD, scratchpad_memory(entry->pd)}};
  if (bias != nullptr) args[DNNL_ARG_BIAS] = make_memory(entry->pd.bias_desc(), bias->data);
  entry->prim.execute(stream(), args);
  stream().wait();
}

}  // namespace

void onednn_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, PostActivation activation) {
  if (out.numel() == 0) return;
  if (a.shape[a.ndim - 1] == 0) {
    if (out.dtype == DType::kFloat16 || out.dtype == DType::kFloat32 ||
        out.dtype == DType::kBFloat16) {
      fill_k0(bias, out);
      if (activation == PostActivation::kRelu) unary(UnaryOp::kRelu, out, out);
      return;
    }
  }
  const auto batch_broadcast = [](const TensorView& v) {
    return v.ndim == 3 && (v.strides[0] == 0 || v.shape[0] == 1);
  };
  if (out.ndim == 3 && out.shape[0] > 1 && batch_broadcast(a) && batch_broadcast(b)) {
    // Every batch is the same product (oneDNN wants a real batch on one side): compute the
    // first and copy it.
    const auto drop_batch = [](TensorView v) {
      for (int d = 0; d < 2; ++d) {
        v.shape[d] = v.shape[d + 1];
        v.strides[d] = v.strides[d + 1];
      }
      v.ndim = 2;
      return v;
    };
    onednn_matmul(drop_batch(a), drop_batch(b), bias, drop_batch(out), activation);
    const size_t bytes = static_cast<size_t>(out.shape[1] * out.shape[2]) * elem_size(out);
    for (int64_t i = 1; i < out.shape[0]; ++i) {
      std::memcpy(static_cast<uint8_t*>(out.data) + static_cast<size_t>(i) * bytes, out.data,
                  bytes);
    }
    return;
  }
  // A small product is made for, and runs on, the calling thread alone (cpu_threads.h).
  const int64_t macs = out.numel() * a.shape[a.ndim - 1];
  ScopedOmpThreads serial(macs < kParallelMinMatmulMacs ? 1 : 0);
  guarded(kOp, [&] {
    if (!staged_through_f32(out.dtype)) {
      run_native(a, b, bias, activation, out);
      return;
    }
    // f16 (and bf16 without AVX-512): storage only (staged_through_f32); compute in f32.
    F32Copy a32 = to_f32(a), b32 = to_f32(b), o32 = f32_like(out);
    F32Copy bias32;
    if (bias != nullptr) bias32 = to_f32(*bias);
    run_native(a32.view, b32.view, bias != nullptr ? &bias32.view : nullptr, activation, o32.view);
    store_from_f32(o32.data.data(), out);
  });
}

}  // namespace gpuaccel::cpu
