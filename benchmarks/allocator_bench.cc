// Is the pool worth it? Replays the allocation pattern of a training step (50 tensors from
// 4 KiB to 16 MiB, each written once, freed in roughly reverse order) through: the pooling
// allocator on host memory; malloc (glibc); fresh pages from mmap (what an allocator without a
// cache pays on every step, the analogue of cudaMalloc per tensor); and the floor, writing the
// same bytes into buffers that are already allocated and warm. All run in one process,
// interleaved step by step, and report medians and ratios to the floor. It also measures the
// median cost of one allocate+deallocate pair on a hot pool. Build and run: benchmarks/allocator.sh
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "memory/host_sub_allocator.h"
#include "memory/pool_allocator.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTensors = 50;
constexpr int kSteps = 25;  // timed steps per variant (after warm-up)

// Keeps the compiler from dropping writes to memory that is freed right after.
inline void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Pattern {
  std::vector<size_t> sizes;
  std::vector<int> free_order;
  size_t total = 0;
};

Pattern make_pattern(uint64_t seed) {
  Pattern p;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(std::log(4096.0), std::log(16.0 * 1024 * 1024));
  for (int i = 0; i < kTensors; ++i) {
    const size_t n = static_cast<size_t>(std::exp(u(rng))) / 4 * 4;  // float32 tensors
    p.sizes.push_back(n);
    p.total += n;
  }
  // Reverse order (backward pass), with every fourth neighbour pair swapped (tensors that die
  // early or late).
  for (int i = kTensors - 1; i >= 0; --i) p.free_order.push_back(i);
  for (int i = 0; i + 1 < kTensors; i += 4) {
    if (rng() % 2) std::swap(p.free_order[i], p.free_order[i + 1]);
  }
  return p;
}

struct Variant {
  std::string name;
  std::function<void*(size_t)> alloc;
  std::function<void(void*, size_t)> free;
  std::vector<double> step_ms;
};

double run_step(Variant& v, const Pattern& p) {
  void* ptrs[kTensors];
  const auto t0 = Clock::now();
  for (int i = 0; i < kTensors; ++i) {
    ptrs[i] = v.alloc(p.sizes[i]);
    std::memset(ptrs[i], i + 1, p.sizes[i]);
    escape(ptrs[i]);
  }
  for (int i : p.free_order) v.free(ptrs[i], p.sizes[i]);
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main() {
  using namespace gpuaccel;
  const Pattern pattern = make_pattern(2024);
  std::printf("pattern: %d tensors, 4 KiB..16 MiB, %.1f MiB written per step\n", kTensors,
              pattern.total / 1048576.0);

  PoolAllocator pool(std::make_shared<HostSubAllocator>(), PoolOptions{});
  // The floor: one warm buffer per tensor, allocated and touched before timing.
  std::vector<void*> warm(kTensors);
  for (int i = 0; i < kTensors; ++i) {
    warm[i] = std::malloc(pattern.sizes[i]);
    std::memset(warm[i], 0, pattern.sizes[i]);
  }
  int next_warm = 0;

  std::vector<Variant> variants;
  variants.push_back({"floor (warm buffers)",
                      [&](size_t) { return warm[next_warm++ % kTensors]; },
                      [](void*, size_t) {}, {}});
  variants.push_back({"pool", [&](size_t n) { return pool.allocate(n); },
                      [&](void* q, size_t) { pool.deallocate(q); }, {}});
  variants.push_back({"malloc + first touch", [](size_t n) { return std::malloc(n); },
                      [](void* q, size_t) { std::free(q); }, {}});
  variants.push_back({"mmap + first touch",
                      [](size_t n) {
                        void* q = mmap(nullptr, n, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (q == MAP_FAILED) std::abort();
                        return q;
                      },
                      [](void* q, size_t n) { munmap(q, n); }, {}});

  for (auto& v : variants) run_step(v, pattern);  // warm-up: the pool grows here, once
  next_warm = 0;
  for (int s = 0; s < kSteps; ++s) {
    for (auto& v : variants) {
      next_warm = 0;
      v.step_ms.push_back(run_step(v, pattern));
    }
  }
  const double floor_ms = median(variants[0].step_ms);
  std::printf("\n%-24s %12s %10s %12s\n", "training-step replay", "median ms", "GB/s", "vs floor");
  for (auto& v : variants) {
    const double ms = median(v.step_ms);
    std::printf("%-24s %12.3f %10.2f %11.2fx\n", v.name.c_str(), ms,
                pattern.total / (ms * 1e-3) / 1e9, ms / floor_ms);
  }
  const MemoryStats s = pool.stats();
  std::printf("pool: %lld regions, %.1f MiB reserved for %.1f MiB peak in use; %lld device calls "
              "in %d steps\n",
              static_cast<long long>(s.segments.current), s.reserved_bytes.current / 1048576.0,
              s.allocated_bytes.peak / 1048576.0, static_cast<long long>(s.num_device_alloc),
              kSteps + 1);

  // Hot pool: allocate+deallocate pairs, no writes. Median over samples of 1000 pairs.
  auto pair_ns = [&](const std::function<void()>& body, int pairs_per_sample) {
    std::vector<double> samples;
    for (int r = 0; r < 201; ++r) {
      const auto t0 = Clock::now();
      body();
      samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                        pairs_per_sample);
    }
    return median(samples);
  };
  const double same_size = pair_ns([&] {
    for (int i = 0; i < 1000; ++i) {
      void* q = pool.allocate(64 * 1024);
      escape(q);
      pool.deallocate(q);
    }
  }, 1000);
  const double step_pattern = pair_ns([&] {
    void* ptrs[kTensors];
    for (int k = 0; k < 20; ++k) {
      for (int i = 0; i < kTensors; ++i) ptrs[i] = pool.allocate(pattern.sizes[i]);
      for (int i : pattern.free_order) pool.deallocate(ptrs[i]);
    }
  }, 20 * kTensors);
  const double malloc_pair = pair_ns([&] {
    for (int i = 0; i < 1000; ++i) {
      void* q = std::malloc(64 * 1024);
      escape(q);
      std::free(q);
    }
  }, 1000);
  std::printf("\nhot pool, median ns per allocate+deallocate pair:\n");
  std::printf("  same size (64 KiB), alloc then free  %8.1f ns\n", same_size);
  std::printf("  the step's 50 sizes, all then freed  %8.1f ns\n", step_pattern);
  std::printf("  (malloc+free, 64 KiB, for reference) %8.1f ns\n", malloc_pair);

  for (void* w : warm) std::free(w);
  return 0;
}
