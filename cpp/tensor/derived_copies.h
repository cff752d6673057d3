// Copies derived from a storage's bytes, kept with the storage between steps: a convolution
// kernel in the layout oneDNN or cuDNN wants, the bfloat16/float16 copy of a float32 master
// weight under mixed precision. Without them every call re-derives them (a reorder, a
// transposing copy, a cast), although weights change once per step at most.
//
// Correctness rests on the version counter: every in-place write to the storage (optimizer
// updates, assign/copy_into, collectives, a replayed step graph) bumps it after writing, and a
// copy made from an older version is rebuilt on its next lookup. A copy is keyed by a string
// naming its transform and its target layout/dtype ("onednn_weights:...", "krsc:...",
// "cast:bfloat16"); its memory comes from the storage's own device pool (allocate()), so
// memory_limit and the memory stats see it, and it is freed with the storage.
//
// Header-only (no core symbols), so the CUDA backend library compiles it in and uses the copies
// of the tensors the core hands it. Thread-safe: one mutex per storage, held while a copy is made
// so two threads never build the same copy twice.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/dtype.h"

namespace gpuaccel {

class DerivedCopies {
 public:
  // Memory for a copy from the source's device pool (null for a zero-byte request).
  using Allocate = std::function<std::shared_ptr<void>(size_t bytes)>;

  // `base`/`bytes`: the source's memory; a view is a source only when it is all of it.
  DerivedCopies(const void* base, size_t bytes, Allocate allocate)
      : base_(base), bytes_(bytes), allocate_(std::move(allocate)) {}
  DerivedCopies(const DerivedCopies&) = delete;
  DerivedCopies& operator=(const DerivedCopies&) = delete;

  // The storage's version: bumped after every in-place write.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  void bump_version() { version_.fetch_add(1, std::memory_order_acq_rel); }

  // True when `v` (whose `derived` is this) is the whole source, contiguous: a view a kernel
  // made from another (a slice by pointer offset, a permutation) keeps the pointer but is not
  // the source, and must derive per call.
  template <typename View>
  bool is_source(const View& v) const {
    return v.data == base_ && v.is_contiguous() &&
           static_cast<size_t>(v.numel()) * dtype_size(v.dtype) == bytes_;
  }

  // Memory on the source's device, counted by its pool while the returned pointer lives.
  std::shared_ptr<void> allocate(size_t bytes) const { return allocate_(bytes); }

  // The copy `key` of the current version: the cached one, or `make()` run now (it returns the
  // copy; the value is opaque here, each use knows what it stored under its keys). The copy is
  // tagged with the version read before making it, so a write racing with make() leaves a copy
  // that the next lookup rebuilds. The returned pointer keeps the copy alive even if another
  // thread replaces it.
  template <typename Make>
  std::shared_ptr<void> get_or_make(const std::string& key, Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t current = version();
    auto it = copies_.find(key);
    if (it != copies_.end() && it->second.version == current) {
      ++hits_;
      return it->second.value;
    }
    if (it != copies_.end()) copies_.erase(it);  // stale: its memory goes back before the new one
    std::shared_ptr<void> value = make();
    ++made_;
    copies_[key] = Entry{current, value};
    return value;
  }

  // Drops every copy (their memory returns to the pool once no caller holds them).
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    copies_.clear();
  }

  // For tests and the debug counters: copies held, copies made (misses), lookups served.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return copies_.size();
  }
  int64_t made() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return made_;
  }
  int64_t hits() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hits_;
  }

 private:
  struct Entry {
    uint64_t version = 0;
    std::shared_ptr<void> value;
  };
  const void* base_;
  size_t bytes_;
  Allocate allocate_;
  std::atomic<uint64_t> version_{0};
  mutable std::mutex mutex_;
  std::map<std::string, Entry> copies_;
  int64_t made_ = 0;
  int64_t hits_ = 0;
};

}  // namespace gpuaccel
