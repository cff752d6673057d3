// What the core lends a device backend that lives in another shared library (the CUDA backend,
// or the tests' fake): the core's typed errors, the device's pool allocator for workspaces, and
// the profiler's launch brackets. A backend library links none of the core, so it gets these
// through this interface, handed to CudaLibrary::create_backend once per device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"

namespace gpuaccel {

// What a launch is on the profiler's device timeline.
enum class LaunchKind { kNone, kKernel, kCopy };

class BackendServices {
 public:
  virtual ~BackendServices() = default;

  // Throws the core's Error from the core's own code, so the exception carries the core's type
  // and any `catch (const Error&)` in the core or the bindings sees it.
  [[noreturn]] virtual void raise(ErrorCode code, const std::string& op,
                                  const std::string& message) = 0;
  // Called inside a library's catch (...) block: rethrows the exception being handled as the
  // core's Error (an Error the core threw passes unchanged; std::bad_alloc becomes
  // ResourceExhausted, any other std::exception Internal with its text).
  [[noreturn]] virtual void rethrow_current(const std::string& op) = 0;

  // Device memory from the device's pool, so memory_limit and the memory stats see it. Throws
  // the pool's ResourceExhaustedError (naming `op`) when the pool cannot serve it.
  virtual void* allocate(size_t bytes, const char* op) = 0;
  virtual void deallocate(void* ptr) = 0;

  // Graph capture's private memory (memory/capture_arena.h): from begin_capture_memory() to
  // end_capture_memory(), every allocation this thread makes on the device (tensors and
  // workspaces) comes from a new arena, which the returned handle keeps alive. The graph holds
  // the handle while it lives and gives it to release_capture_memory() when destroyed.
  virtual void* begin_capture_memory() = 0;
  virtual void end_capture_memory() = 0;
  virtual void release_capture_memory(void* memory) = 0;

  // Profiler brackets around one launch on the device's stream: begin returns null when the
  // profiler is off (then end and cancel do nothing); end queues the interval under the
  // current trace scope; cancel gives the start back when the launch failed.
  virtual void* launch_begin() = 0;
  virtual void launch_end(void* token, LaunchKind kind, const char* op, int64_t bytes) = 0;
  virtual void launch_cancel(void* token) = 0;
};

}  // namespace gpuaccel
