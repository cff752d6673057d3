// Where an allocator's big regions come from: the host heap, pinned host memory, or a GPU
// (cudaMalloc through the CUDA backend table). Keeping this a small interface is what lets the
// tests drive the pool with a fake that hands out address ranges, so every path (growth,
// back-off, out-of-memory) runs on a machine without a GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace gpuaccel {

class SubAllocator {
 public:
  virtual ~SubAllocator() = default;
  // A block of `bytes` aligned to at least 256 bytes, or nullptr when the device refuses (out
  // of memory). Other failures (a broken driver) throw. Must be thread-safe.
  virtual void* alloc(size_t bytes) = 0;
  // Gives back a block from alloc(); `bytes` is the size it was allocated with.
  virtual void free(void* ptr, size_t bytes) = 0;
  // Memory the device could still give, when it can tell (GPUs); sizes preallocation.
  virtual std::optional<size_t> free_memory() const { return std::nullopt; }
  // "host", "pinned_host", "gpu", "fake": for messages.
  virtual std::string kind() const = 0;
  // Why the last alloc() that returned nullptr was refused, when the source can say more than
  // "out of memory" (a graph arena's source is the device's pool, with its own report); "" when
  // it cannot. The pool appends it to its out-of-memory report.
  virtual std::string last_refusal() const { return ""; }
};

}  // namespace gpuaccel
