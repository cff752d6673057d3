// Bindings of the C++ Keras layers (cpp/nn) as gpuaccel._C.layers: the base nn::Layer (build,
// call with the GIL released, weights, trainable) and one constructor per layer class, held by
// std::shared_ptr so the model graph can keep them as nn::LayerPtr. python/gpuaccel/keras/
// layers.py parses Keras's arguments and calls these constructors with plain values.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "bindings/held_python_callable.h"
#include "bindings/op_recording.h"
#include "core/dtype.h"
#include "nn/activation_layer.h"
#include "nn/activations.h"
#include "nn/batch_normalization.h"
#include "nn/conv1d.h"
#include "nn/conv2d.h"
#include "nn/conv2d_transpose.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/flatten.h"
#include "nn/global_average_pooling2d.h"
#include "nn/initializers.h"
#include "nn/layer.h"
#include "nn/layer_normalization.h"
#include "nn/merging.h"
#include "nn/multi_head_attention.h"
#include "nn/pooling2d.h"
#include "nn/rescaling.h"
#include "nn/reshape.h"
#include "nn/traced_layer.h"
#include "ops/creation.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

std::shared_ptr<nn::TracedFunction> make_traced_function(py::function python_fn, py::function warn) {
  auto fn = std::make_shared<HeldPythonCallable>(std::move(python_fn));
  auto warn_fn = std::make_shared<HeldPythonCallable>(std::move(warn));
  return std::make_shared<nn::TracedFunction>(
      [fn](const std::vector<Tensor>& inputs, bool flag) {
        py::gil_scoped_acquire gil;
        return (*fn)(inputs, flag).cast<std::vector<Tensor>>();
      },
      [warn_fn](const std::string& reason) { (*warn_fn)(reason); });
}

// layer.call from Python: inside a traced Python call() (a sublayer), recorded as one op that
// calls the layer again, so the sublayer's own ops (or its own trace) are not recorded twice.
Tensor call_layer(const std::shared_ptr<nn::Layer>& layer, const std::vector<Tensor>& inputs,
                  bool training) {
  Tensor out;
  {
    nn::OpTraceRecorder::Pause pause;
    py::gil_scoped_release release;
    out = layer->traced_call(inputs, training);
  }
  if (nn::OpTraceRecorder::active()) {
    nn::OpTraceRecorder::record(inputs, {out}, [layer, training](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{layer->traced_call(in, training)};
    });
  }
  return out;
}

}  // namespace

