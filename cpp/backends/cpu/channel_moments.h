// Per-channel batch statistics of a (rows, C) row-major tensor: the mean and the biased
// variance of each of the C columns over all rows, as batch normalization's training forward
// pass needs them.
//
// Why not oneDNN's own forward_training: on the 2-vCPU machines the course runs on, its JIT
// kernel's internal barrier stalls for 10-60 ms per call once the OpenMP workers have gone to
// sleep between ops (docs/benchmarks.md, "Normalization is the outlier"); computing the
// statistics here in one parallel region and normalizing with oneDNN's use_global_stats
// forward pass (no barrier) avoids it. The normalization itself stays oneDNN's.
#pragma once

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// mean[c], var[c] (float32 vectors of C) from x, float32 or bfloat16, contiguous. Sums are
// taken in double around a per-channel shift (the first row), so the variance does not lose
// its digits when the mean is large against the spread.
void channel_moments(const TensorView& x, const TensorView& mean, const TensorView& var);

}  // namespace gpuaccel::cpu
