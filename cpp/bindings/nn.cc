// Bindings of the neural-network ops (cpp/ops/nn.h); python/gpuaccel/nn.py gives them TF's
// names and argument conventions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "ops/nn.h"
#include "ops/post_activation.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {
Tensor or_undefined(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
}  // namespace

void init_nn(py::module_& m) {
  m.def("conv2d", [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, int64_t sh,
                     int64_t sw, const std::string& padding, int64_t dh, int64_t dw,
                     const std::string& activation) {
    return conv2d(x, w, or_undefined(bias), sh, sw, parse_padding(padding, "Conv2D"), dh, dw,
                  parse_post_activation(activation, "Conv2D"));
  }, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("stride_h"), py::arg("stride_w"),
     py::arg("padding"), py::arg("dilation_h"), py::arg("dilation_w"),
     py::arg("activation") = "linear");
  m.def("pool2d", [](const Tensor& x, bool max, int64_t wh, int64_t ww, int64_t sh, int64_t sw,
                     const std::string& padding) {
    return pool2d(x, max, wh, ww, sh, sw, parse_padding(padding, max ? "MaxPool" : "AvgPool"));
  });
  m.def("softmax", &softmax, py::arg("x"), py::arg("axis") = -1, py::arg("log") = false);
  m.def("dropout", &dropout);
  m.def("batch_norm", &batch_norm);
  m.def("layer_norm", &layer_norm);
  m.def("embedding", &embedding);
  m.def("scaled_dot_product_attention", [](const Tensor& q, const Tensor& k, const Tensor& v,
                                           std::optional<Tensor> mask) {
    return scaled_dot_product_attention(q, k, v, or_undefined(mask));
  });
  m.def("sparse_softmax_cross_entropy", &sparse_softmax_cross_entropy);
  m.def("softmax_cross_entropy", &softmax_cross_entropy);
  m.def("mean_squared_error", &mean_squared_error);
  m.def("one_hot", [](const Tensor& labels, int64_t n, const std::string& dtype) {
    return one_hot(labels, n, parse_dtype(dtype));
  });
}

}  // namespace gpuaccel::bindings
