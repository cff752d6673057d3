"""``gpuaccel.keras.optimizers``: Keras 3's optimizers (SGD, Adam, AdamW, RMSprop) over the fused
C++ optimizers of ``cpp/optim``.

Each class parses Keras's arguments and holds the C++ optimizer as ``_cpp``; the C++ training
loop steps ``_cpp`` directly, and ``apply_gradients`` does the same from a custom loop::

    opt = keras.optimizers.Adam(learning_rate=1e-3)
    with gpuaccel.GradientTape() as tape:
        loss = ...
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))

Every update is one fused pass per variable (weight decay, clipping, slots and the variable),
on the variable's device. Differences from Keras, all deliberate: ``learning_rate`` reads as a
Python float (Keras returns a variable; ``float(opt.learning_rate)`` works with both) and must
be a number (learning-rate schedules are applied with ``keras.callbacks.LearningRateScheduler``);
``iterations`` reads as an int; EMA, loss-scale factors and gradient accumulation are not there
yet and say so.
"""
import numbers
import re
import warnings

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _to_tensor

_cpp = _C.optim

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "get", "serialize", "deserialize"]

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
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.ndarray, Tensor)):
        if callable(value):
            raise NotImplementedError(
                "gpuaccel optimizers take a float `learning_rate`; learning-rate schedules and "
                "callables are not supported yet. Change the rate during training with "
                "keras.callbacks.LearningRateScheduler, or set optimizer.learning_rate = value. "
                f"Received: learning_rate={value!r}")
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
            raise TypeError("Optimizer is the base class; use SGD, Adam, AdamW or RMSprop")
        for arg, value, default in (("use_ema", use_ema, False),
                                    ("ema_overwrite_frequency", ema_overwrite_frequency, None),
                                    ("loss_scale_factor", loss_scale_factor, None),
                                    ("gradient_accumulation_steps", gradient_accumulation_steps,
                                     None)):
            if value != default and value is not None and value is not False:
                raise NotImplementedError(
                    f"`{arg}` is not supported by gpuaccel optimizers yet. Received: "
                    f"{arg}={value!r}")
        self.ema_momentum = ema_momentum
        self.use_ema = False
        self.ema_overwrite_frequency = None
        self.loss_scale_factor = None
        self.gradient_accumulation_steps = None
        options = dict(weight_decay=_optional_float(weight_decay, "weight_decay"),
                       clipnorm=_optional_float(clipnorm, "clipnorm"),
                       clipvalue=_optional_float(clipvalue, "clipvalue"),
                       global_clipnorm=_optional_float(global_clipnorm, "global_clipnorm"),
                       name=name if name is not None else _auto_name(type(self).__name__))
        self._cpp = self._make_cpp(_learning_rate(learning_rate), options)
        self.built = False

    # ---- state ----
    @property
    def name(self):
        return self._cpp.name

    @property
    def learning_rate(self):
        return self._cpp.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._cpp.learning_rate = _learning_rate(value)

    # tf.keras 2 spelling, still used by older course code.
    lr = learning_rate

    @property
    def iterations(self):
        return self._cpp.iterations

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
        self._cpp.apply_gradients(grads, variables)
        self.built = True

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
        config = {
            "name": self.name,
            "learning_rate": float(np.float32(self.learning_rate)),
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


# Keras's lookup names (case-insensitive, as Keras's deserialize is for built-in optimizers).
_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop}


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config):
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret optimizer identifier: {config}")
    cls = _BY_NAME.get(str(config["class_name"]).lower())
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {config['class_name']}")
    return cls(**config.get("config", {}))


def get(identifier):
    """An optimizer from a name ('sgd', 'adam', 'adamw', 'rmsprop', any case), a config dict or
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
