// A stand-in for NCCL in the wheel-preloading tests (cuda_wheel_libraries_test.cc): built with
// the soname libnccl.so.2 and copied into fake nvidia/nccl/lib folders, it answers
// ncclGetVersion with 2.27.3 (NCCL's encoding 22703) so the test can tell which copy loaded.
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  *version = 22703;
  return 0;  // ncclSuccess
}
