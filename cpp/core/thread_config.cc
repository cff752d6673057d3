// See thread_config.h.
#include "core/thread_config.h"

#include <atomic>

namespace gpuaccel::thread_config {

namespace {
std::atomic<int> g_intra_op_threads{0};
std::atomic<int> g_inter_op_threads{0};
thread_local int t_override = 0;  // 0: no ThreadTeamOverride on this thread
}  // namespace

int intra_op_threads() {
  return t_override > 0 ? t_override : g_intra_op_threads.load(std::memory_order_relaxed);
}
void store_intra_op_threads(int threads) {
  g_intra_op_threads.store(threads, std::memory_order_relaxed);
}
int inter_op_threads() { return g_inter_op_threads.load(std::memory_order_relaxed); }
void store_inter_op_threads(int threads) {
  g_inter_op_threads.store(threads, std::memory_order_relaxed);
}

ThreadTeamOverride::ThreadTeamOverride(int threads) : previous_(t_override) {
  t_override = threads;
}
ThreadTeamOverride::~ThreadTeamOverride() { t_override = previous_; }

}  // namespace gpuaccel::thread_config
