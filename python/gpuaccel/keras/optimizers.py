"""``gpuaccel.keras.optimizers``: Keras 3's optimizers (SGD, Adam, AdamW, RMSprop, Adagrad,
Adamax, Nadam, Adadelta, Lion, Ftrl, Lamb, Adafactor, ScheduleFreeAdamW) over the fused C++
optimizers of ``cpp/optim``.

Each class parses Keras's arguments and holds the C++ optimizer as ``_cpp``; the C++ training
loop steps ``_cpp`` directly, and ``apply_gradients`` does the same from a custom loop::

    opt = keras.optimizers.Adam(learning_rate=1e-3)
    with gpuaccel.GradientTape() as tape:
        loss = ...
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))

Every update is one fused pass per variable (weight decay, clipping, slots and the variable),
on the variable's device. ``learning_rate`` may be a number, a
``keras.optimizers.schedules.LearningRateSchedule`` (evaluated at ``iterations`` before each
step, in ``fit`` and in ``apply``) or a callable taking no argument (called before each step),
as in Keras. Differences from Keras, all deliberate: ``learning_rate`` reads as a Python float
(Keras returns a variable or tensor; ``float(opt.learning_rate)`` works with both);
``iterations`` reads as an int; loss-scale factors and gradient accumulation are not there
yet and say so. ``use_ema`` keeps Keras's moving average of the variables, updated in C++ after
each step (``keras.callbacks.SwapEMAWeights`` swaps it in for evaluation).
``LossScaleOptimizer`` wraps any of them with Keras 3's dynamic loss scaling.
"""
import collections.abc
import numbers
import re
import sys
import warnings

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _to_tensor
from . import optimizers_legacy as legacy
from . import optimizers_schedules as schedules

# `from gpuaccel.keras.optimizers.schedules import ExponentialDecay` finds the module (and
# `from ....optimizers.legacy import Adam` Keras 3's legacy names).
sys.modules[__name__ + ".schedules"] = schedules
sys.modules[__name__ + ".legacy"] = legacy

_cpp = _C.optim


class StepCount(int):
    """``optimizer.iterations``: the steps applied, as a Python int that also answers as Keras's
    int64 variable does where course code reads it (``optimizer.iterations.numpy()`` in TF's
    custom training loops, ``.dtype``)."""

    dtype = "int64"

    def numpy(self):
        return np.int64(self)

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Nadam",
           "Adadelta", "Lion", "Ftrl", "Lamb", "Adafactor", "ScheduleFreeAdamW",
           "LossScaleOptimizer", "MultiOptimizer", "OptimizerMap", "get",
           "serialize", "deserialize", "schedules", "legacy"]

# Keras's auto_name: "adam", then "adam_1", "adam_2", ... per process.
_name_counts = {}


def _auto_name(class_name):
    base = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    base = re.sub(r"([a-z])([A-Z])", r"\1_\2", base).lower()  # "AdamW" -> "adam_w"
    count = _name_counts.get(base, 0)
    _name_counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _as_float(value, arg):
    """A hyperparameter as a Python float; Keras's ValueError text for anything else."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, Tensor) and value.numel() == 1:
            return float(value.item())
        if isinstance(value, np.ndarray) and value.size == 1:
            return float(value)
        raise ValueError(f"Argument `{arg}` should be a float. Received: {arg}={value!r}")
    return float(value)


def _optional_float(value, arg):
    return None if value is None else _as_float(value, arg)


def _learning_rate(value):
    """A fixed rate as a float, or a schedule / callable as it is."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, Tensor)):
        if isinstance(value, dict):
            return schedules.deserialize(value)
        if callable(value):
            return value
        raise ValueError(
            "Argument `learning_rate` should be float, or an instance of LearningRateSchedule, "
            "or a callable (that takes in the current iteration value and returns the "
            f"corresponding learning rate value). Received instead: learning_rate={value!r}")
    return _as_float(value, "learning_rate")


def _unwrap_variable(v, index):
    """The gpuaccel Tensor behind a variable (a Tensor, or an object holding one as .value)."""
    if isinstance(v, Tensor):
        return v
    inner = getattr(v, "value", None)
    if isinstance(inner, Tensor):
        return inner
    raise TypeError(f"variable {index} must be a gpuaccel Tensor (a model weight), "
                    f"got {type(v).__name__}")


