// The step of data-parallel training between the backward pass and the optimizer update: one
// replica's gradients summed with every other replica's through a Collective, under a profiler
// scope ("AllReduce", kind kCollective) so profiles and benchmarks can report its time.
#pragma once

#include <vector>

#include "distribute/collective.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// Replaces each gradient by the sum over all replicas of `weight` times it, in place in
// `grads` (`weight`: this replica's share of the global batch, as Keras divides per-example
// losses by the global batch size). A weight that got no gradient (undefined) contributes
// zeros; `params` gives the shape, dtype and device of each zero.
void all_reduce_gradients(Collective& collective, std::vector<Tensor>& grads,
                          const std::vector<Tensor>& params, double weight = 1.0);

}  // namespace gpuaccel::distribute
