// Shows, on oneDNN's API alone, the heap corruption behind the one-at-a-time backward-data
// measurement in cpp/backends/cpu/onednn_conv.cc (docs/reliability.md, "Concurrent
// implementation measurements"): two threads, one OpenMP thread each, own stream, own buffers,
// user-managed scratchpads, run every convolution backward-data implementation candidate of the
// same shapes, as two data-parallel replicas measuring at once do. Not built by CMake:
//   g++ -std=c++17 -O1 -fopenmp onednn_concurrent_candidates.cc -I<prefix>/include \
//       -L<prefix>/lib -ldnnl -Wl,-rpath,<prefix>/lib -o repro
//   ./repro            two threads, same shapes: aborts in most runs with oneDNN 3.2
//   ./repro 1          one thread: never
//   ./repro 2 disjoint two threads on different shapes (no primitive shared): never
//   ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 ./repro   no primitive shared: never
// Exit status 0 and "done" when nothing broke.
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using dnnl::memory;
using Pd = dnnl::convolution_backward_data::primitive_desc;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const bool disjoint = argc > 2 && std::string(argv[2]) == "disjoint";
  constexpr int kShapes = 12, kRounds = 4;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  std::atomic<int> arrived{0};
  auto work = [&](int t) {
    omp_set_num_threads(1);
    dnnl::stream s(eng);
    for (int shape = 0; shape < kShapes; ++shape) {
      // The course CNN's second convolution; the batch changes so every shape is measured anew.
      const memory::dim n = 1 + shape + (disjoint ? t * kShapes : 0), h = 13, c = 32, f = 64;
      const memory::desc dx({n, c, h, h}, memory::data_type::f32, memory::format_tag::nhwc);
      const memory::desc dy({n, f, h - 2, h - 2}, memory::data_type::f32, memory::format_tag::nhwc);
      const memory::desc w_any({f, c, 3, 3}, memory::data_type::f32, memory::format_tag::any);
      const memory::desc w_user({f, c, 3, 3}, memory::data_type::f32, memory::format_tag::hwio);
      const memory::dims one{1, 1}, zero{0, 0};
      std::vector<float> dy_data(dy.get_size() / 4, 0.5f), w_data(w_user.get_size() / 4, 0.25f);
      std::vector<float> dx_data(dx.get_size() / 4);
      arrived.fetch_add(1);  // both threads reach the shape together
      while (threads > 1 && arrived.load() < threads * (shape + 1)) std::this_thread::yield();
      const dnnl::convolution_forward::primitive_desc hint(
          eng, dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, dx, w_any,
          dy, one, zero, zero, zero);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      Pd pd(eng, dnnl::algorithm::convolution_direct, dx, w_any, dy, one, zero, zero, zero, hint,
            attr);
      std::vector<Pd> candidates{Pd(pd.get())};
      while (candidates.size() < 6 && pd.next_impl()) {
        if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) candidates.push_back(Pd(pd.get()));
      }
      std::vector<dnnl::convolution_backward_data> prims;
      std::vector<std::vector<float>> weights_data;
      std::vector<memory> weights;
      memory user_w(w_user, eng, w_data.data());
      for (const Pd& cand : candidates) {
        prims.emplace_back(cand);
        weights_data.emplace_back(cand.weights_desc().get_size() / 4);
        weights.emplace_back(cand.weights_desc(), eng, weights_data.back().data());
        dnnl::reorder(user_w, weights.back()).execute(s, user_w, weights.back());
      }
      s.wait();
      for (int round = 0; round < kRounds; ++round) {
        for (size_t i = 0; i < candidates.size(); ++i) {
          std::vector<char> scratchpad(candidates[i].scratchpad_desc().get_size() + 1);
          prims[i].execute(
              s, {{DNNL_ARG_DIFF_DST, memory(candidates[i].diff_dst_desc(), eng, dy_data.data())},
                  {DNNL_ARG_WEIGHTS, weights[i]},
                  {DNNL_ARG_DIFF_SRC, memory(candidates[i].diff_src_desc(), eng, dx_data.data())},
                  {DNNL_ARG_SCRATCHPAD,
                   memory(candidates[i].scratchpad_desc(), eng, scratchpad.data())}});
          s.wait();
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  std::printf("done\n");
  return 0;
}
