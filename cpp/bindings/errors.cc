// Maps gpuaccel::Error to the Python exception for its code: ValueError / RuntimeError for
// configuration mistakes (as TF raises them), gpuaccel.errors.* (TF's classes) for the rest.
#include <pybind11/pybind11.h>

#include "bindings/bindings.h"
#include "core/errors.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

void init_errors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gpuaccel::Error& e) {
      if (e.code() == ErrorCode::kValue) {
        PyErr_SetString(PyExc_ValueError, e.what());
        return;
      }
      if (e.code() == ErrorCode::kRuntime) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      py::object errors = py::module_::import("gpuaccel.errors");
      py::object cls = errors.attr(error_code_name(e.code()));
      py::object instance = cls(e.what(), py::arg("op_name") = e.op());
      PyErr_SetObject(cls.ptr(), instance.ptr());
    }
  });
  m.def("_raise_error_for_testing", [](const std::string& code_name, const std::string& op,
                                       const std::string& message) {
    for (ErrorCode code : {ErrorCode::kValue, ErrorCode::kRuntime, ErrorCode::kInvalidArgument,
                           ErrorCode::kNotFound, ErrorCode::kFailedPrecondition,
                           ErrorCode::kResourceExhausted, ErrorCode::kUnimplemented,
                           ErrorCode::kInternal}) {
      if (code_name == error_code_name(code)) throw gpuaccel::Error(code, op, message);
    }
    throw gpuaccel::Error(ErrorCode::kValue, "_raise_error_for_testing",
                          "unknown error code name '" + code_name + "'");
  }, "Raises the C++ error with the given code name, to test the translation.");
}

}  // namespace gpuaccel::bindings
