// The MPI library of this process, opened with dlopen on first use (no MPI at build time; see
// mpi_standard_abi.h). MPI is process-wide state: one library, initialized once (with
// MPI_THREAD_MULTIPLE, since the overlapped all-reduce calls the engine from a communication
// thread), finalized once at exit. Every MpiCollective shares it.
#pragma once

#include <string>

#include "distribute/mpi_standard_abi.h"

namespace gpuaccel::distribute {

class MpiLibrary {
 public:
  // Opens `path` (a file; empty: libmpi_abi.so.1 wherever the dynamic loader finds it) and
  // checks that it speaks the MPI 5.0 standard ABI. The first successful call decides the
  // library; a later call naming another file throws ValueError. Throws FailedPrecondition
  // naming the file and `pip install mpich` when it cannot be opened, lacks a function, or has
  // another ABI.
  static MpiLibrary& open(const std::string& path);
  // Initializes MPI unless the process already did (mpi4py, say; then it is not finalized
  // here either) and creates the half-precision sums; later calls do nothing. Separate from
  // open() so that the launcher can be checked first: MPICH started by another MPI's launcher
  // aborts the process inside MPI_Init.
  void initialize();

  const mpi_abi::Functions& call() const { return functions_; }
  const std::string& path() const { return path_; }
  // MPI_Get_library_version's first line, e.g. "MPICH Version: 5.0.2".
  const std::string& version() const { return version_; }
  // MPI_Error_string's text for `code`.
  std::string error_text(int code) const;
  // Sums of float16 and bfloat16 elements (carried as MPI_UINT16_T), in float32 rounded once
  // per pairwise step as the other engines do; created with the library.
  mpi_abi::Op float16_sum() const { return float16_sum_; }
  mpi_abi::Op bfloat16_sum() const { return bfloat16_sum_; }

  // A collective whose operation timed out leaves a request MPI cannot cancel; MPI_Finalize
  // would then wait at exit for a peer that is gone, so it is skipped.
  void skip_finalize_at_exit();

 private:
  explicit MpiLibrary(const std::string& path);

  std::string path_;
  void* handle_ = nullptr;
  mpi_abi::Functions functions_{};
  std::string version_;
  mpi_abi::Op float16_sum_ = nullptr;
  mpi_abi::Op bfloat16_sum_ = nullptr;
};

}  // namespace gpuaccel::distribute
