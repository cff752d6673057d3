"""Keras's activation layers: ``Activation``, ``Softmax`` and ``ReLU`` over the C++ activation
layer, and the ones that have no C++ layer (LeakyReLU, ELU, PReLU, ReLU with max_value /
negative_slope / threshold, Softmax over an axis other than the last), written in Python from
gpuaccel's element-wise ops and traced once per input signature into the C++ step
(_python_layer.py).

The gradients follow TensorFlow's at the kinks: a leaky slope takes the negative side's slope
at exactly 0 (TF's LeakyReluGrad uses x > 0), so the slope is a factor chosen by x > 0 rather
than max(x, slope * x), which would also be wrong for slopes above 1.
"""
import numbers
import warnings

from .. import _C
from ._layer_base import Layer, _activation, _cpp_layers, _last_axis_only, _reject, _unique_name
from . import _python_layer


def _scalar(value, like):
    return _C.scalar_like(float(value), like)


def _positive_mask(x, threshold=0.0):
    """1.0 where x > threshold, else 0.0, in x's dtype (no gradient flows through it)."""
    return _C.cast(_C.binary("greater", x, _scalar(threshold, x)), x._dtype_name)


def _leaky(x, slope):
    """x where x > 0, slope * x elsewhere."""
    factor = _C.binary("add", _scalar(slope, x),
                       _C.binary("mul", _positive_mask(x), _scalar(1.0 - slope, x)))
    return _C.binary("mul", x, factor)


def _real_number(value, arg, layer):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{layer}: `{arg}` must be a float, received {arg}={value!r}")
    return float(value)


class Activation(Layer):
    """``keras.layers.Activation(activation)``: any name of ``keras.activations``. The ones the
    C++ layers have run there; the others are a Python layer (traced into the C++ step) calling
    the ``keras.activations`` function."""

    def __init__(self, activation, **kwargs):
        self.activation = _activation(activation)
        super().__init__(**kwargs)

    def _make_cpp(self):
        if self.activation in _cpp_layers.activation_names():
            return _cpp_layers.Activation(self.name, self.activation)
        return _python_layer.make_cpp_layer(self)

    def call(self, inputs):
        from . import activations
        return activations.get(self.activation)(inputs)

    def _layer_config(self):
        return {"activation": self.activation}


class Softmax(Activation):
    """``keras.layers.Softmax(axis=-1)``: softmax over the last axis (computed in float32),
    the C++ activation layer. Over another axis it is an AxisSoftmax, a Python-traced layer
    (below)."""

    def __new__(cls, axis=-1, **kwargs):
        if cls is Softmax and _last_axis_only("Softmax", axis) != -1:
            cls = AxisSoftmax
        return super().__new__(cls)

    def __init__(self, axis=-1, **kwargs):
        _last_axis_only("Softmax", axis)
        self.axis = -1
        super().__init__("softmax", **kwargs)

    def _call_inputs(self, inputs, mask=None, **kwargs):
        # Keras's Softmax applies a mask (masked entries get probability 0); ignoring it, as
        # layers without masking may, would give other probabilities silently.
        if mask is not None:
            raise NotImplementedError("Softmax: the mask argument is not supported yet; add a "
                                      "large negative number to the masked logits instead")
        return super()._call_inputs(inputs, **kwargs)

    def _layer_config(self):
        return {"axis": self.axis}


