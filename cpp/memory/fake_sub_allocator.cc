// Bump-pointer address ranges with capacity accounting; frees are checked exactly (address and
// size) so a pool that returns a wrong region fails loudly instead of silently.
#include "memory/fake_sub_allocator.h"

#include "core/errors.h"

namespace gpuaccel {

namespace {
constexpr uintptr_t kFakeAlignment = 256;
uintptr_t align_up(uintptr_t v) { return (v + kFakeAlignment - 1) & ~(kFakeAlignment - 1); }
}  // namespace

FakeSubAllocator::FakeSubAllocator(size_t capacity_bytes, uintptr_t base, size_t gap_bytes)
    : capacity_(capacity_bytes), gap_(gap_bytes), next_(align_up(base)) {}

void* FakeSubAllocator::alloc(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++alloc_calls_;
  requests_.push_back(bytes);
  if (bytes == 0 || bytes > capacity_ - used_) return nullptr;
  if (refuse_ && refuse_(bytes)) return nullptr;
  const uintptr_t addr = next_;
  next_ = align_up(next_ + bytes + gap_);
  used_ += bytes;
  live_[addr] = bytes;
  return reinterpret_cast<void*>(addr);
}

void FakeSubAllocator::free(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++free_calls_;
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == live_.end() || it->second != bytes) {
    throw_error(ErrorCode::kInternal, "FakeSubAllocator",
                "free of a block that was not allocated with this size");
  }
  used_ -= bytes;
  live_.erase(it);
}

std::optional<size_t> FakeSubAllocator::free_memory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_ - used_;
}

void FakeSubAllocator::set_refusal(std::function<bool(size_t)> refuse) {
  std::lock_guard<std::mutex> lock(mutex_);
  refuse_ = std::move(refuse);
}

size_t FakeSubAllocator::used() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}
size_t FakeSubAllocator::live_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.size();
}
std::vector<size_t> FakeSubAllocator::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}
std::map<uintptr_t, size_t> FakeSubAllocator::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}
int64_t FakeSubAllocator::alloc_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return alloc_calls_;
}
int64_t FakeSubAllocator::free_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_calls_;
}

}  // namespace gpuaccel