def _as_gradient(g, var):
    if g is None or isinstance(g, Tensor):
        return g
    if isinstance(g, np.ndarray) or isinstance(g, (list, tuple, numbers.Number)):
        array = np.asarray(g)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        return _to_tensor(array, device=var.device)
    inner = getattr(g, "value", None)
    if isinstance(inner, Tensor):
        return inner
    raise TypeError(f"gradients must be gpuaccel Tensors, NumPy arrays or None, "
                    f"got {type(g).__name__}")


class Optimizer:
    """Keras's base optimizer: the keyword arguments every optimizer takes, ``apply``,
    ``apply_gradients``, ``learning_rate``, ``iterations``, ``variables``, ``get_config``.

    Subclasses define ``_make_cpp(learning_rate, options)`` and ``_own_config()``."""

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.")
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if type(self) is Optimizer:
            raise TypeError("Optimizer is the base class (its update rule runs in C++); use one of "
                            "SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam, Adadelta, Lion, "
                            "Ftrl, Lamb, Adafactor or ScheduleFreeAdamW")
        for arg, value, default in (("loss_scale_factor", loss_scale_factor, None),
                                    ("gradient_accumulation_steps", gradient_accumulation_steps,
                                     None)):
            if value != default and value is not None and value is not False:
                raise NotImplementedError(
                    f"`{arg}` is not supported by gpuaccel optimizers yet. Received: "
                    f"{arg}={value!r}")
        if use_ema and ema_overwrite_frequency and (
                not isinstance(ema_overwrite_frequency, numbers.Integral)
                or ema_overwrite_frequency < 1):
            raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. "
                             f"Received: ema_overwrite_frequency={ema_overwrite_frequency}")
        self.loss_scale_factor = None
        self.gradient_accumulation_steps = None
        options = dict(weight_decay=_optional_float(weight_decay, "weight_decay"),
                       clipnorm=_optional_float(clipnorm, "clipnorm"),
                       clipvalue=_optional_float(clipvalue, "clipvalue"),
                       global_clipnorm=_optional_float(global_clipnorm, "global_clipnorm"),
                       name=name if name is not None else _auto_name(type(self).__name__))
        rate = _learning_rate(learning_rate)
        self._rate_function = None if isinstance(rate, float) else rate
        self._cpp = self._make_cpp(0.0 if self._rate_function else rate, options)
        # Keras's EMA of the variables (checked as Keras does, only when use_ema is on).
        self._cpp.set_moving_average(bool(use_ema), _as_float(ema_momentum, "ema_momentum"),
                                     int(ema_overwrite_frequency) if use_ema and
                                     ema_overwrite_frequency else None)
        self.use_ema = bool(use_ema)
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self._apply_rate_function()
        self.built = False

    # ---- state ----
    @property
    def name(self):
        return self._cpp.name

    @property
    def learning_rate(self):
        """The rate the next step uses (a schedule's value at ``iterations``)."""
        self._apply_rate_function()
        return self._cpp.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        rate = _learning_rate(value)
        if isinstance(rate, float) and isinstance(self._rate_function,
                                                  schedules.LearningRateSchedule):
            raise TypeError("This optimizer was created with a `LearningRateSchedule` object as "
                            "its `learning_rate` constructor argument, hence its learning rate "
                            "is not settable. If you need the learning rate to be settable, you "
                            "should instantiate the optimizer with a float `learning_rate` "
                            "argument.")
        if isinstance(rate, float):
            self._rate_function = None
            self._cpp.learning_rate = rate
        else:
            self._rate_function = rate
            self._apply_rate_function()

    # tf.keras 2 spelling, still used by older course code.
    lr = learning_rate

    def _apply_rate_function(self):
        """Sets the C++ optimizer's rate from the schedule (at ``iterations``, as Keras) or the
        callable; nothing for a fixed rate. Called before every step."""
        function = self._rate_function
        if function is None:
            return
        if isinstance(function, schedules.LearningRateSchedule):
            value = function(_to_tensor(np.int64(self._cpp.iterations)))
        else:
            value = function()
        self._cpp.learning_rate = _as_float(value, "learning_rate")

    def _schedule_hook(self):
        """What the training loop calls before each step: None for a fixed rate."""
        return None if self._rate_function is None else self._apply_rate_function

    @property
    def iterations(self):
        return StepCount(self._cpp.iterations)

    @property
    def weight_decay(self):
        return self._cpp.weight_decay

    @property
    def clipnorm(self):
        return self._cpp.clipnorm

    @property
    def clipvalue(self):
        return self._cpp.clipvalue

    @property
    def global_clipnorm(self):
        return self._cpp.global_clipnorm

    @property
    def variables(self):
        """The optimizer's variables as (name-tagged) tensors: iteration, learning rate, slots."""
        return [t for _, t in self._cpp.variables()]

    def _variable_names(self):
        return [n for n, _ in self._cpp.variables()]

    # ---- updates ----
    def build(self, var_list):
        """Accepted for Keras compatibility: slots are created on first use of each variable."""
        for i, v in enumerate(var_list):
            _unwrap_variable(v, i)
        self.built = True

    def apply_gradients(self, grads_and_vars):
        """Applies (gradient, variable) pairs; a None gradient skips its variable. Returns
        ``iterations`` as Keras does."""
        pairs = list(grads_and_vars)
        if not pairs:
            return self.iterations
        for p in pairs:
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise ValueError("apply_gradients expects (gradient, variable) pairs, e.g. "
                                 f"zip(grads, model.trainable_variables). Received: {p!r}")
        grads, variables = zip(*pairs)
        self.apply(grads, variables)
        return self.iterations

    def apply(self, grads, trainable_variables=None):
        """Updates ``trainable_variables`` in place with ``grads`` (one per variable)."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            raise ValueError(
                "When passing `grads` without `variables`, the optimizer must already be "
                "built on a list of variables; gpuaccel optimizers need the variables: call "
                "optimizer.apply(grads, trainable_variables).")
        variables = [_unwrap_variable(v, i) for i, v in enumerate(trainable_variables)]
        if len(grads) != len(variables):
            raise ValueError(f"apply got {len(grads)} gradients for {len(variables)} variables; "
                             "pass one gradient (or None) per variable")
        grads = [_as_gradient(g, v) for g, v in zip(grads, variables)]
        missing = [i for i, g in enumerate(grads) if g is None]
        if missing and len(missing) < len(grads):
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                          "loss. If using `model.compile()`, did you forget to provide a `loss` "
                          "argument?")
        self._apply_converted(grads, variables)
        self.built = True

    def _apply_converted(self, grads, variables):
        self._apply_rate_function()
        self._cpp.apply_gradients(grads, variables)

    def finalize_variable_values(self, var_list):
        """With ``use_ema``, overwrites each variable with its moving average (what ``fit`` does
        after its last epoch); else nothing."""
        self._cpp.finalize_variable_values(
            [_unwrap_variable(v, i) for i, v in enumerate(var_list)])

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Keeps the variables in ``var_list`` out of weight decay (``var_names`` needs variable
        names, which gpuaccel tensors do not carry)."""
        if var_names:
            raise NotImplementedError("exclude_from_weight_decay(var_names=...) needs named "
                                      "variables; pass var_list=[...] instead")
        if var_list:
            self._cpp.exclude_from_weight_decay(
                [_unwrap_variable(v, i) for i, v in enumerate(var_list)])

    # ---- config ----
    def get_config(self):
        if isinstance(self._rate_function, schedules.LearningRateSchedule):
            learning_rate = schedules.serialize(self._rate_function)
        else:
            learning_rate = float(np.float32(self.learning_rate))
        config = {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
        }
        config.update(self._own_config())
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return (f"<gpuaccel.keras.optimizers.{type(self).__name__} name={self.name!r} "
                f"learning_rate={self.learning_rate:g} iterations={self.iterations}>")


