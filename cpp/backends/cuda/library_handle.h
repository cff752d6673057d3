// One RAII owner for the handles the CUDA libraries hand out (cuDNN descriptors, cuBLASLt
// matmul descriptors, layouts and preferences): each is a pointer created by the library's
// create function and released by its destroy function, so one template serves them all
// instead of a hand-written struct per handle type.
#pragma once

namespace gpuaccel::cuda {

// Owns `Handle` (null until created) and releases it with `Destroy` (whose status is ignored:
// a destructor cannot report it, and nothing depends on the handle any more).
template <class Handle, auto Destroy>
class LibraryHandle {
 public:
  LibraryHandle() = default;
  ~LibraryHandle() {
    if (handle_ != nullptr) Destroy(handle_);
  }
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;

  Handle get() const { return handle_; }
  // Where the library's create function writes the handle: GA_*_CHECK(create(h.out(), ...)).
  Handle* out() { return &handle_; }

 private:
  Handle handle_ = nullptr;
};

}  // namespace gpuaccel::cuda
