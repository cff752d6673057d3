// A random alloc/free property test of the pooling allocator against a reference model: more
// than a million operations over four configurations (plain growth, a hard limit, a device that
// refuses and forces back-off, preallocation). The model is written independently (ordered maps
// instead of size-class lists) and checks, after every operation: the chosen chunk is a best fit,
// nothing overlaps, every byte is accounted for, the device was asked for exactly the regions the
// growth rules predict, out-of-memory happens exactly when it must, and every stat matches.
// Every few thousand operations the pool's whole chunk layout is compared with the model's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "core/errors.h"
#include "memory/fake_sub_allocator.h"
#include "memory/pool_allocator.h"

namespace gpuaccel {
namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

size_t round_up_256(size_t n) { return (n + 255) / 256 * 256; }
size_t round_down_256(size_t n) { return n / 256 * 256; }

struct Config {
  size_t capacity;               // what the fake device has
  std::optional<size_t> limit;   // the pool's hard cap
  size_t max_region = SIZE_MAX;  // growth cap
  bool preallocate = false;
  int ops;
  uint64_t seed;
};

class Model {
 public:
  struct Live {
    size_t size;
    size_t requested;
  };
  struct Growth {
    bool ok = false;
    size_t size = 0;
    size_t want = 0;
    int asks = 0;
  };

  Model(const Config& c, size_t initial)
      : capacity_(c.capacity),
        limit_(c.limit ? round_down_256(*c.limit) : SIZE_MAX),
        max_region_(c.max_region),
        next_(initial),
        initial_(initial) {}

  // The growth rules of pool_allocator.h, played against a device of `capacity_` (which says
  // how much is free, as the fake sub-allocator does). Records the refused asks, as the pool.
  Growth predict_growth(size_t rounded) {
    Growth g;
    const size_t room = limit_ > reserved_ ? limit_ - reserved_ : 0;
    if (rounded > room) return g;
    size_t want = next_;
    while (want < rounded) want *= 2;
    want = std::min(want, room);
    want = std::max(rounded, std::min(want, round_down_256(capacity_ - reserved_)));
    g.want = want;
    for (size_t attempt = want;;) {
      ++g.asks;
      if (reserved_ + attempt <= capacity_) {
        g.ok = true;
        g.size = attempt;
        return g;
      }
      smallest_refused_ = std::min(smallest_refused_, attempt);
      if (attempt == rounded) return g;
      attempt = std::max(rounded, round_down_256(attempt / 2));
    }
  }

  // Size of the free range starting at `p`, or 0 when no free range starts there.
  size_t free_size_at(uintptr_t p) const {
    auto it = free_by_addr_.find(p);
    return it == free_by_addr_.end() ? 0 : it->second;
  }

  std::optional<size_t> best_fit(size_t rounded) const {
    auto it = free_by_size_.lower_bound({rounded, 0});
    if (it == free_by_size_.end()) return std::nullopt;
    return it->first;
  }

  bool has_empty_region() const {
    for (const auto& [base, size] : regions_) {
      auto f = free_by_addr_.find(base);
      if (f != free_by_addr_.end() && f->second == size) return true;
    }
    return false;
  }

  // Returns the bytes released.
  size_t release_empty_regions() {
    size_t released = 0;
    for (auto it = regions_.begin(); it != regions_.end();) {
      auto f = free_by_addr_.find(it->first);
      if (f != free_by_addr_.end() && f->second == it->second) {
        remove_free(it->first);
        reserved_ -= it->second;
        released += it->second;
        ++device_free_;
        it = regions_.erase(it);
      } else {
        ++it;
      }
    }
    if (released > 0) smallest_refused_ = SIZE_MAX;
    return released;
  }

  void add_region(uintptr_t base, size_t size, size_t want) {
    regions_[base] = size;
    add_free(base, size);
    reserved_ += size;
    peak_reserved_ = std::max(peak_reserved_, reserved_);
    ++device_alloc_;
    size_t next = size == want ? want * 2 : size;
    if (next >= smallest_refused_) next = size;
    next_ = std::min(std::max(next, initial_), max_region_);
  }

