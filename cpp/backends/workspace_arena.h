// One device's library workspace: a single block from the device's pool (BackendServices), kept
// between calls and grown when a plan needs more, so a cached plan's call allocates nothing, the
// pool's stats and memory_limit see the workspace, and its address stays the same from step to
// step (as a captured CUDA graph needs). Every user runs on the device's one stream, so growing
// it while queued work still reads the old block is safe: the pool hands that memory out again
// only to work queued after it. Header-only: backend libraries compile it in.
#pragma once

#include <cstddef>

#include "backends/backend_services.h"

namespace gpuaccel {

class WorkspaceArena {
 public:
  explicit WorkspaceArena(BackendServices& services) : services_(services) {}
  ~WorkspaceArena() { services_.deallocate(block_); }
  WorkspaceArena(const WorkspaceArena&) = delete;
  WorkspaceArena& operator=(const WorkspaceArena&) = delete;

  // At least `bytes` of workspace (null for 0 before anything was reserved). Not thread-safe:
  // callers hold the lock that orders their launches.
  void* reserve(size_t bytes, const char* op) {
    if (bytes <= capacity_) return block_;
    void* grown = services_.allocate(bytes, op);  // throws the pool's OOM; the old block stays
    services_.deallocate(block_);
    block_ = grown;
    capacity_ = bytes;
    return block_;
  }
  size_t capacity() const { return capacity_; }

 private:
  BackendServices& services_;
  void* block_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace gpuaccel
