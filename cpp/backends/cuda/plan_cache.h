// A per-shape cache of plans that are expensive to make (cuDNN descriptors and the algorithm
// chosen for them, cuBLASLt matmul descriptors and heuristics), as oneDNN primitives are cached
// on the CPU: the first call of a shape builds its plan, every later call finds it and builds
// and queries nothing. The key is a plain struct with ==, hash() and to_string(), so a miss can
// be logged and a test can name what was built. Header-only: backend libraries compile it in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace gpuaccel {

template <typename Key, typename Plan>
class PlanCache {
 public:
  // The plan of `key`; `build()` (returning std::unique_ptr<Plan>) runs only on the first call of
  // the key. Plans stay at one address for the cache's life. Thread-safe; a build that throws
  // caches nothing.
  template <typename Build>
  Plan& get(const Key& key, Build&& build) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      ++hits_;
      return *it->second;
    }
    std::unique_ptr<Plan> plan = std::forward<Build>(build)();
    Plan& ref = *plan;
    plans_.emplace(key, std::move(plan));
    ++builds_;
    return ref;
  }

  int64_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(plans_.size());
  }
  int64_t builds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return builds_;
  }
  int64_t hits() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hits_;
  }

 private:
  struct Hash {
    size_t operator()(const Key& k) const { return k.hash(); }
  };
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::unique_ptr<Plan>, Hash> plans_;
  int64_t builds_ = 0;
  int64_t hits_ = 0;
};

// Mixes `value` into `seed` (boost's hash_combine constant): for hash() of key structs.
inline void hash_combine(size_t& seed, uint64_t value) {
  seed ^= std::hash<uint64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

}  // namespace gpuaccel
