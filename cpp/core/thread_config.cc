// See thread_config.h.
#include "core/thread_config.h"

#include <atomic>

namespace gpuaccel::thread_config {

namespace {
std::atomic<int> g_intra_op_threads{0};
std::atomic<int> g_inter_op_threads{0};
}  // namespace

int intra_op_threads() { return g_intra_op_threads.load(std::memory_order_relaxed); }
void store_intra_op_threads(int threads) {
  g_intra_op_threads.store(threads, std::memory_order_relaxed);
}
int inter_op_threads() { return g_inter_op_threads.load(std::memory_order_relaxed); }
void store_inter_op_threads(int threads) {
  g_inter_op_threads.store(threads, std::memory_order_relaxed);
}

}  // namespace gpuaccel::thread_config