  // Takes the free range at `p` for a request; returns the chunk size.
  size_t take(uintptr_t p, size_t n) {
    const size_t rounded = round_up_256(n);
    const size_t m = free_by_addr_.at(p);
    remove_free(p);
    const size_t remainder = m - rounded;
    const size_t chunk = (remainder >= 256 && remainder * 16 >= rounded) ? rounded : m;
    if (chunk < m) add_free(p + chunk, m - chunk);
    live_[p] = {chunk, n};
    allocated_ += chunk;
    requested_ += n;
    peak_allocated_ = std::max(peak_allocated_, allocated_);
    return chunk;
  }

  void release(uintptr_t p) {
    const Live l = live_.at(p);
    live_.erase(p);
    allocated_ -= l.size;
    requested_ -= l.requested;
    auto region = std::prev(regions_.upper_bound(p));
    const uintptr_t region_end = region->first + region->second;
    uintptr_t start = p;
    size_t size = l.size;
    auto left = free_by_addr_.lower_bound(p);
    if (left != free_by_addr_.begin()) {
      --left;
      if (left->first + left->second == p && left->first >= region->first) {
        start = left->first;
        size += left->second;
        remove_free(left->first);
      }
    }
    if (p + l.size < region_end) {
      auto right = free_by_addr_.find(p + l.size);
      if (right != free_by_addr_.end()) {
        size += right->second;
        remove_free(right->first);
      }
    }
    add_free(start, size);
  }

  // Nothing live overlaps [p, p + size).
  bool overlaps_live(uintptr_t p, size_t size) const {
    auto it = live_.lower_bound(p);
    if (it != live_.end() && it->first < p + size) return true;
    if (it != live_.begin()) {
      --it;
      if (it->first + it->second.size > p) return true;
    }
    return false;
  }

  void expect_matches(const MemoryStats& s, const FakeSubAllocator& fake) const {
    ASSERT_EQ(s.allocated_bytes.current, static_cast<int64_t>(allocated_));
    ASSERT_EQ(s.allocated_bytes.peak, static_cast<int64_t>(peak_allocated_));
    ASSERT_EQ(s.requested_bytes.current, static_cast<int64_t>(requested_));
    ASSERT_EQ(s.reserved_bytes.current, static_cast<int64_t>(reserved_));
    ASSERT_EQ(s.reserved_bytes.peak, static_cast<int64_t>(peak_reserved_));
    ASSERT_EQ(s.allocations.current, static_cast<int64_t>(live_.size()));
    ASSERT_EQ(s.segments.current, static_cast<int64_t>(regions_.size()));
    ASSERT_EQ(s.free_chunks, static_cast<int64_t>(free_by_addr_.size()));
    ASSERT_EQ(s.free_bytes, static_cast<int64_t>(reserved_ - allocated_));
    ASSERT_EQ(s.largest_free_chunk,
              free_by_size_.empty() ? 0 : static_cast<int64_t>(free_by_size_.rbegin()->first));
    ASSERT_EQ(s.num_ooms, ooms_);
    ASSERT_EQ(s.num_alloc_retries, retries_);
    ASSERT_EQ(s.num_device_alloc, device_alloc_);
    ASSERT_EQ(s.num_device_free, device_free_);
    ASSERT_EQ(fake.used(), reserved_);
  }

  void expect_layout(const std::vector<PoolAllocator::RegionView>& snap) const {
    ASSERT_EQ(snap.size(), regions_.size());
    auto region = regions_.begin();
    for (const auto& view : snap) {
      ASSERT_EQ(view.base, region->first);
      ASSERT_EQ(view.size, region->second);
      for (const auto& c : view.chunks) {
        if (c.in_use) {
          const Live& l = live_.at(c.addr);
          ASSERT_EQ(c.size, l.size);
          ASSERT_EQ(c.requested, l.requested);
        } else {
          ASSERT_EQ(free_by_addr_.at(c.addr), c.size);
        }
      }
      ++region;
    }
  }

  const std::map<uintptr_t, size_t>& regions() const { return regions_; }
  const std::map<uintptr_t, Live>& live() const { return live_; }
  void count_oom() { ++ooms_; }
  void count_retry() { ++retries_; }

