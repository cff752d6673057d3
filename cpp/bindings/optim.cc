// Bindings of the optimizers (cpp/optim). Each Python optimizer in gpuaccel.keras.optimizers holds
// one of these as `_cpp`, a shared_ptr<optim::Optimizer> the C++ training loop can take
// directly; apply_gradients releases the GIL while the fused kernels run. LossScaleOptimizer wraps
// another one (keras.optimizers.LossScaleOptimizer).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "optim/adadelta.h"
#include "optim/adafactor.h"
#include "optim/adagrad.h"
#include "optim/adam.h"
#include "optim/adamax.h"
#include "optim/ftrl.h"
#include "optim/lamb.h"
#include "optim/lion.h"
#include "optim/loss_scale_optimizer.h"
#include "optim/multi_optimizer.h"
#include "optim/nadam.h"
#include "optim/optimizer.h"
#include "optim/rmsprop.h"
#include "optim/schedule_free_adamw.h"
#include "optim/sgd.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

std::vector<Tensor> with_undefined(const std::vector<std::optional<Tensor>>& in) {
  std::vector<Tensor> out;
  out.reserve(in.size());
  for (const auto& t : in) out.push_back(t ? *t : Tensor());
  return out;
}

optim::OptimizerOptions make_options(std::optional<double> weight_decay,
                                     std::optional<double> clipnorm,
                                     std::optional<double> clipvalue,
                                     std::optional<double> global_clipnorm, std::string name) {
  optim::OptimizerOptions o;
  o.weight_decay = weight_decay;
  o.clipnorm = clipnorm;
  o.clipvalue = clipvalue;
  o.global_clipnorm = global_clipnorm;
  o.name = std::move(name);
  return o;
}

#define GA_OPTIMIZER_OPTION_ARGS                                                         \
  py::arg("weight_decay") = py::none(), py::arg("clipnorm") = py::none(),               \
      py::arg("clipvalue") = py::none(), py::arg("global_clipnorm") = py::none(),       \
      py::arg("name") = ""

using Opt = std::optional<double>;

template <typename T>
struct type_tag {
  using type = T;
};

}  // namespace

