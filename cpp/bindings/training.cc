// Bindings of the Keras training core: losses, metrics, the layer graph and the per-batch
// Trainer (python/gpuaccel/keras/models.py drives them). Steps release the GIL: the whole batch
// runs in C++ and another Python thread (the data pipeline's) can work meanwhile.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/bindings.h"
#include "core/errors.h"
#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "nn/traced_function.h"
#include "train/predictor.h"
#include "train/trainer.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

nn::LossKind parse_loss_kind(const std::string& name) {
  if (name == "sparse_categorical_crossentropy") return nn::LossKind::kSparseCategoricalCrossentropy;
  if (name == "categorical_crossentropy") return nn::LossKind::kCategoricalCrossentropy;
  if (name == "binary_crossentropy") return nn::LossKind::kBinaryCrossentropy;
  if (name == "mean_squared_error") return nn::LossKind::kMeanSquaredError;
  throw_value_error("Loss", "unknown loss kind '" + name + "'");
}

nn::MetricKind parse_metric_kind(const std::string& name) {
  if (name == "accuracy") return nn::MetricKind::kAccuracy;
  if (name == "sparse_categorical_accuracy") return nn::MetricKind::kSparseCategoricalAccuracy;
  if (name == "categorical_accuracy") return nn::MetricKind::kCategoricalAccuracy;
  if (name == "binary_accuracy") return nn::MetricKind::kBinaryAccuracy;
  if (name == "mean_squared_error") return nn::MetricKind::kMeanSquaredError;
  if (name == "mean_absolute_error") return nn::MetricKind::kMeanAbsoluteError;
  throw_value_error("Metric", "unknown metric kind '" + name + "'");
}

}  // namespace

void init_training(py::module_& m) {
  py::class_<nn::Loss, nn::LossPtr>(m, "Loss")
      .def(py::init([](const std::string& kind, bool from_logits, double label_smoothing) {
             nn::LossConfig config;
             config.kind = parse_loss_kind(kind);
             config.from_logits = from_logits;
             config.label_smoothing = label_smoothing;
             return std::make_shared<nn::Loss>(config);
           }),
           py::arg("kind"), py::arg("from_logits") = false, py::arg("label_smoothing") = 0.0)
      .def_static("from_python", [](const std::string& name, nn::TracedFunctionPtr fn) {
             return std::make_shared<nn::Loss>(name, [fn](const Tensor& y_true, const Tensor& y_pred) {
               return (*fn)({y_true, y_pred}, false).at(0);
             });
           }, py::arg("name"), py::arg("traced_function"),
           "A Python loss: traced_function([y_true, y_pred]) -> [values] (layers.TracedFunction).")
      .def_property_readonly("name", &nn::Loss::name)
      .def("per_example", &nn::Loss::per_example, py::arg("y_true"), py::arg("y_pred"))
      .def("__call__", &nn::Loss::operator(), py::arg("y_true"), py::arg("y_pred"));

  py::class_<nn::Metric, nn::MetricPtr>(m, "Metric")
      .def(py::init([](const std::string& name, const std::string& kind, double threshold) {
             return std::make_shared<nn::Metric>(name, parse_metric_kind(kind), threshold);
           }),
           py::arg("name"), py::arg("kind"), py::arg("threshold") = 0.5)
      .def_property_readonly("name", &nn::Metric::name)
      .def("update", &nn::Metric::update, py::arg("y_true"), py::arg("y_pred"))
      .def("values", &nn::Metric::values, py::arg("y_true"), py::arg("y_pred"))
      .def("result", &nn::Metric::result)
      .def("reset", &nn::Metric::reset);

  py::class_<nn::LayerGraph, nn::LayerGraphPtr>(m, "LayerGraph")
      .def(py::init<int>(), py::arg("num_inputs"))
      .def("add_node", &nn::LayerGraph::add_node, py::arg("layer"), py::arg("input_ids"))
      .def("set_outputs", &nn::LayerGraph::set_outputs, py::arg("output_ids"))
      .def("forward", &nn::LayerGraph::forward, py::arg("inputs"), py::arg("training"),
           py::call_guard<py::gil_scoped_release>())
      .def("trainable_weights", &nn::LayerGraph::trainable_weights);

  py::class_<train::Trainer, std::shared_ptr<train::Trainer>>(m, "Trainer")
      .def(py::init<nn::LayerGraphPtr, nn::LossPtr, std::shared_ptr<optim::Optimizer>,
                    std::vector<nn::MetricPtr>>(),
           py::arg("graph"), py::arg("loss"), py::arg("optimizer"), py::arg("metrics"))
      .def("train_step", [](train::Trainer& t, const std::vector<Tensor>& x, const Tensor& y,
                            std::optional<Tensor> sample_weight) {
             return t.train_step(x, y, sample_weight ? *sample_weight : Tensor());
           }, py::arg("x"), py::arg("y"), py::arg("sample_weight") = py::none(),
           py::call_guard<py::gil_scoped_release>())
      .def("test_step", [](train::Trainer& t, const std::vector<Tensor>& x, const Tensor& y,
                           std::optional<Tensor> sample_weight) {
             return t.test_step(x, y, sample_weight ? *sample_weight : Tensor());
           }, py::arg("x"), py::arg("y"), py::arg("sample_weight") = py::none(),
           py::call_guard<py::gil_scoped_release>())
      .def("reset_metrics", &train::Trainer::reset_metrics)
      .def("results", &train::Trainer::results)
      .def_property_readonly("host_reads", &train::Trainer::host_reads)
      .def(
          "set_jit_compile",
          [](train::Trainer& t, const std::string& mode) {
            // python/gpuaccel/keras/_trainer.py validates compile()'s argument and maps it.
            if (mode == "auto") return t.set_jit_compile(train::JitCompile::kAuto);
            if (mode == "on") return t.set_jit_compile(train::JitCompile::kOn);
            if (mode == "off") return t.set_jit_compile(train::JitCompile::kOff);
            throw_value_error("compile", "jit_compile mode must be 'auto', 'on' or 'off', got '" +
                                             mode + "'");
          },
          py::arg("mode"))
      .def_property_readonly("graph_captures",
                             [](const train::Trainer& t) { return t.capture_policy().captures(); })
      .def_property_readonly("graph_replays",
                             [](const train::Trainer& t) { return t.capture_policy().replays(); })
      .def_property_readonly("graph_fallback_reason", [](const train::Trainer& t) {
        return t.capture_policy().fallback_reason();
      })
      .def_property("upload_on_copy_stream", &train::Trainer::upload_on_copy_stream,
                    &train::Trainer::set_upload_on_copy_stream)
      .def_property_readonly("copy_stream_uploads", &train::Trainer::copy_stream_uploads);

  py::class_<train::Predictor, std::shared_ptr<train::Predictor>>(m, "Predictor")
      .def(py::init<nn::LayerGraphPtr>(), py::arg("graph"))
      .def("predict_step", &train::Predictor::predict_step, py::arg("x"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("graph", &train::Predictor::graph)
      .def_property(
          "upload_on_copy_stream", [](const train::Predictor& p) { return p.batches().upload_on_copy_stream(); },
          [](train::Predictor& p, bool on) { p.batches().set_upload_on_copy_stream(on); })
      .def_property_readonly("copy_stream_uploads",
                             [](const train::Predictor& p) { return p.batches().copy_stream_uploads(); });
}

}  // namespace gpuaccel::bindings