class ReLU(Activation):
    """``keras.layers.ReLU()``: max(x, 0), the C++ activation layer. With ``max_value``,
    ``negative_slope`` or ``threshold`` other than their defaults it is a ClippedReLU, a
    Python-traced layer (below)."""

    def __new__(cls, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        if cls is ReLU and (max_value is not None or negative_slope != 0.0 or threshold != 0.0):
            cls = ClippedReLU
        return super().__new__(cls)

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__("relu", **kwargs)

    def _layer_config(self):
        return {"max_value": None, "negative_slope": 0.0, "threshold": 0.0}


class LeakyReLU(Layer):
    """``keras.layers.LeakyReLU(negative_slope=0.3)``: x for x > 0, negative_slope * x
    otherwise (the Keras 2 name ``alpha`` is accepted with Keras's warning)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("Argument `alpha` is deprecated. Use `negative_slope` instead.",
                          stacklevel=2)
        if negative_slope is None or isinstance(negative_slope, bool) or not isinstance(
                negative_slope, numbers.Real) or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or "
                             "negative value. Expected a float. Received: "
                             f"negative_slope={negative_slope}")
        self.negative_slope = float(negative_slope)
        super().__init__(**kwargs)

    def call(self, inputs):
        return _leaky(inputs, self.negative_slope)

    def _layer_config(self):
        return {"negative_slope": self.negative_slope}


class ELU(Layer):
    """``keras.layers.ELU(alpha=1.0)``: x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        self.alpha = _real_number(alpha, "alpha", "ELU")
        super().__init__(**kwargs)

    def call(self, inputs):
        from .. import math as _math
        negative = _C.binary("minimum", inputs, _scalar(0.0, inputs))
        exp_part = _math.expm1(negative)
        if self.alpha != 1.0:
            exp_part = _C.binary("mul", exp_part, _scalar(self.alpha, exp_part))
        return _C.binary("add", _C.unary("relu", inputs), exp_part)

    def _layer_config(self):
        return {"alpha": self.alpha}


class PReLU(Layer):
    """``keras.layers.PReLU(alpha_initializer='zeros', shared_axes=None)``: x for x > 0,
    alpha * x otherwise, with a trainable ``alpha`` per input position (shared over
    ``shared_axes``, counted from 1 as in Keras)."""

    def __init__(self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None,
                 shared_axes=None, **kwargs):
        _reject("PReLU", alpha_regularizer=alpha_regularizer, alpha_constraint=alpha_constraint)
        self.alpha_initializer = alpha_initializer
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, numbers.Integral) and not isinstance(shared_axes, bool):
            self.shared_axes = [int(shared_axes)]
        else:
            self.shared_axes = [int(a) for a in shared_axes]
        super().__init__(**kwargs)

    def build(self, input_shape):
        param_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if not 1 <= axis <= len(param_shape):
                raise ValueError(f"PReLU: shared_axes entries count the non-batch axes from 1 "
                                 f"(1..{len(param_shape)}), received shared_axes="
                                 f"{self.shared_axes}")
            param_shape[axis - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError(f"PReLU needs every non-batch dimension known (or shared), received "
                             f"input shape {tuple(input_shape)}")
        self.alpha = self.add_weight(shape=param_shape, initializer=self.alpha_initializer,
                                     name="alpha")

    def call(self, inputs):
        positive = _C.unary("relu", inputs)
        negative = _C.unary("relu", _C.unary("neg", inputs))
        return _C.binary("sub", positive, _C.binary("mul", self.alpha, negative))

    def _layer_config(self):
        return {"alpha_initializer": self.alpha_initializer, "alpha_regularizer": None,
                "alpha_constraint": None, "shared_axes": self.shared_axes}


class _PythonStandIn:
    """Base of the Python layers that stand in for a C++ activation layer when an argument
    needs more than the C++ layer does (ClippedReLU for ReLU, AxisSoftmax for Softmax): named
    as Keras names its class (``_name_prefix``), and traced into the C++ step from ``call``
    rather than built as the C++ layer."""
    _name_prefix = None

    def _init_layer(self, kwargs):
        if kwargs.get("name") is None:
            kwargs["name"] = _unique_name(self._name_prefix)
        Layer.__init__(self, **kwargs)

    def _make_cpp(self):
        return _python_layer.make_cpp_layer(self)


class ClippedReLU(_PythonStandIn, ReLU):
    """What ``keras.layers.ReLU(max_value, negative_slope, threshold)`` builds when an argument
    differs from its default (the default ReLU stays the C++ activation layer):
    max_value where x >= max_value, x where threshold < x < max_value, and
    negative_slope * (x - threshold) below the threshold."""
    _keras_class_name = "ReLU"  # in saved configs
    _name_prefix = "re_lu"

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        self.max_value = None if max_value is None else _real_number(max_value, "max_value",
                                                                     "ReLU")
        self.negative_slope = _real_number(negative_slope, "negative_slope", "ReLU")
        self.threshold = _real_number(threshold, "threshold", "ReLU")
        if self.max_value is not None and self.max_value < 0.0:
            raise ValueError("max_value of a ReLU layer cannot be a negative value. Received: "
                             f"max_value={max_value}")
        if self.negative_slope < 0.0:
            raise ValueError("negative_slope of a ReLU layer cannot be None or a negative value. "
                             f"Received: negative_slope={negative_slope}")
        if self.threshold < 0.0:
            raise ValueError("threshold of a ReLU layer cannot be None or a negative value. "
                             f"Received: threshold={threshold}")
        self._init_layer(kwargs)

    def call(self, inputs):
        # Keras's relu(x, negative_slope, max_value, threshold), op for op.
        x = inputs
        if self.threshold != 0.0:
            kept = _C.binary("mul", x, _positive_mask(x, self.threshold))
        else:
            kept = _C.unary("relu", x)
        if self.max_value is not None:
            kept = _C.binary("minimum", _C.binary("maximum", kept, _scalar(0.0, x)),
                             _scalar(self.max_value, x))
        if self.negative_slope != 0.0:
            below = _C.unary("relu", _C.binary("sub", _scalar(self.threshold, x), x))
            kept = _C.binary("sub", kept, _C.binary("mul", below, _scalar(self.negative_slope,
                                                                         x)))
        return kept

    def _layer_config(self):
        return {"max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}


class AxisSoftmax(_PythonStandIn, Softmax):
    """What ``keras.layers.Softmax(axis)`` builds for an axis other than -1 (the default
    Softmax stays the C++ activation layer): the softmax op over that axis."""
    _keras_class_name = "Softmax"  # in saved configs
    _name_prefix = "softmax"

    def __init__(self, axis=-1, **kwargs):
        self.axis = _last_axis_only("Softmax", axis)
        self._init_layer(kwargs)

    def call(self, inputs):
        if not -inputs.ndim <= self.axis < inputs.ndim:
            raise ValueError(f"Softmax: axis {self.axis} is out of range for inputs of shape "
                             f"{tuple(inputs.shape)}")
        return _C.softmax(inputs, self.axis, False)