def _options(options, without_weight_decay=False):
    out = dict(options)
    if without_weight_decay:
        out.pop("weight_decay")
    return out


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum, Keras's ``keras.optimizers.SGD``."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or \
                not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self._momentum = float(momentum)
        self._nesterov = bool(nesterov)
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor,
                         gradient_accumulation_steps, name, **kwargs)

    def _make_cpp(self, learning_rate, options):
        return _cpp.SGD(learning_rate, self._momentum, self._nesterov, **_options(options))

    @property
    def momentum(self):
        return self._momentum

    @property
    def nesterov(self):
        return self._nesterov

    def _own_config(self):
        return {"momentum": self._momentum, "nesterov": self._nesterov}


class Adam(Optimizer):
    """Adam (optionally AMSGrad), Keras's ``keras.optimizers.Adam``."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-07,
                 amsgrad=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        self._hyper = (_as_float(beta_1, "beta_1"), _as_float(beta_2, "beta_2"),
                       _as_float(epsilon, "epsilon"), bool(amsgrad))
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor,
                         gradient_accumulation_steps, name, **kwargs)

    def _make_cpp(self, learning_rate, options):
        b1, b2, eps, amsgrad = self._hyper
        return _cpp.Adam(learning_rate, b1, b2, eps, amsgrad, **_options(options))

    beta_1 = property(lambda self: self._hyper[0])
    beta_2 = property(lambda self: self._hyper[1])
    epsilon = property(lambda self: self._hyper[2])
    amsgrad = property(lambda self: self._hyper[3])

    def _own_config(self):
        b1, b2, eps, amsgrad = self._hyper
        return {"beta_1": b1, "beta_2": b2, "epsilon": eps, "amsgrad": amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.004), Keras's ``keras.optimizers.AdamW``."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-07, amsgrad=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay,
                         clipnorm, clipvalue, global_clipnorm, use_ema, ema_momentum,
                         ema_overwrite_frequency, loss_scale_factor, gradient_accumulation_steps,
                         name, **kwargs)

    def _make_cpp(self, learning_rate, options):
        b1, b2, eps, amsgrad = self._hyper
        return _cpp.AdamW(learning_rate, options["weight_decay"], b1, b2, eps, amsgrad,
                          **_options(options, without_weight_decay=True))


class RMSprop(Optimizer):
    """RMSprop (optionally centered, with momentum), Keras's ``keras.optimizers.RMSprop``."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-07,
                 centered=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        self._hyper = (_as_float(rho, "rho"), _as_float(momentum, "momentum"),
                       _as_float(epsilon, "epsilon"), bool(centered))
        super().__init__(learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor,
                         gradient_accumulation_steps, name, **kwargs)

    def _make_cpp(self, learning_rate, options):
        rho, momentum, eps, centered = self._hyper
        return _cpp.RMSprop(learning_rate, rho, momentum, eps, centered, **_options(options))

    rho = property(lambda self: self._hyper[0])
    momentum = property(lambda self: self._hyper[1])
    epsilon = property(lambda self: self._hyper[2])
    centered = property(lambda self: self._hyper[3])

    def _own_config(self):
        rho, momentum, eps, centered = self._hyper
        return {"rho": rho, "momentum": momentum, "epsilon": eps, "centered": centered}


