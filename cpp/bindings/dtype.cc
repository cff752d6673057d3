// Bindings of DType metadata and the bulk f16/bf16 conversions, so Python (gpuaccel.dtypes,
// NumPy hand-offs, tests against NumPy) uses the exact rounding of the C++ core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "core/dtype.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

// Input arrays must already hold the source type: no forcecast, so a float64 array is a
// TypeError instead of being silently rounded twice (f64 -> f32 -> f16).
template <typename T>
using InArray = py::array_t<T, py::array::c_style>;

template <typename Src, typename Dst>
py::array_t<Dst> convert_array(const InArray<Src>& src,
                               void (*convert)(const Src*, Dst*, size_t)) {
  std::vector<py::ssize_t> shape(src.shape(), src.shape() + src.ndim());
  py::array_t<Dst> dst(shape);
  const Src* in = src.data();
  Dst* out = dst.mutable_data();
  const size_t n = static_cast<size_t>(src.size());
  {
    py::gil_scoped_release release;
    convert(in, out, n);
  }
  return dst;
}

}  // namespace

void init_dtype(py::module_& m) {
  py::enum_<DType> dtype(m, "DType", "Element types of the C++ core.");
  for (DType d : kAllDTypes) dtype.value(dtype_name(d), d);

  m.def("dtype_names", [] {
    std::vector<std::string> names;
    for (DType d : kAllDTypes) names.emplace_back(dtype_name(d));
    return names;
  }, "The canonical dtype names, in the order of the C++ enum.");
  m.def("parse_dtype", &parse_dtype, py::arg("name"),
        "Parses a dtype name or alias (half, float, f16, f32, bf16); ValueError otherwise.");
  m.def("dtype_name", [](DType d) { return std::string(dtype_name(d)); }, py::arg("dtype"));
  m.def("dtype_size", &dtype_size, py::arg("dtype"), "Bytes per element.");
  m.def("dtype_is_floating", &is_floating, py::arg("dtype"));

  m.def("f32_to_f16_bits", [](const InArray<float>& a) {
    return convert_array<float, uint16_t>(a, &convert_f32_to_f16);
  }, py::arg("array"), "float32 array -> uint16 array of float16 bits (round to nearest even).");
  m.def("f16_bits_to_f32", [](const InArray<uint16_t>& a) {
    return convert_array<uint16_t, float>(a, &convert_f16_to_f32);
  }, py::arg("bits"), "uint16 array of float16 bits -> float32 array (exact).");
  m.def("f32_to_bf16_bits", [](const InArray<float>& a) {
    return convert_array<float, uint16_t>(a, &convert_f32_to_bf16);
  }, py::arg("array"), "float32 array -> uint16 array of bfloat16 bits (round to nearest even).");
  m.def("bf16_bits_to_f32", [](const InArray<uint16_t>& a) {
    return convert_array<uint16_t, float>(a, &convert_bf16_to_f32);
  }, py::arg("bits"), "uint16 array of bfloat16 bits -> float32 array (exact).");
}

}  // namespace gpuaccel::bindings
