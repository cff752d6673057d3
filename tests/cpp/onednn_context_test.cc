// The shared oneDNN plumbing (backends/cpu/onednn_context.h) under concurrent primitive
// creation: two threads, one OpenMP thread each (as data-parallel replicas), make the primitives
// of every backward-data implementation of the same shapes at once, as two replicas measuring
// the candidates do. With oneDNN 3.2's own primitive cache on, a thread often got the primitive
// of another implementation made by the other thread (docs/reliability.md, "Concurrent
// implementation measurements"); make_primitive must now either return the implementation asked
// for or throw, and engine() keeps oneDNN's cache off so it never has to throw.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/onednn_context.h"
#include "backends/cpu/onednn_impl_choice.h"
#include "core/errors.h"

namespace gpuaccel::cpu::onednn {
namespace {

using dnnl::memory;
using BackwardDataPd = dnnl::convolution_backward_data::primitive_desc;

// oneDNN's implementations of a 3x3 backward-data convolution with batch `n` (the course CNN's
// second layer), each as a descriptor fixed to it.
std::vector<BackwardDataPd> backward_data_candidates(memory::dim n) {
  const memory::dim h = 13, c = 32, f = 64;
  const memory::desc dx({n, c, h, h}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc dy({n, f, h - 2, h - 2}, memory::data_type::f32, memory::format_tag::nhwc);
  const memory::desc w({f, c, 3, 3}, memory::data_type::f32, memory::format_tag::any);
  const memory::dims one{1, 1}, zero{0, 0};
  const dnnl::convolution_forward::primitive_desc hint(
      engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, dx, w,
      dy, one, zero, zero, zero);
  BackwardDataPd pd(engine(), dnnl::algorithm::convolution_direct, dx, w, dy, one, zero, zero,
                    zero, hint, default_attr());
  return implementation_candidates(pd);
}

TEST(OneDnnContext, LibraryPrimitiveCacheIsOff) {
  engine();
  EXPECT_EQ(dnnl::get_primitive_cache_capacity(), 0);
}

TEST(OneDnnContext, ConcurrentCreationsGetTheImplementationAskedFor) {
  constexpr int kThreads = 2, kShapes = 64;
  std::atomic<int> arrived{0};
  std::vector<int> mismatches(kThreads, 0), candidates(kThreads, 0);
  std::vector<std::string> first_error(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      omp_set_num_threads(1);
      for (int shape = 0; shape < kShapes; ++shape) {
        arrived.fetch_add(1);  // both threads reach each shape together
        while (arrived.load() < kThreads * (shape + 1)) std::this_thread::yield();
        for (const BackwardDataPd& c : backward_data_candidates(100 + shape)) {
          ++candidates[t];
          try {
            make_primitive<dnnl::convolution_backward_data>(c);
          } catch (const Error& e) {
            if (mismatches[t]++ == 0) first_error[t] = e.what();
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_GE(candidates[t], kShapes) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t << ": " << first_error[t];
  }
}

}  // namespace
}  // namespace gpuaccel::cpu::onednn
