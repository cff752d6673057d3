// The loss-scale finite check on the GPU (Backend::any_nonfinite): one multi-block launch over
// every gradient of a step, testing raw bits with kernels/nonfinite_functor.h (integer work, no
// float64 arithmetic, no float compare). It replaced a per-gradient "sum of x * 0" through reduce.cu, which
// ran one block per output summing in float64 (1/32 of float rate on a T4) and cost 3-4 launches
// per gradient.
//
// The tensors' (pointer, size, dtype) list travels as a kernel parameter, by value: a captured
// CUDA graph keeps it, and no host buffer has to outlive the launch. Each tensor is cut into
// tiles of kTileElements; blocks stride over the tiles of all tensors at once, read a tile in
// 16-byte vectors where it is aligned, and OR their verdict into the flag (zeroed first with a
// memset on the same stream). Nothing is read back: the flag stays on the device.
#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/nonfinite_functor.h"

namespace gpuaccel::cuda {

namespace {

constexpr int64_t kTileElements = 16 * 1024;
// Segments per launch: 32 bytes each keeps the parameter block under the 4 KiB every supported
// GPU and driver accepts. More tensors take more launches into the same flag.
constexpr int kMaxSegments = 64;
constexpr int64_t kMaxCheckBlocks = 2048;

struct Segment {
  const unsigned char* data;
  int64_t elements;
  int64_t first_tile;  // tiles of the segments before this one
  kernels::NonFiniteFunctor test;
};

struct SegmentBatch {
  Segment segments[kMaxSegments];
  int count;
  int64_t tiles;
};

// Element i's bits as the functor tests them (float64: its high, exponent-holding word).
__device__ __forceinline__ uint32_t load_bits(const Segment& s, int64_t i) {
  if (s.test.element_bytes == 8) return reinterpret_cast<const uint32_t*>(s.data)[2 * i + 1];
  return s.test.element_bytes == 4 ? reinterpret_cast<const uint32_t*>(s.data)[i]
                                   : reinterpret_cast<const uint16_t*>(s.data)[i];
}

// Whether elements [begin, end) of `s` hold an inf or NaN, this thread's share of them.
__device__ bool thread_finds_nonfinite(const Segment& s, int64_t begin, int64_t end) {
  bool found = false;
  const unsigned char* first = s.data + begin * s.test.element_bytes;
  const int64_t per_vector = 16 / s.test.element_bytes;
  int64_t vectors = 0;
  if ((reinterpret_cast<uintptr_t>(first) & 15u) == 0) {
    vectors = (end - begin) / per_vector;
    const uint4* v = reinterpret_cast<const uint4*>(first);
    for (int64_t k = threadIdx.x; k < vectors; k += blockDim.x) {
      const uint4 w = v[k];
      if (s.test.element_bytes == 8) {  // two float64: their high words are y and w
        found |= s.test(w.y) | s.test(w.w);
      } else {
        found |= s.test.any_in_word(w.x) | s.test.any_in_word(w.y) | s.test.any_in_word(w.z) |
                 s.test.any_in_word(w.w);
      }
    }
  }
  for (int64_t i = begin + vectors * per_vector + threadIdx.x; i < end; i += blockDim.x) {
    found |= s.test(load_bits(s, i));
  }
  return found;
}

__global__ void any_nonfinite_kernel(SegmentBatch batch, float* flag) {
  bool found = false;
  for (int64_t tile = blockIdx.x; tile < batch.tiles; tile += gridDim.x) {
    int s = 0;  // the segment holding `tile` (the same for every thread of the block)
    while (s + 1 < batch.count && batch.segments[s + 1].first_tile <= tile) ++s;
    const Segment& seg = batch.segments[s];
    const int64_t begin = (tile - seg.first_tile) * kTileElements;
    const int64_t end = begin + kTileElements < seg.elements ? begin + kTileElements : seg.elements;
    found |= thread_finds_nonfinite(seg, begin, end);
  }
  // Every thread reaches this barrier; one store per block that found something.
  if (__syncthreads_or(found) && threadIdx.x == 0) *flag = 1.0f;
}

kernels::NonFiniteFunctor test_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return kernels::NonFiniteFunctor::float32();
    case DType::kFloat16: return kernels::NonFiniteFunctor::float16();
    case DType::kBFloat16: return kernels::NonFiniteFunctor::bfloat16();
    case DType::kFloat64: return kernels::NonFiniteFunctor::float64();
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string("any_nonfinite: expected float32, float16, bfloat16 or float64 tensors, got ") +
                         dtype_name(dtype));
}

void launch_batch(SegmentBatch& batch, float* flag, cudaStream_t stream) {
  if (batch.count == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min(batch.tiles, kMaxCheckBlocks));
  any_nonfinite_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(batch, flag);
  GA_CUDA_CHECK(cudaGetLastError());
  batch.count = 0;
  batch.tiles = 0;
}

}  // namespace

void any_nonfinite(int device, const std::vector<TensorView>& tensors, const TensorView& flag) {
  GA_CUDA_REQUIRE(flag.dtype == DType::kFloat32 && flag.numel() == 1,
                  "any_nonfinite: the flag must be one float32 element");
  const cudaStream_t stream = device_stream(device);
  float* out = static_cast<float*>(flag.data);
  GA_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));  // 0.0f: all finite so far
  SegmentBatch batch{};
  for (const TensorView& v : tensors) {
    const int64_t n = v.numel();
    if (n == 0) continue;
    GA_CUDA_REQUIRE(v.is_contiguous(), "any_nonfinite: tensors must be contiguous");
    if (batch.count == kMaxSegments) launch_batch(batch, out, stream);
    batch.segments[batch.count++] =
        Segment{static_cast<const unsigned char*>(v.data), n, batch.tiles, test_for(v.dtype)};
    batch.tiles += (n + kTileElements - 1) / kTileElements;
  }
  launch_batch(batch, out, stream);
}

}  // namespace gpuaccel::cuda
