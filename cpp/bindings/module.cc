// The gpuaccel._C extension module: the C++ core as the Python package sees it.
#include "bindings/bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "gpuaccel C++ core";
  using namespace gpuaccel::bindings;
  init_errors(m);
  init_devices(m);
  init_dtype(m);
  init_memory(m);
  init_profiler(m);
  init_hardware(m);
  init_self_check(m);
  init_tensor(m);
  init_python_function(m);
  init_nn(m);
  init_data(m);
  init_optim(m);
  init_layers(m);
  init_training(m);  // after the layer and optimizer classes it takes
  init_replicated_training(m);  // after the Trainer's classes
  init_collective(m);
}
