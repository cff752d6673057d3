// PLACEHOLDER binding for the hardware area; replaced by its owner.
#include "bindings/bindings.h"

namespace gpuaccel::bindings {
void init_hardware(pybind11::module_& /*m*/) {}
}  // namespace gpuaccel::bindings
