// The step of data-parallel training between the backward pass and the optimizer update: one
// replica's gradients summed with every other replica's through a Collective, under a profiler
// scope ("AllReduce", kind kCollective) so profiles and benchmarks can report its time.
#pragma once

#include <vector>

#include "distribute/collective.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// Replaces each gradient by the sum over all replicas, in place in `grads`. A weight that got
// no gradient (undefined) contributes zeros; non-contiguous gradients are made contiguous
// first. `params` gives the shape, dtype and device of each zero.
void all_reduce_gradients(Collective& collective, std::vector<Tensor>& grads,
                          const std::vector<Tensor>& params);

}  // namespace gpuaccel::distribute
