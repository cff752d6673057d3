// Checks cpp/distribute/mpi_standard_abi.h (the MPI 5.0 standard-ABI values gpuaccel declares
// itself, to build without MPI) against an MPI's own mpi_abi.h. Not part of gpuaccel_tests,
// which build without any MPI header: .ci/wheel compiles and runs it against the mpi_abi.h that
// `pip install mpich` puts in the test environment's include/ folder.
#include <mpi_abi.h>
#include <cstdio>
#include "distribute/mpi_standard_abi.h"
namespace a = gpuaccel::distribute::mpi_abi;
int bad = 0;
// The handles are pointer casts of integers in mpi_abi.h, so they are compared at run time.
#define SAME(ours, theirs) \
  if (ours != (uintptr_t)(theirs)) { printf("mpi_standard_abi.h differs from mpi_abi.h: %s\n", #theirs); bad = 1; }
int main() {
SAME(a::kCommWorld, MPI_COMM_WORLD); SAME(a::kCommNull, MPI_COMM_NULL); SAME(a::kOpSum, MPI_SUM);
SAME(a::kErrorsReturn, MPI_ERRORS_RETURN); SAME(a::kFloat, MPI_FLOAT); SAME(a::kByte, MPI_BYTE);
SAME(a::kUint16, MPI_UINT16_T); SAME(a::kInt32, MPI_INT32_T); SAME(a::kInt64, MPI_INT64_T); SAME(a::kInPlace, MPI_IN_PLACE);
static_assert(a::kSuccess == MPI_SUCCESS && a::kThreadSerialized == MPI_THREAD_SERIALIZED && a::kThreadMultiple == MPI_THREAD_MULTIPLE);
static_assert(a::kMaxErrorString == MPI_MAX_ERROR_STRING && a::kMaxLibraryVersionString == MPI_MAX_LIBRARY_VERSION_STRING);
static_assert(a::kAbiMajorVersion == MPI_ABI_VERSION);
static_assert(sizeof(a::Status) == sizeof(MPI_Status) && sizeof(a::Count) == sizeof(MPI_Count));
puts(bad ? "bad" : "ABI constants match mpi_abi.h"); return bad; }