class _KerasRuleOptimizer(Optimizer):
    """An optimizer whose own hyperparameters are floats named in ``_HYPER`` (Keras's argument
    names, in Keras's get_config order): they become read-only attributes, keyword arguments of
    the C++ class of the same name, and get_config entries."""

    _HYPER = ()

    def __init__(self, learning_rate, hyper, **kwargs):
        self._hyper = {name: _as_float(hyper[name], name) for name in self._HYPER}
        super().__init__(learning_rate, **kwargs)

    def _make_cpp(self, learning_rate, options):
        return getattr(_cpp, type(self).__name__)(learning_rate, **self._hyper,
                                                  **_options(options))

    def __getattr__(self, name):
        hyper = self.__dict__.get("_hyper", {})
        if name in hyper:
            return hyper[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _own_config(self):
        return dict(self._hyper)


class Adagrad(_KerasRuleOptimizer):
    """Per-element rates that shrink with the sum of squared gradients, Keras's
    ``keras.optimizers.Adagrad`` (the accumulator starts at ``initial_accumulator_value``)."""

    _HYPER = ("initial_accumulator_value", "epsilon")

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-07,
                 **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Adamax(_KerasRuleOptimizer):
    """Adam with an infinity-norm second moment, Keras's ``keras.optimizers.Adamax``."""

    _HYPER = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-07, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Nadam(_KerasRuleOptimizer):
    """Adam with Nesterov momentum, Keras's ``keras.optimizers.Nadam``."""

    _HYPER = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-07, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Adadelta(_KerasRuleOptimizer):
    """Steps scaled by running RMS values of updates and gradients, Keras's
    ``keras.optimizers.Adadelta``."""

    _HYPER = ("rho", "epsilon")

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-07, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Lion(_KerasRuleOptimizer):
    """Sign of interpolated momentum, Keras's ``keras.optimizers.Lion``."""

    _HYPER = ("beta_1", "beta_2")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Ftrl(_KerasRuleOptimizer):
    """Follow The Regularized Leader, Keras's ``keras.optimizers.Ftrl``."""

    _HYPER = ("learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
              "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta")

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Lamb(_KerasRuleOptimizer):
    """Adam's direction scaled per variable by the trust ratio ``||w|| / ||direction||``,
    Keras's ``keras.optimizers.Lamb`` (a two-pass C++ step: the norms are reduced on the
    variable's device between the moment update and the move)."""

    _HYPER = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-07, **kwargs):
        super().__init__(learning_rate, locals(), **kwargs)


