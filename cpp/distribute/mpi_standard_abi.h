// The part of MPI 5.0's standard ABI that the MPI engine calls (mpi_collective.cc). MPI 5.0 fixed
// the handles' types and constants' values for every implementation that offers the standard ABI
// (MPICH 5's libmpi_abi.so.1, which PyPI's `mpich` wheel carries), so gpuaccel compiles without
// any MPI header and opens the library with dlopen at run time: a build made without MPI gets a
// working engine once the user pip-installs it. The values are the standard's (MPICH's
// mpi_abi.h spells the same); MpiLibrary checks MPI_Abi_get_version before using any of them, so
// a library of another ABI is refused, never misread.
#pragma once

#include <cstdint>

namespace gpuaccel::distribute::mpi_abi {

inline constexpr int kAbiMajorVersion = 1;
inline constexpr const char* kLibrarySoname = "libmpi_abi.so.1";

// Opaque handles: pointers to incomplete types, as the standard ABI declares them.
using Comm = struct OpaqueComm*;
using Datatype = struct OpaqueDatatype*;
using Op = struct OpaqueOp*;
using Request = struct OpaqueRequest*;
using Errhandler = struct OpaqueErrhandler*;
using Count = int64_t;  // MPI_Count: MPI_Offset, int64_t on every platform the standard names

struct Status {
  int source;
  int tag;
  int error;
  int internal[5];
};

template <typename Handle>
Handle handle(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

inline constexpr uintptr_t kCommWorld = 0x101;
inline constexpr uintptr_t kCommNull = 0x100;
inline constexpr uintptr_t kOpSum = 0x21;
inline constexpr uintptr_t kErrorsReturn = 0x143;
inline constexpr uintptr_t kFloat = 0x210;
inline constexpr uintptr_t kDouble = 0x214;
inline constexpr uintptr_t kByte = 0x247;
inline constexpr uintptr_t kUint16 = 0x249;
inline constexpr uintptr_t kInt32 = 0x250;
inline constexpr uintptr_t kInt64 = 0x258;
inline constexpr uintptr_t kInPlace = 1;  // MPI_IN_PLACE, a buffer address

inline constexpr int kSuccess = 0;
inline constexpr int kThreadSerialized = 2048;
inline constexpr int kThreadMultiple = 4096;
inline constexpr int kMaxErrorString = 512;
inline constexpr int kMaxLibraryVersionString = 8192;

// MPI_User_function_c: the large-count form of a user reduction.
using UserFunctionC = void(void* in, void* inout, Count* length, Datatype* datatype);

// The functions, resolved by name from the library (mpi_library.cc).
struct Functions {
  int (*Abi_get_version)(int* major, int* minor);
  int (*Get_library_version)(char* version, int* length);
  int (*Initialized)(int* flag);
  int (*Init_thread)(int* argc, char*** argv, int required, int* provided);
  int (*Finalized)(int* flag);
  int (*Finalize)();
  int (*Error_string)(int code, char* text, int* length);
  int (*Comm_dup)(Comm comm, Comm* duplicate);
  int (*Comm_free)(Comm* comm);
  int (*Comm_rank)(Comm comm, int* rank);
  int (*Comm_size)(Comm comm, int* size);
  int (*Comm_set_errhandler)(Comm comm, Errhandler handler);
  int (*Op_create_c)(UserFunctionC* function, int commute, Op* op);
  int (*Iallreduce_c)(const void* send, void* receive, Count count, Datatype datatype, Op op,
                      Comm comm, Request* request);
  int (*Ibcast_c)(void* buffer, Count count, Datatype datatype, int root, Comm comm,
                  Request* request);
  int (*Ibarrier)(Comm comm, Request* request);
  int (*Test)(Request* request, int* done, Status* status);
};

}  // namespace gpuaccel::distribute::mpi_abi
