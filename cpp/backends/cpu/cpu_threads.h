// The CPU backend's OpenMP team size, kept in line with tf.config.threading's intra-op count
// (core/thread_config.h), and when a piece of work is worth a team at all. OpenMP keeps the
// count per thread, so each thread that runs ops (the caller, the prefetcher) catches up on its
// next op.
#pragma once

#include <omp.h>

#include <cstdint>

namespace gpuaccel::cpu {

// Applies the intra-op count to the calling thread if it changed; costs an atomic load and a
// compare otherwise. 0 restores OpenMP's own default (OMP_NUM_THREADS or every core).
void follow_intra_op_threads();

// The OpenMP team size ops started from the calling thread use now (after following).
int threads_for_this_thread();

// The calling thread's OpenMP thread count set to `threads` for a scope (0: left as it is); oneDNN
// primitives created inside it keep that count (onednn_impl_choice.h).
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()), set_(threads > 0) {
    if (set_) omp_set_num_threads(threads);
  }
  ~ScopedOmpThreads() {
    if (set_) omp_set_num_threads(saved_);
  }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
  bool set_;
};

// Below this many elements a one-pass loop (element-wise ops, masks, pooling, optimizer
// updates) runs on the calling thread. Between ops the team's workers have gone to sleep
// (GOMP_SPINCOUNT=1000, python/gpuaccel/_openmp_env.py), so every parallel region an op opens
// pays their wake-up: 8-60 us per region on the 2-vCPU virtual machines the course runs on
// (docs/benchmarks.md, "Parallel regions per step"), which is what 30-60 thousand elements of
// such a loop take on one thread. Splitting less than about twice that loses time.
constexpr int64_t kParallelMinElements = 64 * 1024;

// Below this many multiply-adds a matrix product runs on the calling thread: the course CNN's
// Dense layers (64x576x64, 2.4 M) take 50-90 us on one thread, and oneDNN's matmul opens more
// than one region per call at two threads. oneDNN fixes a primitive's thread split when the
// primitive is created (our primitive cache keys entries by the count, onednn_context.cc), so a
// oneDNN op made serial runs its creation as well as its execution under ScopedOmpThreads(1)
// (above): a primitive made at two threads opens a two-thread region even when
// executed under omp_set_num_threads(1).
constexpr int64_t kParallelMinMatmulMacs = int64_t{4} << 20;

// body(i) for i in [0, n): a schedule(static) loop on the team when `parallel`, else a plain
// loop on the calling thread. A region whose `if` clause is false still goes through libgomp (a
// one-thread team, and a futex call once workers exist): microseconds, more than the loss's
// 64x10 reductions themselves take.
template <typename Body>
void parallel_for_if(bool parallel, int64_t n, const Body& body) {
  if (!parallel) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

// body() once on each thread of the team when `parallel` (omp_get_thread_num() and
// omp_get_num_threads() tell it its share), else once on the calling thread, where they read 0
// and 1, with no region at all (see parallel_for_if).
template <typename Body>
void run_on_team_if(bool parallel, const Body& body) {
  if (!parallel) {
    body();
    return;
  }
#pragma omp parallel
  body();
}

}  // namespace gpuaccel::cpu