 private:
  void add_free(uintptr_t p, size_t size) {
    free_by_addr_[p] = size;
    free_by_size_.insert({size, p});
  }
  void remove_free(uintptr_t p) {
    auto it = free_by_addr_.find(p);
    free_by_size_.erase({it->second, p});
    free_by_addr_.erase(it);
  }

  size_t capacity_;
  size_t limit_;
  size_t max_region_;
  size_t next_;
  size_t initial_;
  size_t smallest_refused_ = SIZE_MAX;  // since regions were last released
  std::map<uintptr_t, size_t> regions_;
  std::map<uintptr_t, size_t> free_by_addr_;
  std::set<std::pair<size_t, uintptr_t>> free_by_size_;
  std::map<uintptr_t, Live> live_;
  size_t allocated_ = 0, requested_ = 0, reserved_ = 0;
  size_t peak_allocated_ = 0, peak_reserved_ = 0;
  int64_t ooms_ = 0, retries_ = 0, device_alloc_ = 0, device_free_ = 0;
};

size_t random_size(std::mt19937_64& rng) {
  const int kind = static_cast<int>(rng() % 100);
  auto log_uniform = [&](double lo, double hi) {
    std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
    return static_cast<size_t>(std::exp(u(rng)));
  };
  if (kind < 1) return 0;
  if (kind < 45) return 1 + rng() % 4096;
  if (kind < 75) return log_uniform(4 * KiB, 256 * KiB);
  if (kind < 96) return log_uniform(256 * KiB, 4 * MiB);
  return log_uniform(4 * MiB, 32 * MiB);
}

void run_property(const Config& config) {
  auto fake = std::make_shared<FakeSubAllocator>(config.capacity, uintptr_t{1} << 44, 4096);
  PoolOptions options;
  options.limit_bytes = config.limit;
  options.max_region_bytes = config.max_region;
  PoolAllocator pool(fake, options);
  Model model(config, kDefaultInitialRegionBytes);

  if (config.preallocate) {
    const size_t got = pool.preallocate(*config.limit);
    ASSERT_EQ(got, round_down_256(*config.limit));
    ASSERT_EQ(fake->blocks().size(), 1u);
    model.add_region(fake->blocks().begin()->first, got, got);
  }

  std::mt19937_64 rng(config.seed);
  std::vector<uintptr_t> live;  // for uniform random frees
  int64_t ooms = 0, grows = 0;
  const int ops = config.ops;
  for (int op = 0; op < ops; ++op) {
    // Alternate filling and draining phases so the pool both grows and coalesces.
    const bool filling = (op / 20000) % 2 == 0;
    const bool do_alloc = live.empty() || rng() % 100 < (filling ? 62u : 38u);
    if (do_alloc) {
      const size_t n = random_size(rng);
      if (n == 0) {
        ASSERT_EQ(pool.allocate(0), nullptr);
        continue;
      }
      const size_t rounded = round_up_256(n);
      const int64_t calls_before = fake->alloc_calls();
      const std::optional<size_t> fit = model.best_fit(rounded);
      Model::Growth growth;
      if (!fit) {
        growth = model.predict_growth(rounded);
        if (!growth.ok && model.has_empty_region()) {
          const int first_asks = growth.asks;
          model.release_empty_regions();
          model.count_retry();
          growth = model.predict_growth(rounded);
          growth.asks += first_asks;
        }
      }
      void* result = nullptr;
      bool oom = false;
      try {
        result = pool.allocate(n);
      } catch (const Error& e) {
        ASSERT_EQ(e.code(), ErrorCode::kResourceExhausted);
        oom = true;
      }
      if (fit) {
        ASSERT_FALSE(oom) << "op " << op << ": OOM although a free chunk fits";
        ASSERT_EQ(fake->alloc_calls(), calls_before) << "op " << op << ": grew needlessly";
      } else {
        ASSERT_EQ(fake->alloc_calls() - calls_before, growth.asks) << "op " << op;
        ASSERT_EQ(oom, !growth.ok) << "op " << op << ": OOM prediction";
      }
      if (oom) {
        model.count_oom();
        ++ooms;
      } else {
        const uintptr_t p = reinterpret_cast<uintptr_t>(result);
        if (!fit) {
          // The new region is the block the model does not know yet; the allocation is at its
          // start.
          ++grows;
          const auto blocks = fake->blocks();
          uintptr_t base = 0;
          for (const auto& [b, size] : blocks) {
            if (!model.regions().count(b)) {
              base = b;
              ASSERT_EQ(size, growth.size) << "op " << op << ": region size";
            }
          }
          ASSERT_EQ(blocks.size(), model.regions().size() + 1) << "op " << op;
          model.add_region(base, growth.size, growth.want);
          ASSERT_EQ(p, base) << "op " << op;
        }
        ASSERT_FALSE(model.overlaps_live(p, rounded)) << "op " << op << ": overlap";
        ASSERT_EQ(p % 256, 0u);
        // Best fit: the pool took a free range of exactly the smallest fitting size.
        ASSERT_EQ(model.free_size_at(p), fit ? *fit : growth.size) << "op " << op;
        const size_t chunk = model.take(p, n);
        ASSERT_EQ(pool.allocation_size(result), chunk) << "op " << op;
        live.push_back(p);
      }
    } else {
      // Mostly random frees, sometimes the newest (stack-like lifetimes).
      const size_t i = rng() % 4 == 0 ? live.size() - 1 : rng() % live.size();
      const uintptr_t p = live[i];
      live[i] = live.back();
      live.pop_back();
      pool.deallocate(reinterpret_cast<void*>(p));
      model.release(p);
    }
    if (op % 50000 == 49999) {
      pool.empty_cache();
      model.release_empty_regions();
    }
    ASSERT_NO_FATAL_FAILURE(model.expect_matches(pool.stats(), *fake)) << "op " << op;
    if (op % 2500 == 0) {
      ASSERT_NO_FATAL_FAILURE(model.expect_layout(pool.snapshot())) << "op " << op;
      pool.check_invariants();
    }
  }
  const int64_t retries = pool.stats().num_alloc_retries;
  // Free everything: every region must be a single free chunk again.
  for (uintptr_t p : live) {
    pool.deallocate(reinterpret_cast<void*>(p));
    model.release(p);
  }
  pool.check_invariants();
  for (const auto& region : pool.snapshot()) {
    ASSERT_EQ(region.chunks.size(), 1u);
    ASSERT_FALSE(region.chunks[0].in_use);
  }
  ASSERT_NO_FATAL_FAILURE(model.expect_matches(pool.stats(), *fake));
  EXPECT_EQ(pool.stats().allocated_bytes.current, 0);
  pool.empty_cache();
  EXPECT_EQ(fake->live_blocks(), 0u);
  EXPECT_EQ(pool.stats().reserved_bytes.current, 0);
  // The run must have exercised what it is for.
  if (!config.preallocate) EXPECT_GT(grows, 0);  // preallocated: no growth needed
  if (config.limit || config.capacity < (size_t{1} << 40)) EXPECT_GT(ooms, 0);
  ::testing::Test::RecordProperty("ooms", static_cast<int>(ooms));
  ::testing::Test::RecordProperty("grows", static_cast<int>(grows));
  std::printf("    %d ops: %lld grows, %lld OOMs, %lld retries\n", ops,
              static_cast<long long>(grows), static_cast<long long>(ooms),
              static_cast<long long>(retries));
}

TEST(MemoryProperty, GrowthWithoutLimit) {
  run_property({size_t{1} << 42, std::nullopt, SIZE_MAX, false, 300000, 1});
}

TEST(MemoryProperty, GrowthUnderAHardLimit) {
  run_property({size_t{1} << 42, 256 * MiB, SIZE_MAX, false, 300000, 2});
}

TEST(MemoryProperty, DeviceRefusalsForceBackOff) {
  // A 200 MiB device with growth capped at 32 MiB regions: refusals and back-off are common.
  run_property({200 * MiB + 4096, std::nullopt, 32 * MiB, false, 250000, 3});
}

TEST(MemoryProperty, PreallocatedPool) {
  run_property({512 * MiB, 160 * MiB + 768, SIZE_MAX, true, 200000, 4});
}

}  // namespace
}  // namespace gpuaccel
