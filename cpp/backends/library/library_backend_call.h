// How a backend living in another shared library runs each op (header-only, compiled into that
// library): the profiler brackets from BackendServices around the launch, and every exception
// turned into the core's typed error before it leaves the library. The library throws
// LibraryOpError (its own copy of the type, caught in the library); whatever else escapes the
// op -- the core's own Error from a pool allocation, std::bad_alloc -- is rethrown by the core.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "backends/library/backend_services.h"

namespace gpuaccel {

// An op failure inside a backend library, with the core error code it becomes.
class LibraryOpError : public std::runtime_error {
 public:
  LibraryOpError(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// Runs `body` as the op `op`: timed as `kind` (moving `bytes` for copies) while profiling.
template <typename Body>
void run_library_op(BackendServices& services, const char* op, LaunchKind kind, int64_t bytes,
                    Body&& body) {
  void* token = kind == LaunchKind::kNone ? nullptr : services.launch_begin();
  try {
    std::forward<Body>(body)();
  } catch (const LibraryOpError& e) {
    services.launch_cancel(token);
    services.raise(e.code(), op, e.what());
  } catch (...) {
    services.launch_cancel(token);
    services.rethrow_current(op);
  }
  services.launch_end(token, kind, op, bytes);
}

}  // namespace gpuaccel
