"""``gpuaccel.keras.optimizers.schedules``: Keras 3's learning-rate schedules.

Why: ``keras.optimizers.Adam(learning_rate=keras.optimizers.schedules.ExponentialDecay(...))``
is how Keras guides decay the rate per step. A schedule is a host-side function of the step:
the optimizer evaluates it before each step with its iteration count (as Keras's
``_get_current_learning_rate``) and hands the float to the C++ optimizer, whose step reads the
rate as a host scalar (cpp/optim/optimizer.h). Each formula is Keras's
(keras/src/optimizers/schedules/learning_rate_schedule.py), computed in float32 as Keras does
for a float ``initial_learning_rate``. A user's ``LearningRateSchedule`` subclass gets the step
as an int64 scalar tensor, as Keras passes its iteration variable.
"""
import math
import numbers

import numpy as np

from .._tensor import Tensor, tensor as _make_tensor
from ._registry import KerasObjectRegistry

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecay", "CosineDecayRestarts",
           "serialize", "deserialize"]

_f32 = np.float32


def _step(step):
    """The step as float32 (a number, a NumPy scalar or a gpuaccel scalar tensor)."""
    if isinstance(step, Tensor):
        step = step.item()
    return _f32(step)


def _result(value):
    return _make_tensor(np.asarray(value, np.float32))


def _positive_steps(arg, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
        raise ValueError(f"Argument `{arg}` must be > 0. Received: {arg}={value}")


class LearningRateSchedule:
    """Keras's base: subclasses define ``__call__(self, step)`` and ``get_config``."""

    def __call__(self, step):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must "
                                  "override `__call__(self, step)`.")

    def get_config(self):
        raise NotImplementedError(f"Learning rate schedule '{self.__class__.__name__}' must "
                                  "override `get_config()` in order to be serializable.")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class _StaircaseDecay(LearningRateSchedule):
    """What ExponentialDecay and InverseTimeDecay share: their arguments and config, and the
    exponent ``step / decay_steps`` (floored with ``staircase``) at which ``decay_rate``
    applies."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase, name):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name
        _positive_steps("decay_steps", decay_steps)

    def _decay_exponent(self, step):
        p = _step(step) / _f32(self.decay_steps)
        return np.floor(p) if self.staircase else p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_StaircaseDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent floored
    with ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="ExponentialDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        p = self._decay_exponent(step)
        return _result(_f32(self.initial_learning_rate) * np.power(_f32(self.decay_rate), p))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to ``boundaries[0]`` (inclusive), ``values[1]`` up to
    ``boundaries[1]``, ..., ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}.")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        step = _step(step)
        for boundary, value in zip(self.boundaries, self.values):
            if step <= boundary:
                return _result(value)
        return _result(self.values[-1])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps`` along
    ``(1 - step / decay_steps) ** power``; with ``cycle`` the horizon grows to the next
    multiple of ``decay_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0,
                 cycle=False, name="PolynomialDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name
        _positive_steps("decay_steps", decay_steps)

    def __call__(self, step):
        step = _step(step)
        decay_steps = _f32(self.decay_steps)
        if self.cycle:
            multiplier = _f32(1.0) if step == 0 else np.ceil(step / decay_steps)
            decay_steps = decay_steps * multiplier
        else:
            step = min(step, decay_steps)
        p = step / decay_steps
        initial, end = _f32(self.initial_learning_rate), _f32(self.end_learning_rate)
        return _result((initial - end) * np.power(_f32(1) - p, _f32(self.power)) + end)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class InverseTimeDecay(_StaircaseDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored with
    ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False,
                 name="InverseTimeDecay"):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        denominator = _f32(1) + _f32(self.decay_rate) * self._decay_exponent(step)
        return _result(_f32(self.initial_learning_rate) / denominator)


def _cosine_decayed(fraction, alpha):
    cosine = _f32(0.5) * (_f32(1) + np.cos(_f32(math.pi) * fraction))
    return (_f32(1) - _f32(alpha)) * cosine + _f32(alpha)


class CosineDecay(LearningRateSchedule):
    """Cosine decay to ``alpha * rate`` over ``decay_steps``, after an optional linear warmup
    from ``initial_learning_rate`` to ``warmup_target`` over ``warmup_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay",
                 warmup_target=None, warmup_steps=0):
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_steps = warmup_steps
        self.warmup_target = warmup_target
        _positive_steps("decay_steps", decay_steps)

    def __call__(self, step):
        step = _step(step)
        initial, decay_steps = _f32(self.initial_learning_rate), _f32(self.decay_steps)
        if self.warmup_target is None:
            fraction = min(step, decay_steps) / decay_steps
            return _result(initial * _cosine_decayed(fraction, self.alpha))
        target, warmup_steps = _f32(self.warmup_target), _f32(self.warmup_steps)
        step = min(step, decay_steps + warmup_steps)
        if step < warmup_steps:
            return _result((target - initial) * (step / warmup_steps) + initial)
        fraction = (step - warmup_steps) / decay_steps
        return _result(target * _cosine_decayed(fraction, self.alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): period ``first_decay_steps``, each next period
    ``t_mul`` times longer and its peak ``m_mul`` times the last."""

    def __init__(self, initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0,
                 alpha=0.0, name="SGDRDecay"):
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name
        _positive_steps("first_decay_steps", first_decay_steps)

    def __call__(self, step):
        fraction = _step(step) / _f32(self.first_decay_steps)
        t_mul = _f32(self._t_mul)
        if t_mul == 1:
            restart = np.floor(fraction)
            fraction = fraction - restart
        else:
            restart = np.floor(np.log(_f32(1) - fraction * (_f32(1) - t_mul)) / np.log(t_mul))
            done = (_f32(1) - np.power(t_mul, restart)) / (_f32(1) - t_mul)
            fraction = (fraction - done) / np.power(t_mul, restart)
        peak = np.power(_f32(self._m_mul), restart)
        cosine = _f32(0.5) * peak * (_f32(1) + np.cos(_f32(math.pi) * fraction))
        alpha = _f32(self.alpha)
        return _result(_f32(self.initial_learning_rate) *
                       ((_f32(1) - alpha) * cosine + alpha))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}


_BY_NAME = {cls.__name__: cls for cls in (
    ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay, CosineDecay,
    CosineDecayRestarts)}


_REGISTRY = KerasObjectRegistry(
    "decay", "keras.optimizers.schedules", LearningRateSchedule, _BY_NAME,
    unknown_hint="known: {names}; pass yours in custom_objects", accepts_names=False)


def serialize(learning_rate_schedule):
    """Keras's dict: module, class_name, config, registered_name."""
    return _REGISTRY.serialize(learning_rate_schedule)


def deserialize(config, custom_objects=None):
    """A schedule from Keras's dict; ``custom_objects`` names the user's schedule classes."""
    return _REGISTRY.deserialize(config, custom_objects)