class Adafactor(_KerasRuleOptimizer):
    """Factored second moments (row and column means for rank >= 2 variables) and steps
    relative to the variable's RMS, Keras's ``keras.optimizers.Adafactor``. Its slots per
    variable, as Keras's: ``r`` and ``c`` (scalar placeholders for rank < 2) and ``velocity``.
    Under a ``LossScaleOptimizer`` whose scale lives on a GPU it raises UnimplementedError: its
    factored moments cannot skip a step on the device."""

    _HYPER = ("beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold")

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step=True, **kwargs):
        self.relative_step = relative_step
        super().__init__(learning_rate, locals(), **kwargs)

    def _make_cpp(self, learning_rate, options):
        return _cpp.Adafactor(learning_rate, **self._hyper,
                              relative_step=bool(self.relative_step), **_options(options))

    def _own_config(self):
        return {**self._hyper, "relative_step": self.relative_step}


class ScheduleFreeAdamW(_KerasRuleOptimizer):
    """Schedule-free AdamW (an Adam-stepped momentum sequence, the variable kept at an
    interpolation with its running average; linear warmup over ``warmup_steps``), Keras's
    ``keras.optimizers.ScheduleFreeAdamW``. The momentum slot starts at the variable's value.
    As in Keras, nothing changes at evaluation time. The update matches Keras 3.15 on its
    TensorFlow backend, whose ``momentum_old`` reads the momentum after its update."""

    _HYPER = ("beta_1", "beta_2", "epsilon")

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 warmup_steps=0, **kwargs):
        self._warmup = _as_float(warmup_steps, "warmup_steps")  # Keras casts it to float32
        self.warmup_steps = warmup_steps
        super().__init__(learning_rate, locals(), **kwargs)

    def _make_cpp(self, learning_rate, options):
        return _cpp.ScheduleFreeAdamW(learning_rate, **self._hyper,
                                      warmup_steps=self._warmup, **_options(options))

    def _own_config(self):
        return {**self._hyper, "warmup_steps": self.warmup_steps}


