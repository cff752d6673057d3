// See cpu_threads.h.
#include "backends/cpu/cpu_threads.h"

#include <omp.h>

#include "core/thread_config.h"

namespace gpuaccel::cpu {

void follow_intra_op_threads() {
  // OpenMP's default as the process started (the first thread to run an op has not changed it).
  static const int default_threads = omp_get_max_threads();
  thread_local int applied = 0;
  const int wanted = thread_config::intra_op_threads();
  if (wanted == applied) return;
  omp_set_num_threads(wanted > 0 ? wanted : default_threads);
  applied = wanted;
}

int threads_for_this_thread() {
  follow_intra_op_threads();
  return omp_get_max_threads();
}

}  // namespace gpuaccel::cpu
