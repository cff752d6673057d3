// The CPU backend's OpenMP team size, kept in line with tf.config.threading's intra-op count
// (core/thread_config.h). OpenMP keeps that count per thread, so each thread that runs ops
// (the caller, the prefetcher) catches up on its next op.
#pragma once

namespace gpuaccel::cpu {

// Applies the intra-op count to the calling thread if it changed; costs an atomic load and a
// compare otherwise. 0 restores OpenMP's own default (OMP_NUM_THREADS or every core).
void follow_intra_op_threads();

// The OpenMP team size ops started from the calling thread use now (after following).
int threads_for_this_thread();

}  // namespace gpuaccel::cpu