class LossScaleOptimizer(Optimizer):
    """Dynamic loss scaling around another optimizer, Keras 3's
    ``keras.optimizers.LossScaleOptimizer`` (also ``keras.mixed_precision.LossScaleOptimizer``).

    float16 gradients of small losses underflow to zero. ``fit`` therefore backpropagates from
    ``loss * dynamic_scale`` and this optimizer unscales the gradients inside the inner
    optimizer's fused update. A step whose gradients hold an inf or NaN is skipped (its
    ``iterations`` do not advance), and the scale is halved. After
    ``dynamic_growth_steps`` finite steps in a row, the scale is doubled. ``compile`` wraps the
    optimizer in one under the ``mixed_float16`` policy. On a GPU the check and the scale
    live on the device, so no step waits to read them (reading ``dynamic_scale`` or
    ``iterations`` does); the inner optimizer's own ``iterations`` then count skipped steps too.

    Custom loops, Keras 3 style: ``scaled = opt.scale_loss(loss)``, take the gradients of
    ``scaled``, then ``opt.apply_gradients(zip(grads, vars))`` with those SCALED gradients.
    TF2 style: ``opt.get_scaled_loss(loss)``, then
    ``grads = opt.get_unscaled_gradients(grads)``, then ``opt.apply_gradients(zip(grads,
    vars))``. The tensors ``get_unscaled_gradients`` returned are recognized and not unscaled
    a second time. Gradients computed from them (clipped, say) count as scaled ones, so clip
    before unscaling or use the inner optimizer's ``clipnorm``.

    ``dynamic_scale`` reads as a Python float and ``step_counter`` as an int. In Keras both are
    variables; ``float(...)`` and ``int(...)`` work with either.
    """

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000,
                 name=None, **kwargs):
        if not kwargs.pop("dynamic", True):
            raise ValueError(
                "LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                "`loss_scale_factor` directly on the `inner_optimizer`.")
        base_defaults = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None,
                         "clipvalue": None, "use_ema": False, "ema_momentum": 0.99,
                         "ema_overwrite_frequency": None, "loss_scale_factor": None,
                         "gradient_accumulation_steps": None}
        for arg, default in base_defaults.items():
            if arg not in kwargs:
                continue
            value = kwargs.pop(arg)
            if (default is None and value is not None) or value != default:
                raise ValueError(f"LossScaleOptimizer does not support `{arg}`. Instead, set "
                                 f"`{arg}` on the `inner_optimizer`.")
        if kwargs:
            raise ValueError("LossScaleOptimizer does not support arguments: "
                             f"`{'`, `'.join(kwargs.keys())}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise ValueError("`inner_optimizer` must be a gpuaccel.keras.optimizers.Optimizer "
                             f"instance. Received: inner_optimizer={inner_optimizer!r}")
        if isinstance(dynamic_growth_steps, bool) or \
                not isinstance(dynamic_growth_steps, numbers.Integral):
            raise ValueError("`dynamic_growth_steps` must be an integer >= 1. Received: "
                             f"dynamic_growth_steps={dynamic_growth_steps!r}")
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        # Keras: the inner optimizer must not scale the loss a second time.
        self.inner_optimizer.loss_scale_factor = None
        self.ema_momentum = 0.99
        self.use_ema = False
        self.ema_overwrite_frequency = None
        self.loss_scale_factor = None
        self.gradient_accumulation_steps = None
        self._cpp = _cpp.LossScaleOptimizer(
            inner_optimizer._cpp, _as_float(initial_scale, "initial_scale"),
            int(dynamic_growth_steps),
            name if name is not None else _auto_name("LossScaleOptimizer"))
        self._unscaled = []  # the tensors get_unscaled_gradients returned last
        self.built = False

    # ---- state: the scale is ours, the rate and the iterations the inner optimizer's ----
    @property
    def dynamic_scale(self):
        return self._cpp.scale

    # TF2's name of the current scale.
    loss_scale = dynamic_scale

    @property
    def step_counter(self):
        return self._cpp.step_counter

    # TF2's name of the finite-step counter.
    dynamic_counter = step_counter

    @property
    def dynamic(self):
        return True

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    lr = learning_rate

    def _schedule_hook(self):
        return self.inner_optimizer._schedule_hook()

    @property
    def iterations(self):
        # Keras's count: the steps applied. On a GPU the skip is decided on the device, and the
        # inner optimizer's own count is every step taken; this one leaves the skipped out.
        return StepCount(self._cpp.iterations)

    def build(self, var_list):
        self.inner_optimizer.build(var_list)
        super().build(var_list)

    # ---- scaling ----
    def scale_loss(self, loss):
        """``loss * dynamic_scale`` (Keras 3)."""
        return loss * self.dynamic_scale

    def get_scaled_loss(self, loss):
        """``loss * loss_scale`` (TF2); ``loss`` may be a callable returning the loss."""
        if callable(loss) and not isinstance(loss, Tensor):
            return lambda: loss() * self.dynamic_scale
        return loss * self.dynamic_scale

    def get_unscaled_gradients(self, grads):
        """Each gradient divided by the current scale, in float32 (TF2); None stays None.
        ``apply_gradients`` does not unscale these tensors again."""
        inverse = 1.0 / self.dynamic_scale
        out = []
        for g in grads:
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                g = _to_tensor(np.asarray(g, dtype=np.float32))
            elif g.dtype.name != "float32":
                g = g.float()
            out.append(g * inverse)
        self._unscaled = [g for g in out if g is not None]
        return out

    def _apply_converted(self, grads, variables):
        self.inner_optimizer._apply_rate_function()
        marked = [any(g is u for u in self._unscaled) for g in grads if g is not None]
        self._unscaled = []
        if marked and all(marked):
            self._cpp.apply_unscaled_gradients(grads, variables)
        elif any(marked):
            raise ValueError("apply_gradients got some gradients from get_unscaled_gradients "
                             "and some not; pass all of them unscaled (TF2 style) or all "
                             "scaled (Keras 3 style)")
        else:
            self._cpp.apply_gradients(grads, variables)

    # ---- config ----
    def get_config(self):
        return {"name": self.name, "inner_optimizer": serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale,
                "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        inner = deserialize(config.pop("inner_optimizer"))
        return cls(inner, **config)

    def __repr__(self):
        return (f"<gpuaccel.keras.optimizers.LossScaleOptimizer name={self.name!r} "
                f"inner={self.inner_optimizer!r} dynamic_scale={self.dynamic_scale:g} "
                f"step_counter={self.step_counter}>")


class OptimizerMap(collections.abc.MutableMapping):
    """Keras's ``OptimizerMap(default_optimizer, optimizer_map=None)``: variable paths (exact, or
    regular expressions matched with ``re.fullmatch``) to optimizers, the default for the rest.
    Calling it with a variable looks up ``variable.path``."""

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError("default_optimizer must be a Keras Optimizer instance. "
                            f"Received: {default_optimizer}")
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"optimizer_map must be a dictionary. Received: {optimizer_map}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = optimizer_map or dict()

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        return self._optimizer_map[matching[0]] if matching else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"'{key}' already exists in the OptimizerMap with value "
                             f"{self._optimizer_map[key]}. Please make sure to not use "
                             "duplicated keys.")
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError("optimizer must be a Keras Optimizer instance. "
                             f"Received: {optimizer}")
        if isinstance(optimizer, LossScaleOptimizer):
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[variable.path]


