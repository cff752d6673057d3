// PLACEHOLDER binding for the memory area; replaced by its owner.
#include "bindings/bindings.h"

namespace gpuaccel::bindings {
void init_memory(pybind11::module_& /*m*/) {}
}  // namespace gpuaccel::bindings
