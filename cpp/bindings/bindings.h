// One init function per area of the core; module.cc calls them in dependency order.
#pragma once

#include <pybind11/pybind11.h>

namespace gpuaccel::bindings {

void init_errors(pybind11::module_& m);   // error translation (errors.cc)
void init_devices(pybind11::module_& m);  // registry, configuration, placement (devices.cc)
void init_dtype(pybind11::module_& m);    // dtypes and f16/bf16 conversions (dtype.cc)
void init_memory(pybind11::module_& m);   // pooling allocator stats and controls (memory.cc)
void init_profiler(pybind11::module_& m); // trace recorder, gpuaccel._C.profiler (profiler.cc)
void init_hardware(pybind11::module_& m); // CUDA backend, versions, CPU ISA, smi (hardware.cc)
void init_self_check(pybind11::module_& m); // device self-check matmul (self_check.cc)
void init_tensor(pybind11::module_& m);     // Tensor, op frontends, autograd (tensor.cc)
void init_python_function(pybind11::module_& m);  // autograd node with a Python backward (python_function_node.cc)
void init_nn(pybind11::module_& m);         // neural-network ops (nn.cc)
void init_data(pybind11::module_& m);       // input pipeline: prefetcher, row gather (data.cc)
void init_layers(pybind11::module_& m);     // Keras layers, gpuaccel._C.layers (layers.cc)
void init_training(pybind11::module_& m);   // losses, metrics, layer graph, Trainer (training.cc)
void init_optim(pybind11::module_& m);     // optimizers, gpuaccel._C.optim (optim.cc)
void init_replicated_training(pybind11::module_& m);  // fit under a strategy (replicated_training.cc)
void init_collective(pybind11::module_& m); // multi-worker engines, gpuaccel._C.collective (collective_bindings.cc)

}  // namespace gpuaccel::bindings