class MultiOptimizer(Optimizer):
    """Keras's ``MultiOptimizer(optimizer_map, loss_scale_factor=None, name=None)``: each
    variable is updated by the optimizer an ``OptimizerMap`` (by the variable's path) or a
    callable ``selector(variable) -> optimizer`` gives it, decided when the optimizer is built
    (``fit``/``train_on_batch`` build it on the model's trainable weights). The C++ step splits
    the gradients and runs each inner optimizer's fused step on its share; the inner optimizers
    keep their own rates, slots and iterations (``optimizers``). ``learning_rate`` raises, as
    Keras's does. A captured CUDA-graph step is not used with it."""

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        if loss_scale_factor is not None:
            raise NotImplementedError("`loss_scale_factor` is not supported by gpuaccel "
                                      f"optimizers yet. Received: loss_scale_factor="
                                      f"{loss_scale_factor!r}")
        self._optimizer_map = optimizer_map
        self._inner_optimizers = []
        for opt in (list(optimizer_map.values()) if hasattr(optimizer_map, "values") else []) + \
                [getattr(optimizer_map, "default_optimizer", None)]:
            if opt is not None and opt not in self._inner_optimizers:
                self._inner_optimizers.append(opt)
        self._name = name if name is not None else _auto_name("MultiOptimizer")
        self.use_ema, self.ema_momentum, self.ema_overwrite_frequency = False, 0.99, None
        self.loss_scale_factor = None
        self.gradient_accumulation_steps = None
        self._cpp = None
        self.built = False

    @property
    def name(self):
        return self._name

    @property
    def optimizers(self):
        return self._inner_optimizers

    @property
    def learning_rate(self):
        raise AttributeError("Learning rate cannot be accessed on a MultiOptimizer. Access the "
                             "learning rate on the individual sub-optimizers instead.")

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError("Learning rate cannot be set on a MultiOptimizer. Set the learning "
                             "rate on the individual sub-optimizers instead.")

    lr = learning_rate

    @property
    def iterations(self):
        return 0 if self._cpp is None else self._cpp.iterations

    @property
    def variables(self):
        return [] if self._cpp is None else [t for _, t in self._cpp.variables()]

    def _variable_names(self):
        return [] if self._cpp is None else [n for n, _ in self._cpp.variables()]

    def build(self, var_list):
        if self.built:
            return
        variables = [_unwrap_variable(v, i) for i, v in enumerate(var_list)]
        owners = []
        for original, var in zip(var_list, variables):
            opt = self._optimizer_map(original)
            if not isinstance(opt, Optimizer):
                raise ValueError(f"Optimizer for variable {original} is not an Optimizer "
                                 "instance.")
            if isinstance(opt, LossScaleOptimizer):
                raise ValueError("LossScaleOptimizer cannot be used inside an MultiOptimizer.")
            if isinstance(opt, MultiOptimizer):
                raise ValueError("MultiOptimizer cannot be used inside an MultiOptimizer.")
            if opt not in self._inner_optimizers:
                self._inner_optimizers.append(opt)
            owners.append(self._inner_optimizers.index(opt))
        self._cpp = _cpp.MultiOptimizer([o._cpp for o in self._inner_optimizers], self._name)
        for k in range(len(self._inner_optimizers)):
            self._cpp.assign([v for v, o in zip(variables, owners) if o == k], k)
        self.built = True

    def _schedule_hook(self):
        hooks = [h for h in (o._schedule_hook() for o in self._inner_optimizers) if h]
        if not hooks:
            return None
        return lambda: [h() for h in hooks] and None

    def _apply_rate_function(self):
        for o in self._inner_optimizers:
            o._apply_rate_function()

    def apply(self, grads, trainable_variables=None):
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            raise ValueError("When passing `grads` without `variables`, the optimizer must "
                             "already be built on a list of variables; gpuaccel optimizers need "
                             "the variables: call optimizer.apply(grads, trainable_variables).")
        self.build(list(trainable_variables))
        super().apply(grads, trainable_variables)

    def _apply_converted(self, grads, variables):
        self._apply_rate_function()
        self._cpp.apply_gradients(grads, variables)

    def finalize_variable_values(self, var_list):
        if self._cpp is not None:
            super().finalize_variable_values(var_list)

    def get_config(self):
        raise NotImplementedError("MultiOptimizer.get_config: serializing the optimizer map is "
                                  "not supported yet")

    def __repr__(self):
        return (f"<gpuaccel.keras.optimizers.MultiOptimizer name={self.name!r} "
                f"optimizers={len(self._inner_optimizers)}>")


