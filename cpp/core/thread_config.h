// tf.config.threading's two numbers, readable without a lock: the CPU backend asks for the
// intra-op count on every op (one relaxed atomic load), so it lives here rather than behind the
// device registry's mutex. The registry owns the rules (values, "cannot be modified after
// initialization") and is the only writer.
#pragma once

namespace gpuaccel::thread_config {

// Threads one op may use on the CPU; 0 lets OpenMP decide (OMP_NUM_THREADS or every core).
// A thread inside a ThreadTeamOverride sees the override instead.
int intra_op_threads();
void store_intra_op_threads(int threads);

// Threads for running independent ops concurrently. gpuaccel runs a step's ops in order, so
// this is recorded and reported, and has no effect (docs/devices.md says so).
int inter_op_threads();
void store_inter_op_threads(int threads);

// Data-parallel replicas on CPUs (train/replicated_trainer.h) each run on their own thread
// with their own share of the cores: for its lifetime, ops started from the constructing
// thread use `threads` OpenMP threads whatever the process-wide count says.
class ThreadTeamOverride {
 public:
  explicit ThreadTeamOverride(int threads);
  ~ThreadTeamOverride();
  ThreadTeamOverride(const ThreadTeamOverride&) = delete;
  ThreadTeamOverride& operator=(const ThreadTeamOverride&) = delete;

 private:
  int previous_;
};

}  // namespace gpuaccel::thread_config
