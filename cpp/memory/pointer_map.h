// Address -> chunk handle for the pool's live allocations. deallocate() must find a chunk from
// its pointer in constant time without allocating (a node-based std::unordered_map would call
// malloc on every allocation, which is exactly what the pool exists to avoid). Open addressing
// with linear probing and backward-shift deletion; keys are nonzero addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuaccel {

class PointerMap {
 public:
  static constexpr uint32_t kNotFound = 0xffffffffu;

  PointerMap() { rehash(kInitialCapacity); }

  size_t size() const { return size_; }

  // `key` must be nonzero and absent.
  void insert(uintptr_t key, uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    place(key, value);
    ++size_;
  }

  uint32_t find(uintptr_t key) const {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == 0) return kNotFound;
    }
  }

  // Removes `key`; returns its value or kNotFound.
  uint32_t erase(uintptr_t key) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) break;
      if (slots_[i].key == 0) return kNotFound;
    }
    const uint32_t value = slots_[i].value;
    // Shift later members of the probe run back so lookups never stop at a hole too early.
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].key);
      // Move j into the hole unless j's home lies cyclically in (hole, j].
      const bool home_after_hole = ((j - h) & mask_) < ((j - hole) & mask_);
      if (!home_after_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return value;
  }

 private:
  struct Slot {
    uintptr_t key = 0;
    uint32_t value = 0;
  };
  static constexpr size_t kInitialCapacity = 1024;

  size_t home(uintptr_t key) const {
    // Allocations are 256-aligned: drop the zero bits, then multiplicative hashing.
    return static_cast<size_t>(((key >> 8) * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
  }
  void place(uintptr_t key, uint32_t value) {
    size_t i = home(key);
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    int bits = 0;
    while ((size_t{1} << bits) < capacity) ++bits;
    shift_ = 64 - bits;
    for (const Slot& s : old) {
      if (s.key != 0) place(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 0;
  size_t size_ = 0;
};

}  // namespace gpuaccel