void init_optim(py::module_& parent) {
  py::module_ m = parent.def_submodule("optim", "fused optimizers (cpp/optim)");
  using optim::Optimizer;
  py::class_<Optimizer, std::shared_ptr<Optimizer>>(m, "Optimizer")
      .def(
          "apply_gradients",
          [](Optimizer& self, const std::vector<std::optional<Tensor>>& grads,
             const std::vector<Tensor>& params) {
            const std::vector<Tensor> g = with_undefined(grads);
            py::gil_scoped_release release;
            self.apply_gradients(g, params);
          },
          py::arg("grads"), py::arg("params"))
      .def_property("learning_rate", &Optimizer::learning_rate, &Optimizer::set_learning_rate)
      .def_property("iterations", &Optimizer::iterations, &Optimizer::set_iterations)
      .def_property_readonly("name", [](const Optimizer& o) { return std::string(o.name()); })
      .def_property_readonly("type", [](const Optimizer& o) { return std::string(o.type()); })
      .def_property_readonly("loss_scale", &Optimizer::loss_scale)
      .def_property_readonly("weight_decay", [](const Optimizer& o) { return o.options().weight_decay; })
      .def_property_readonly("clipnorm", [](const Optimizer& o) { return o.options().clipnorm; })
      .def_property_readonly("clipvalue", [](const Optimizer& o) { return o.options().clipvalue; })
      .def_property_readonly("global_clipnorm",
                             [](const Optimizer& o) { return o.options().global_clipnorm; })
      .def("variables", &Optimizer::variables)
      .def("slot", [](const Optimizer& o, const Tensor& p, const std::string& name) -> std::optional<Tensor> {
        Tensor t = o.slot(p, name);
        if (!t.defined()) return std::nullopt;
        return t;
      })
      .def("exclude_from_weight_decay", &Optimizer::exclude_from_weight_decay)
      .def_property_readonly("slot_kinds", &Optimizer::slot_kinds)
      .def("set_slot", &Optimizer::set_slot, py::arg("param"), py::arg("slot_name"),
           py::arg("value"))
      .def("set_moving_average", &Optimizer::set_moving_average, py::arg("use_ema"),
           py::arg("ema_momentum"), py::arg("ema_overwrite_frequency"))
      .def(
          "finalize_variable_values",
          [](Optimizer& self, const std::vector<Tensor>& params) {
            py::gil_scoped_release release;
            self.finalize_variable_values(params);
          },
          py::arg("params"))
      .def(
          "swap_variables_with_averages",
          [](Optimizer& self, const std::vector<Tensor>& params) {
            py::gil_scoped_release release;
            self.swap_variables_with_averages(params);
          },
          py::arg("params"))
      .def(
          "copy_variables_into_averages",
          [](Optimizer& self, const std::vector<Tensor>& params) {
            py::gil_scoped_release release;
            self.copy_variables_into_averages(params);
          },
          py::arg("params"))
      .def("average",
           [](const Optimizer& o, const Tensor& p) -> std::optional<Tensor> {
             Tensor t = o.average(p);
             if (!t.defined()) return std::nullopt;
             return t;
           })
      .def_property_readonly("capture_blocker", &Optimizer::capture_blocker);

  py::class_<optim::SGD, Optimizer, std::shared_ptr<optim::SGD>>(m, "SGD")
      .def(py::init([](double lr, double momentum, bool nesterov, Opt wd, Opt cn, Opt cv, Opt gcn,
                       std::string name) {
             return std::make_shared<optim::SGD>(lr, momentum, nesterov,
                                                 make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.01, py::arg("momentum") = 0.0, py::arg("nesterov") = false,
           GA_OPTIMIZER_OPTION_ARGS)
      .def_property_readonly("momentum", &optim::SGD::momentum)
      .def_property_readonly("nesterov", &optim::SGD::nesterov);

  py::class_<optim::Adam, Optimizer, std::shared_ptr<optim::Adam>>(m, "Adam")
      .def(py::init([](double lr, double b1, double b2, double eps, bool amsgrad, Opt wd, Opt cn,
                       Opt cv, Opt gcn, std::string name) {
             return std::make_shared<optim::Adam>(lr, b1, b2, eps, amsgrad,
                                                  make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999,
           py::arg("epsilon") = 1e-7, py::arg("amsgrad") = false, GA_OPTIMIZER_OPTION_ARGS)
      .def_property_readonly("beta_1", &optim::Adam::beta_1)
      .def_property_readonly("beta_2", &optim::Adam::beta_2)
      .def_property_readonly("epsilon", &optim::Adam::epsilon)
      .def_property_readonly("amsgrad", &optim::Adam::amsgrad);

  py::class_<optim::AdamW, optim::Adam, std::shared_ptr<optim::AdamW>>(m, "AdamW")
      .def(py::init([](double lr, double wd, double b1, double b2, double eps, bool amsgrad,
                       Opt cn, Opt cv, Opt gcn, std::string name) {
             return std::make_shared<optim::AdamW>(
                 lr, wd, b1, b2, eps, amsgrad,
                 make_options(std::nullopt, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("weight_decay") = 0.004,
           py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-7,
           py::arg("amsgrad") = false, py::arg("clipnorm") = py::none(),
           py::arg("clipvalue") = py::none(), py::arg("global_clipnorm") = py::none(),
           py::arg("name") = "");

  py::class_<optim::RMSprop, Optimizer, std::shared_ptr<optim::RMSprop>>(m, "RMSprop")
      .def(py::init([](double lr, double rho, double momentum, double eps, bool centered, Opt wd,
                       Opt cn, Opt cv, Opt gcn, std::string name) {
             return std::make_shared<optim::RMSprop>(
                 lr, rho, momentum, eps, centered, make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("rho") = 0.9, py::arg("momentum") = 0.0,
           py::arg("epsilon") = 1e-7, py::arg("centered") = false, GA_OPTIMIZER_OPTION_ARGS)
      .def_property_readonly("rho", &optim::RMSprop::rho)
      .def_property_readonly("momentum", &optim::RMSprop::momentum)
      .def_property_readonly("epsilon", &optim::RMSprop::epsilon)
      .def_property_readonly("centered", &optim::RMSprop::centered);

  py::class_<optim::Adagrad, Optimizer, std::shared_ptr<optim::Adagrad>>(m, "Adagrad")
      .def(py::init([](double lr, double initial, double eps, Opt wd, Opt cn, Opt cv, Opt gcn,
                       std::string name) {
             return std::make_shared<optim::Adagrad>(
                 lr, initial, eps, make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("initial_accumulator_value") = 0.1,
           py::arg("epsilon") = 1e-7, GA_OPTIMIZER_OPTION_ARGS);

  // Adamax and Nadam take the same arguments as each other.
  auto bind_beta_pair = [&](auto tag, const char* name) {
    using T = typename decltype(tag)::type;
    py::class_<T, Optimizer, std::shared_ptr<T>>(m, name).def(
        py::init([](double lr, double b1, double b2, double eps, Opt wd, Opt cn, Opt cv, Opt gcn,
                    std::string n) {
          return std::make_shared<T>(lr, b1, b2, eps, make_options(wd, cn, cv, gcn, std::move(n)));
        }),
        py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999,
        py::arg("epsilon") = 1e-7, GA_OPTIMIZER_OPTION_ARGS);
  };
  bind_beta_pair(type_tag<optim::Adamax>{}, "Adamax");
  bind_beta_pair(type_tag<optim::Nadam>{}, "Nadam");

  py::class_<optim::Adadelta, Optimizer, std::shared_ptr<optim::Adadelta>>(m, "Adadelta")
      .def(py::init([](double lr, double rho, double eps, Opt wd, Opt cn, Opt cv, Opt gcn,
                       std::string name) {
             return std::make_shared<optim::Adadelta>(
                 lr, rho, eps, make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("rho") = 0.95, py::arg("epsilon") = 1e-7,
           GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::Lion, Optimizer, std::shared_ptr<optim::Lion>>(m, "Lion")
      .def(py::init([](double lr, double b1, double b2, Opt wd, Opt cn, Opt cv, Opt gcn,
                       std::string name) {
             return std::make_shared<optim::Lion>(lr, b1, b2,
                                                  make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.99,
           GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::Ftrl, Optimizer, std::shared_ptr<optim::Ftrl>>(m, "Ftrl")
      .def(py::init([](double lr, double power, double initial, double l1, double l2,
                       double l2_shrinkage, double beta, Opt wd, Opt cn, Opt cv, Opt gcn,
                       std::string name) {
             optim::FtrlSettings s;
             s.learning_rate_power = power;
             s.initial_accumulator_value = initial;
             s.l1_regularization_strength = l1;
             s.l2_regularization_strength = l2;
             s.l2_shrinkage_regularization_strength = l2_shrinkage;
             s.beta = beta;
             return std::make_shared<optim::Ftrl>(lr, s,
                                                  make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("learning_rate_power") = -0.5,
           py::arg("initial_accumulator_value") = 0.1,
           py::arg("l1_regularization_strength") = 0.0,
           py::arg("l2_regularization_strength") = 0.0,
           py::arg("l2_shrinkage_regularization_strength") = 0.0, py::arg("beta") = 0.0,
           GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::Lamb, Optimizer, std::shared_ptr<optim::Lamb>>(m, "Lamb")
      .def(py::init([](double lr, double b1, double b2, double eps, Opt wd, Opt cn, Opt cv,
                       Opt gcn, std::string name) {
             return std::make_shared<optim::Lamb>(lr, b1, b2, eps,
                                                  make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("beta_1") = 0.9, py::arg("beta_2") = 0.999,
           py::arg("epsilon") = 1e-7, GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::Adafactor, Optimizer, std::shared_ptr<optim::Adafactor>>(m, "Adafactor")
      .def(py::init([](double lr, double beta_2_decay, double epsilon_1, double epsilon_2,
                       double clip_threshold, bool relative_step, Opt wd, Opt cn, Opt cv,
                       Opt gcn, std::string name) {
             optim::AdafactorSettings s;
             s.beta_2_decay = beta_2_decay;
             s.epsilon_1 = epsilon_1;
             s.epsilon_2 = epsilon_2;
             s.clip_threshold = clip_threshold;
             s.relative_step = relative_step;
             return std::make_shared<optim::Adafactor>(
                 lr, s, make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.001, py::arg("beta_2_decay") = -0.8,
           py::arg("epsilon_1") = 1e-30, py::arg("epsilon_2") = 1e-3,
           py::arg("clip_threshold") = 1.0, py::arg("relative_step") = true,
           GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::ScheduleFreeAdamW, Optimizer, std::shared_ptr<optim::ScheduleFreeAdamW>>(
      m, "ScheduleFreeAdamW")
      .def(py::init([](double lr, double b1, double b2, double eps, double warmup, Opt wd,
                       Opt cn, Opt cv, Opt gcn, std::string name) {
             return std::make_shared<optim::ScheduleFreeAdamW>(
                 lr, b1, b2, eps, warmup, make_options(wd, cn, cv, gcn, std::move(name)));
           }),
           py::arg("learning_rate") = 0.0025, py::arg("beta_1") = 0.9,
           py::arg("beta_2") = 0.999, py::arg("epsilon") = 1e-8, py::arg("warmup_steps") = 0,
           GA_OPTIMIZER_OPTION_ARGS);

  py::class_<optim::MultiOptimizer, Optimizer, std::shared_ptr<optim::MultiOptimizer>>(
      m, "MultiOptimizer")
      .def(py::init([](std::vector<std::shared_ptr<Optimizer>> inner, std::string name) {
             return std::make_shared<optim::MultiOptimizer>(std::move(inner), std::move(name));
           }),
           py::arg("inner"), py::arg("name") = "")
      .def("assign", &optim::MultiOptimizer::assign, py::arg("params"), py::arg("inner_index"))
      .def_property_readonly("inner", &optim::MultiOptimizer::inner);

  using optim::LossScaleOptimizer;
  py::class_<LossScaleOptimizer, Optimizer, std::shared_ptr<LossScaleOptimizer>>(
      m, "LossScaleOptimizer")
      .def(py::init([](std::shared_ptr<Optimizer> inner, double initial_scale,
                       int64_t dynamic_growth_steps, std::string name) {
             return std::make_shared<LossScaleOptimizer>(std::move(inner), initial_scale,
                                                         dynamic_growth_steps, std::move(name));
           }),
           py::arg("inner"), py::arg("initial_scale") = 32768.0,
           py::arg("dynamic_growth_steps") = 2000, py::arg("name") = "")
      .def(
          "apply_unscaled_gradients",
          [](LossScaleOptimizer& self, const std::vector<std::optional<Tensor>>& grads,
             const std::vector<Tensor>& params) {
            const std::vector<Tensor> g = with_undefined(grads);
            py::gil_scoped_release release;
            self.apply_unscaled_gradients(g, params);
          },
          py::arg("grads"), py::arg("params"))
      .def_property_readonly("scale", &LossScaleOptimizer::scale)
      .def_property_readonly("step_counter", &LossScaleOptimizer::step_counter)
      .def_property_readonly("initial_scale", &LossScaleOptimizer::initial_scale)
      .def_property_readonly("dynamic_growth_steps", &LossScaleOptimizer::dynamic_growth_steps)
      .def_property_readonly("dynamic", &LossScaleOptimizer::dynamic)
      .def_property_readonly("inner", &LossScaleOptimizer::inner)
      .def("set_dynamic_state", &LossScaleOptimizer::set_dynamic_state, py::arg("scale"),
           py::arg("step_counter"));
  m.def(
      "all_finite", [](const Tensor& t) { return optim::all_finite(t); }, py::arg("tensor"),
      "True when no element is inf or NaN (the LossScaleOptimizer's check)");
}

}  // namespace gpuaccel::bindings
