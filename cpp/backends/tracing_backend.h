// The profiling decorator of a Backend (see tracing_backend.cc): backend_for() returns it
// instead of the real backend while a profiler session records.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/backend.h"

namespace gpuaccel {

// The process-lifetime decorator of `inner`, the backend of `device` (-1: the CPU, otherwise
// the physical GPU index). `inner` must live for the process (backends do).
Backend& tracing_backend(Backend& inner, int32_t device);
// A decorator owned by the caller, for tests that trace a backend of their own.
std::unique_ptr<Backend> make_tracing_backend(Backend& inner, int32_t device);

}  // namespace gpuaccel
