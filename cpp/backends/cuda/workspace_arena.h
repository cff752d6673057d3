// One device's library workspace: a single block from the device's pool (BackendServices), kept
// between calls and grown when a plan needs more, so a cached plan's call allocates nothing, the
// pool's stats and memory_limit see the workspace, and its address stays the same from step to
// step (as a captured CUDA graph needs). Every user runs on the device's one stream, so growing
// it while queued work still reads the old block is safe: the pool hands that memory out again
// only to work queued after it.
//
// A CUDA graph is different: it keeps the block's address for every later replay. So a block
// that was handed out while the stream was being captured is never given back to the pool when
// the arena grows (it is retired and freed with the arena; growth then at least doubles, so the
// retired blocks together stay smaller than the live one), and the arena refuses to grow during
// a capture (the new block would come from the graph's private memory, which goes away with the
// graph; a warm-up step has always sized it before, so the capture just falls back to eager).
// Header-only: backend libraries compile it in.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "backends/library/backend_services.h"

namespace gpuaccel {

class WorkspaceArena {
 public:
  // `capturing` says whether the device's stream is being captured into a graph right now
  // (empty: never, as on a backend without graphs).
  explicit WorkspaceArena(BackendServices& services, std::function<bool()> capturing = {})
      : services_(services), capturing_(std::move(capturing)) {}
  ~WorkspaceArena() {
    services_.deallocate(block_);
    for (void* block : retired_) services_.deallocate(block);
  }
  WorkspaceArena(const WorkspaceArena&) = delete;
  WorkspaceArena& operator=(const WorkspaceArena&) = delete;

  // At least `bytes` of workspace (null for 0 before anything was reserved). Not thread-safe:
  // callers hold the lock that orders their launches.
  void* reserve(size_t bytes, const char* op) {
    void* block = nullptr;
    std::exception_ptr pool_refusal;
    if (!try_reserve(bytes, op, &block, &pool_refusal)) std::rethrow_exception(pool_refusal);
    return block;
  }

  // As reserve(), but should the pool not give the bytes (its ResourceExhaustedError, or any
  // other failure of its allocation) the arena is unchanged and this returns false with the
  // pool's exception in *pool_refusal, for a caller that can do with less workspace (a
  // convolution's next algorithm, backends/cuda/conv_plan.h) and rethrows it when it cannot.
  bool try_reserve(size_t bytes, const char* op, void** block, std::exception_ptr* pool_refusal) {
    const bool capturing = capturing_ && capturing_();
    if (bytes <= capacity_) {
      if (capturing && block_ != nullptr) block_in_graph_ = true;
      *block = block_;
      return true;
    }
    if (capturing) {
      services_.raise(ErrorCode::kUnimplemented, op,
                      "the workspace would grow from " + std::to_string(capacity_) + " to " +
                          std::to_string(bytes) + " bytes while a training step is captured into a "
                          "CUDA graph (the eager warm-up step should have sized it)");
    }
    const size_t size = block_in_graph_ ? std::max(bytes, 2 * capacity_) : bytes;
    void* grown = nullptr;
    try {
      grown = services_.allocate(size, op);  // the old block stays
    } catch (...) {
      *pool_refusal = std::current_exception();
      return false;
    }
    if (block_in_graph_) {
      retired_.push_back(block_);  // a graph may still replay with its address
    } else {
      services_.deallocate(block_);
    }
    block_ = grown;
    capacity_ = size;
    block_in_graph_ = false;
    *block = block_;
    return true;
  }
  size_t capacity() const { return capacity_; }
  size_t retired_blocks() const { return retired_.size(); }

  // Gives every block back to the pool (a runtime reset: no graph may replay with them any
  // more); the next reserve() allocates afresh.
  void release() {
    services_.deallocate(block_);
    for (void* block : retired_) services_.deallocate(block);
    retired_.clear();
    block_ = nullptr;
    capacity_ = 0;
    block_in_graph_ = false;
  }

 private:
  BackendServices& services_;
  std::function<bool()> capturing_;
  void* block_ = nullptr;
  size_t capacity_ = 0;
  bool block_in_graph_ = false;   // block_ was handed out during a capture
  std::vector<void*> retired_;    // earlier blocks a captured graph may still use
};

}  // namespace gpuaccel
