// PLACEHOLDER binding for the dtype area; replaced by its owner.
#include "bindings/bindings.h"

namespace gpuaccel::bindings {
void init_dtype(pybind11::module_& /*m*/) {}
}  // namespace gpuaccel::bindings
