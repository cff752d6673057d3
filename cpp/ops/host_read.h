// Reading device values on the host, the one place a training step's results cross back: the
// scalars are packed into one float32 vector on their device and copied with a single
// copy_to_host (which waits for the work that produced them). Everything that must not stall a
// step (the running loss, metrics, deferred label checks) is read through here, only when asked.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel {

// The values of `scalars` (one element each, any numeric dtype, defined) as doubles, in order,
// with one packing kernel per scalar and one device-to-host copy in all. Scalars on other
// devices than the first are moved there first. Empty input reads nothing.
std::vector<double> read_scalars(const std::vector<Tensor>& scalars);

}  // namespace gpuaccel