void init_layers(py::module_& m) {
  using namespace gpuaccel::nn;
  py::module_ lm = m.def_submodule("layers", "Keras layers implemented in C++ (cpp/nn)");

  py::class_<Layer, std::shared_ptr<Layer>>(lm, "Layer")
      .def_property_readonly("name", &Layer::name)
      .def_property_readonly("type", &Layer::type)
      .def_property_readonly("built", &Layer::built)
      .def("build", &Layer::build, py::arg("input_shapes"),
           "Creates the weights for these input shapes (a list of shapes, -1 for None).")
      .def("output_shape", &Layer::output_shape, py::arg("input_shapes"))
      .def("call", &call_layer, py::arg("inputs"), py::arg("training") = false)
      .def_property_readonly("weights", [](const Layer& layer) {
        py::list out;
        for (const Weight& w : layer.weights()) out.append(py::make_tuple(w.name, w.value, w.trainable));
        return out;
      })
      .def_property_readonly("trainable_weights", &Layer::trainable_weights)
      .def_property("trainable", &Layer::trainable, &Layer::set_trainable)
      .def("count_params", &Layer::count_params)
      .def_property(
          "compute_dtype", [](const Layer& layer) { return std::string(dtype_name(layer.compute_dtype())); },
          [](Layer& layer, const std::string& dtype) { layer.set_compute_dtype(parse_dtype(dtype)); })
      .def("__repr__", [](const Layer& layer) {
        return "<gpuaccel._C.layers." + std::string(layer.type()) + " name='" + layer.name() + "'>";
      });

  py::class_<TracedFunction, std::shared_ptr<TracedFunction>>(lm, "TracedFunction")
      .def(py::init(&make_traced_function), py::arg("python_fn"), py::arg("warn"),
           "python_fn(inputs, flag) -> [outputs...], traced once per input signature and "
           "replayed; warn(reason) is told once when a signature cannot be traced.")
      .def_property_readonly("python_calls", &TracedFunction::python_calls)
      .def_property_readonly("eager_reason", &TracedFunction::eager_reason)
      .def_property_readonly("traced_signatures", &TracedFunction::traced_signatures);
  py::class_<TracedLayer, Layer, std::shared_ptr<TracedLayer>>(lm, "TracedLayer")
      .def(py::init<std::string, std::string, TracedFunctionPtr>(), py::arg("name"),
           py::arg("type"), py::arg("call"),
           "A Python layer: call(inputs, training) -> [output, *added_losses].")
      .def("add_weight_value", &TracedLayer::add_weight_value, py::arg("name"), py::arg("value"),
           py::arg("trainable"))
      .def("added_losses", &TracedLayer::added_losses)
      .def("clear_added_losses", &TracedLayer::clear_added_losses)
      .def_property_readonly("python_calls", [](const TracedLayer& layer) { return layer.traced_call()->python_calls(); })
      .def_property_readonly("eager_reason", [](const TracedLayer& layer) { return layer.traced_call()->eager_reason(); })
      .def_property_readonly("traced_signatures", [](const TracedLayer& layer) { return layer.traced_call()->traced_signatures(); });
  py::class_<Dense, Layer, std::shared_ptr<Dense>>(lm, "Dense")
      .def(py::init<std::string, int64_t, const std::string&, bool, const std::string&, const std::string&>(),
           py::arg("name"), py::arg("units"), py::arg("activation") = "linear", py::arg("use_bias") = true,
           py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros");
  py::class_<Conv1D, Layer, std::shared_ptr<Conv1D>>(lm, "Conv1D")
      .def(py::init<std::string, int64_t, int64_t, int64_t, const std::string&, int64_t,
                    const std::string&, bool, const std::string&, const std::string&, int64_t>(),
           py::arg("name"), py::arg("filters"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = "valid", py::arg("dilation") = 1, py::arg("activation") = "linear",
           py::arg("use_bias") = true, py::arg("kernel_initializer") = "glorot_uniform",
           py::arg("bias_initializer") = "zeros", py::arg("groups") = 1);
  py::class_<Conv2D, Layer, std::shared_ptr<Conv2D>>(lm, "Conv2D")
      .def(py::init<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, const std::string&, int64_t,
                    int64_t, const std::string&, bool, const std::string&, const std::string&, int64_t>(),
           py::arg("name"), py::arg("filters"), py::arg("kernel_h"), py::arg("kernel_w"), py::arg("stride_h") = 1,
           py::arg("stride_w") = 1, py::arg("padding") = "valid", py::arg("dilation_h") = 1,
           py::arg("dilation_w") = 1, py::arg("activation") = "linear", py::arg("use_bias") = true,
           py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros",
           py::arg("groups") = 1);
  py::class_<Conv2DTranspose, Layer, std::shared_ptr<Conv2DTranspose>>(lm, "Conv2DTranspose")
      .def(py::init<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, const std::string&, int64_t,
                    int64_t, int64_t, int64_t, const std::string&, bool, const std::string&, const std::string&>(),
           py::arg("name"), py::arg("filters"), py::arg("kernel_h"), py::arg("kernel_w"), py::arg("stride_h") = 1,
           py::arg("stride_w") = 1, py::arg("padding") = "valid", py::arg("output_padding_h") = -1,
           py::arg("output_padding_w") = -1, py::arg("dilation_h") = 1, py::arg("dilation_w") = 1,
           py::arg("activation") = "linear", py::arg("use_bias") = true,
           py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros");
  py::class_<MaxPooling2D, Layer, std::shared_ptr<MaxPooling2D>>(lm, "MaxPooling2D")
      .def(py::init<std::string, int64_t, int64_t, int64_t, int64_t, const std::string&>(), py::arg("name"),
           py::arg("pool_h") = 2, py::arg("pool_w") = 2, py::arg("stride_h") = 0, py::arg("stride_w") = 0,
           py::arg("padding") = "valid");
  py::class_<AveragePooling2D, Layer, std::shared_ptr<AveragePooling2D>>(lm, "AveragePooling2D")
      .def(py::init<std::string, int64_t, int64_t, int64_t, int64_t, const std::string&>(), py::arg("name"),
           py::arg("pool_h") = 2, py::arg("pool_w") = 2, py::arg("stride_h") = 0, py::arg("stride_w") = 0,
           py::arg("padding") = "valid");
  py::class_<GlobalAveragePooling2D, Layer, std::shared_ptr<GlobalAveragePooling2D>>(lm, "GlobalAveragePooling2D")
      .def(py::init<std::string, bool>(), py::arg("name"), py::arg("keepdims") = false);
  py::class_<Flatten, Layer, std::shared_ptr<Flatten>>(lm, "Flatten")
      .def(py::init<std::string>(), py::arg("name"));
  py::class_<Reshape, Layer, std::shared_ptr<Reshape>>(lm, "Reshape")
      .def(py::init<std::string, Shape>(), py::arg("name"), py::arg("target_shape"));
  py::class_<Rescaling, Layer, std::shared_ptr<Rescaling>>(lm, "Rescaling")
      .def(py::init<std::string, double, double>(), py::arg("name"), py::arg("scale"),
           py::arg("offset") = 0.0);
  py::class_<Add, Layer, std::shared_ptr<Add>>(lm, "Add")
      .def(py::init<std::string>(), py::arg("name"));
  py::class_<Concatenate, Layer, std::shared_ptr<Concatenate>>(lm, "Concatenate")
      .def(py::init<std::string, int64_t>(), py::arg("name"), py::arg("axis") = -1);
  py::class_<Dropout, Layer, std::shared_ptr<Dropout>>(lm, "Dropout")
      .def(py::init<std::string, double>(), py::arg("name"), py::arg("rate"));
  py::class_<Activation, Layer, std::shared_ptr<Activation>>(lm, "Activation")
      .def(py::init<std::string, const std::string&>(), py::arg("name"), py::arg("activation"));
  py::class_<BatchNormalization, Layer, std::shared_ptr<BatchNormalization>>(lm, "BatchNormalization")
      .def(py::init<std::string, int64_t, double, double, bool, bool, const std::string&, const std::string&,
                    const std::string&, const std::string&>(),
           py::arg("name"), py::arg("axis") = -1, py::arg("momentum") = 0.99, py::arg("epsilon") = 1e-3,
           py::arg("center") = true, py::arg("scale") = true, py::arg("beta_initializer") = "zeros",
           py::arg("gamma_initializer") = "ones", py::arg("moving_mean_initializer") = "zeros",
           py::arg("moving_variance_initializer") = "ones");
  py::class_<LayerNormalization, Layer, std::shared_ptr<LayerNormalization>>(lm, "LayerNormalization")
      .def(py::init<std::string, int64_t, double, bool, bool, const std::string&, const std::string&>(),
           py::arg("name"), py::arg("axis") = -1, py::arg("epsilon") = 1e-3, py::arg("center") = true,
           py::arg("scale") = true, py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones");
  py::class_<Embedding, Layer, std::shared_ptr<Embedding>>(lm, "Embedding")
      .def(py::init<std::string, int64_t, int64_t, const std::string&>(), py::arg("name"), py::arg("input_dim"),
           py::arg("output_dim"), py::arg("embeddings_initializer") = "uniform");
  py::class_<MultiHeadAttention, Layer, std::shared_ptr<MultiHeadAttention>>(lm, "MultiHeadAttention")
      .def(py::init<std::string, int64_t, int64_t, int64_t, double, bool, int64_t, const std::string&,
                    const std::string&>(),
           py::arg("name"), py::arg("num_heads"), py::arg("key_dim"), py::arg("value_dim") = 0,
           py::arg("dropout") = 0.0, py::arg("use_bias") = true, py::arg("output_dim") = 0,
           py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros");

  lm.def("initialize", [](const std::string& name, const Shape& shape) {
    return initialize(name, shape, creation_device("VarHandleOp", std::nullopt), "initializer");
  });
  lm.def("initializer_names", &initializer_names);
  lm.def("canonical_initializer", [](const std::string& name) { return canonical_initializer(name, "initializer"); });
  lm.def("activation_names", &activation_names);
  lm.def("check_activation", [](const std::string& name) {
    return std::string(activation_name(parse_activation(name, "activation")));
  });
}

}  // namespace gpuaccel::bindings
