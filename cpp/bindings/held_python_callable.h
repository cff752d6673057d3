// A Python callable owned by C++ code that may call it, or drop it, on a thread that does not
// hold the GIL (the training step and backward passes run with the GIL released; a layer or an
// autograd node may die on any thread). Shared by the layer bindings (Python call() traced into
// C++) and the autograd node whose backward is Python (python_function_node.cc).
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

namespace gpuaccel::bindings {

class HeldPythonCallable {
 public:
  explicit HeldPythonCallable(pybind11::function fn) : fn_(std::move(fn)) {}
  ~HeldPythonCallable() {
    if (!Py_IsInitialized()) {
      fn_.release();  // the interpreter is gone: nothing left to decrement
      return;
    }
    pybind11::gil_scoped_acquire gil;
    fn_ = pybind11::function();
  }
  HeldPythonCallable(const HeldPythonCallable&) = delete;
  HeldPythonCallable& operator=(const HeldPythonCallable&) = delete;

  // Calls with the GIL held; a Python exception leaves as pybind11::error_already_set, which
  // carries the original exception back to the Python caller of the C++ code.
  template <class... Args>
  pybind11::object operator()(Args&&... args) const {
    pybind11::gil_scoped_acquire gil;
    return fn_(std::forward<Args>(args)...);
  }

 private:
  pybind11::function fn_;
};

}  // namespace gpuaccel::bindings
