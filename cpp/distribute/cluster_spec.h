// Who this worker is in a multi-worker job and where the rendezvous is: read from TF_CONFIG
// (TensorFlow's cluster + task JSON) or, with no TF_CONFIG, from the variables mpirun sets.
// Parsing is strict: every malformed field raises a ValueError naming the field, the value and
// what is expected, because a typo in TF_CONFIG otherwise shows up as a hang on another machine.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace gpuaccel::distribute {

struct ClusterSpec {
  int rank = 0;
  int world_size = 1;
  // "host:port" where rank 0 (the chief) serves the rendezvous store; empty for one worker.
  std::string coordinator;
  // The host this rank's Gloo transport binds to; empty: the machine's hostname.
  std::string local_host;
  // Where this came from, for messages: "TF_CONFIG", "mpirun (OpenMPI)", "single worker", ...
  std::string source = "single worker";
  // TF_CONFIG only: every task's "host:port", by rank (chief first, then the workers).
  std::vector<std::string> addresses;
};

struct HostPort {
  std::string host;
  int port = 0;
};

// Splits "host:port" ("[::1]:port" for IPv6). `field` names the value in errors.
HostPort parse_host_port(const std::string& field, const std::string& address);

// Parses TF_CONFIG's JSON text with TensorFlow's rules (multi_worker_util): jobs "chief" (at
// most one task), "worker", "evaluator" and "ps"; the chief, when present, is rank 0 and
// worker i is rank i + (1 if a chief exists); "ps" (ParameterServerStrategy) and an evaluator
// task take no part in all-reduce and are refused with an error saying so.
ClusterSpec parse_tf_config(const std::string& text);

// Reads a variable of the environment; returns nullptr when it is unset.
using EnvironmentLookup = std::function<const char*(const char*)>;

// TF_CONFIG when set (and not empty); else mpirun's OMPI_COMM_WORLD_RANK/SIZE (OpenMPI) or
// PMI_RANK/PMI_SIZE (MPICH, Hydra), with the rendezvous at GPUACCEL_COORDINATOR=host:port when
// set; else a single worker (rank 0 of 1).
ClusterSpec cluster_spec_from_environment(const EnvironmentLookup& lookup = {});

// The engines that rendezvous through rank 0's TcpStore (Gloo, NCCL across processes) need the
// coordinator's address; under mpirun it comes from GPUACCEL_COORDINATOR, which the MPI engine
// does without. Throws ValueError naming the variable when a job of several ranks lacks it.
void require_coordinator(const ClusterSpec& spec, const std::string& engine);

// GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS (a positive number) or kDefaultCollectiveTimeout.
inline constexpr std::chrono::milliseconds kDefaultCollectiveTimeout = std::chrono::seconds(120);
std::chrono::milliseconds collective_timeout_from_environment(const EnvironmentLookup& lookup = {});

}  // namespace gpuaccel::distribute
