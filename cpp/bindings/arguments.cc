// Loosely typed op arguments converted with errors that name them (see arguments.h).
#include "bindings/arguments.h"

#include "core/errors.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

std::string type_and_value(py::handle value) {
  return std::string(Py_TYPE(value.ptr())->tp_name) + " " + py::repr(value).cast<std::string>();
}

[[noreturn]] void wrong_type(std::string_view op, std::string_view name, const char* allowed,
                             py::handle value) {
  throw py::type_error("[" + std::string(op) + "] " + std::string(name) + " must be " + allowed +
                       ", got " + type_and_value(value));
}

bool is_integer(py::handle value) {
  return !PyBool_Check(value.ptr()) && PyIndex_Check(value.ptr()) &&
         !py::isinstance(value, py::module_::import("numpy").attr("bool_"));
}

}  // namespace

int64_t int_argument(py::handle value, std::string_view op, std::string_view name) {
  if (!is_integer(value)) wrong_type(op, name, "an int", value);
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                std::string(name) + " " + py::str(index).cast<std::string>() +
                    " is out of range (it must fit in int64)");
  }
  return v;
}

std::optional<std::vector<int64_t>> axes_argument(py::handle value, std::string_view op) {
  if (value.is_none()) return std::nullopt;
  if (is_integer(value)) return std::vector<int64_t>{int_argument(value, op, "axis")};
  if (!py::isinstance<py::tuple>(value) && !py::isinstance<py::list>(value)) {
    wrong_type(op, "axis", "None, an int or a tuple of ints", value);
  }
  std::vector<int64_t> axes;
  for (py::handle a : value) {
    if (!is_integer(a)) wrong_type(op, "each entry of axis", "an int", a);
    axes.push_back(int_argument(a, op, "axis"));
  }
  return axes;
}

Scalar scalar_argument(py::handle value, std::string_view op, std::string_view name) {
  Scalar s;
  py::module_ numpy = py::module_::import("numpy");
  if (PyBool_Check(value.ptr()) || py::isinstance(value, numpy.attr("bool_"))) {
    s.kind = Scalar::Kind::kBool;
    s.integer = py::cast<bool>(py::bool_(py::reinterpret_borrow<py::object>(value))) ? 1 : 0;
    s.real = double(s.integer);
    return s;
  }
  if (is_integer(value)) {
    s.kind = Scalar::Kind::kInt;
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    s.integer = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    s.fits_int64 = overflow == 0;
    s.real = PyLong_AsDouble(index.ptr());  // +-inf beyond float range
    if (s.real == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw_error(ErrorCode::kInvalidArgument, std::string(op),
                  std::string(name) + " " + py::str(index).cast<std::string>() +
                      " is too large for any dtype");
    }
    return s;
  }
  if (PyFloat_Check(value.ptr()) || py::isinstance(value, numpy.attr("floating"))) {
    s.kind = Scalar::Kind::kFloat;
    s.real = PyFloat_AsDouble(value.ptr());
    if (s.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return s;
  }
  wrong_type(op, name, "a tensor, a bool, an int or a float", value);
}

py::array in_native_byte_order(const py::array& array) {
  const py::dtype dtype = array.dtype();
  if (dtype.attr("isnative").cast<bool>()) return array;
  return array.attr("astype")(dtype.attr("newbyteorder")("="));
}

}  // namespace gpuaccel::bindings
