// Conversion of Python arguments the op bindings take loosely (axes, numbers) into C++ values,
// with a TypeError or InvalidArgumentError that names the op, the argument and the value
// instead of pybind11's "Unable to cast Python instance". Arguments bound with a plain C++
// type rely on python/gpuaccel/_binding_errors.py, which rewrites pybind11's
// "incompatible function arguments" for every function of the module.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ops/type_promotion.h"

namespace gpuaccel::bindings {

// A Python int (or anything with __index__, e.g. numpy.int64), not a bool. InvalidArgumentError
// when it does not fit in int64.
int64_t int_argument(pybind11::handle value, std::string_view op, std::string_view name);
// None (nullopt: every axis), an int, or a tuple/list of ints.
std::optional<std::vector<int64_t>> axes_argument(pybind11::handle value, std::string_view op);
// A Python or NumPy bool, int or float as a Scalar (its category and exact value).
Scalar scalar_argument(pybind11::handle value, std::string_view op, std::string_view name);
// `array` itself when its bytes are in this machine's order, else a copy that is: an array of
// the other byte order ('>f4' on x86) holds the same numbers in swapped bytes, which a tensor
// reading the buffer as its own would silently turn into other numbers.
pybind11::array in_native_byte_order(const pybind11::array& array);

}  // namespace gpuaccel::bindings