# Keras's lookup names (case-insensitive, as Keras's deserialize is for built-in optimizers).
_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adamax": Adamax, "nadam": Nadam, "adadelta": Adadelta, "lion": Lion, "ftrl": Ftrl,
            "lamb": Lamb, "adafactor": Adafactor, "schedulefreeadamw": ScheduleFreeAdamW}


def serialize(optimizer):
    """Keras's dict: module, class_name, config (a schedule nested as its own dict),
    registered_name."""
    return {"module": "keras.optimizers", "class_name": type(optimizer).__name__,
            "config": optimizer.get_config(), "registered_name": None}


def deserialize(config):
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    if config["class_name"] == "LossScaleOptimizer":
        return LossScaleOptimizer.from_config(config.get("config", {}))
    cls = _BY_NAME.get(str(config["class_name"]).lower())
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {config['class_name']}")
    return cls(**config.get("config", {}))


def get(identifier):
    """An optimizer from a name ('sgd', 'adam', 'adagrad', 'ftrl', ... any case), a config dict or
    an Optimizer instance (returned unchanged); None gives None, as Keras."""
    if identifier is None:
        return None
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is not None:
            return cls()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


# Keras 3 optimizers gpuaccel does not have, each with what to use instead.
_NOT_HERE = {
    "Muon": "AdamW (Muon orthogonalizes each matrix update with Newton-Schulz matrix products)",
}


def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "keras.optimizers", _NOT_HERE)(name)
