"""``gpuaccel.keras.activations``: Keras 3's activation functions, ``get``, ``serialize`` and
``deserialize``.

Why a module of its own: Keras code calls ``keras.activations.gelu(x)`` in custom layers and
passes these functions (or their names) as ``activation=``. Each function here is Keras's
formula (keras/src/backend/tensorflow/nn.py) composed of gpuaccel's differentiable element-wise
ops, so gradients come from autograd and a Python layer that calls one is traced into the C++
step like any other op. ``tf.where`` branches are written as ``mask * a + (1 - mask) * b`` with
both branches kept finite, which gives the same values and gradients away from the kinks.
"""
import math
import numbers

from .. import _C
from .._array_ops import split as _split
from .._convert import convert_to_tensor

__all__ = ["celu", "deserialize", "elu", "exponential", "gelu", "get", "glu", "hard_shrink",
           "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "leaky_relu", "linear",
           "log_sigmoid", "log_softmax", "mish", "relu", "relu6", "selu", "serialize", "sigmoid",
           "silu", "soft_shrink", "softmax", "softplus", "softsign", "sparse_plus",
           "sparse_sigmoid", "squareplus", "swish", "tanh", "tanh_shrink", "threshold"]

# SELU's constants (Klambauer et al.), as Keras and cpp/nn/activations.cc use them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _t(x):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        x = _C.cast(x, "float32")
    return x


def _c(value, like):
    return _C.scalar_like(float(value), like)


def _add(a, b):
    return _C.binary("add", a, b)


def _sub(a, b):
    return _C.binary("sub", a, b)


def _mul(a, b):
    return _C.binary("mul", a, b)


def _relu(x):
    return _C.unary("relu", x)


def _mask(comparison, a, b):
    """1 where ``a <comparison> b`` holds, else 0, in a's dtype (no gradient)."""
    return _C.cast(_C.binary(comparison, _C.detach(a), b), a._dtype_name)


def _select(mask, a, b):
    """tf.where(mask, a, b) for a 0/1 mask: both branches must be finite."""
    return _add(_mul(mask, a), _mul(_sub(_c(1.0, mask), mask), b))


def _clip(x, low, high):
    return _C.binary("minimum", _C.binary("maximum", x, _c(low, x)), _c(high, x))


def _expm1_of_negative_part(x):
    """exp(min(x, 0)) - 1: never overflows."""
    return _sub(_C.unary("exp", _C.binary("minimum", x, _c(0.0, x))), _c(1.0, x))


def _number(value, arg):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{arg}` must be a number. Received: {arg}={value!r}")
    return float(value)


def _axis(axis):
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise NotImplementedError(f"gpuaccel's activations take one integer axis; received "
                                  f"axis={axis!r}")
    return int(axis)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with Keras's ``negative_slope`` below ``threshold`` and ``max_value`` cap."""
    x = _t(x)
    negative_slope = _number(negative_slope, "negative_slope")
    threshold = _number(threshold, "threshold")
    if max_value is not None:
        max_value = _number(max_value, "max_value")
    if negative_slope != 0.0 and max_value is None and threshold == 0.0:
        return leaky_relu(x, negative_slope)
    negative_part = None
    if negative_slope != 0.0:
        negative_part = _relu(_add(_C.unary("neg", x), _c(threshold, x)))
    if threshold != 0.0:
        out = _mul(_mask("greater", x, _c(threshold, x)), x)
    else:
        out = _relu(x)
    if max_value is not None:
        out = _clip(out, 0.0, max_value)
    if negative_part is not None:
        out = _sub(out, _mul(_c(negative_slope, x), negative_part))
    return out


def leaky_relu(x, negative_slope=0.2):
    """x where x > 0, else negative_slope * x (tf.nn.leaky_relu)."""
    x = _t(x)
    slope = _number(negative_slope, "negative_slope")
    return _select(_mask("greater", x, _c(0.0, x)), x, _mul(x, _c(slope, x)))


def relu6(x):
    return _clip(_t(x), 0.0, 6.0)


def softmax(x, axis=-1):
    return _C.softmax(_t(x), _axis(axis), False)


def log_softmax(x, axis=-1):
    return _C.softmax(_t(x), _axis(axis), True)


def elu(x, alpha=1.0):
    x = _t(x)
    return _add(_relu(x), _mul(_c(_number(alpha, "alpha"), x), _expm1_of_negative_part(x)))


def selu(x):
    x = _t(x)
    return _mul(_c(_SELU_SCALE, x), elu(x, _SELU_ALPHA))


def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _t(x)
    alpha = _number(alpha, "alpha")
    return _add(_relu(x), _mul(_c(alpha, x), _expm1_of_negative_part(_mul(x, _c(1.0 / alpha, x)))))


def softplus(x):
    """relu(x) + log(1 + exp(-|x|)): no overflow for large |x|."""
    x = _t(x)
    tail = _C.unary("exp", _C.unary("neg", _C.unary("abs", x)))
    return _add(_relu(x), _C.unary("log", _add(_c(1.0, x), tail)))


def softsign(x):
    x = _t(x)
    return _C.binary("div", x, _add(_c(1.0, x), _C.unary("abs", x)))


def soft_shrink(x, threshold=0.5):
    """x - t above t, x + t below -t, 0 between: relu(x - t) - relu(-x - t)."""
    x = _t(x)
    t = _c(_number(threshold, "threshold"), x)
    return _sub(_relu(_sub(x, t)), _relu(_sub(_C.unary("neg", x), t)))


def hard_shrink(x, threshold=0.5):
    """x where |x| > threshold, else 0."""
    x = _t(x)
    return _mul(_mask("greater", _C.unary("abs", x), _c(_number(threshold, "threshold"), x)), x)


def sparse_plus(x):
    """0 for x <= -1, (x + 1)^2 / 4 for -1 < x < 1, x for x >= 1."""
    x = _t(x)
    low = _mask("greater", x, _c(-1.0, x))        # x > -1
    high = _mask("less", x, _c(1.0, x))           # x < 1
    middle = _mul(_C.unary("square", _add(x, _c(1.0, x))), _c(0.25, x))
    return _mul(low, _select(high, middle, x))


def sparse_sigmoid(x):
    """0 for x <= -1, (x + 1) / 2 between, 1 for x >= 1."""
    x = _t(x)
    return _clip(_mul(_add(x, _c(1.0, x)), _c(0.5, x)), 0.0, 1.0)


def silu(x):
    x = _t(x)
    return _mul(x, _C.unary("sigmoid", x))


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2."""
    x = _t(x)
    root = _C.unary("sqrt", _add(_C.unary("square", x), _c(_number(b, "b"), x)))
    return _mul(_add(x, root), _c(0.5, x))


def gelu(x, approximate=False):
    """The erf form, or with ``approximate=True`` the tanh form
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    x = _t(x)
    if not approximate:
        return _C.unary("gelu", x)
    cube = _mul(_C.unary("square", x), x)
    inner = _mul(_c(math.sqrt(2.0 / math.pi), x), _add(x, _mul(_c(0.044715, x), cube)))
    return _mul(_mul(_c(0.5, x), x), _add(_c(1.0, x), _C.unary("tanh", inner)))


def glu(x, axis=-1):
    """a * sigmoid(b), a and b the two halves of ``x`` along ``axis``."""
    x = _t(x)
    axis = _axis(axis)
    if x.shape[axis] % 2 != 0:
        raise ValueError("axis size must be divisible by 2. "
                         f"Received: x.shape={tuple(x.shape)} with axis={axis}")
    a, b = _split(x, 2, axis=axis)
    return _mul(a, _C.unary("sigmoid", b))


def tanh(x):
    return _C.unary("tanh", _t(x))


def tanh_shrink(x):
    x = _t(x)
    return _sub(x, _C.unary("tanh", x))


def hard_tanh(x):
    return _clip(_t(x), -1.0, 1.0)


def threshold(x, threshold, default_value):  # noqa: F811 - Keras's argument name
    """x where x > threshold, else ``default_value``."""
    x = _t(x)
    keep = _mask("greater", x, _c(_number(threshold, "threshold"), x))
    return _select(keep, x, _c(_number(default_value, "default_value"), x))


def sigmoid(x):
    return _C.unary("sigmoid", _t(x))


def exponential(x):
    return _C.unary("exp", _t(x))


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    x = _t(x)
    return _mul(relu6(_add(x, _c(3.0, x))), _c(1.0 / 6.0, x))


def hard_silu(x):
    x = _t(x)
    return _mul(x, hard_sigmoid(x))


def log_sigmoid(x):
    """-softplus(-x)."""
    return _C.unary("neg", softplus(_C.unary("neg", _t(x))))


def linear(x):
    return x


def mish(x):
    """x * tanh(softplus(x))."""
    x = _t(x)
    return _mul(x, _C.unary("tanh", softplus(x)))


swish = silu
hard_swish = hard_silu

# Keras's ALL_OBJECTS_DICT: each function under its own name, plus the two aliases.
_BY_NAME = {fn.__name__: fn for fn in (
    relu, leaky_relu, relu6, softmax, celu, elu, selu, softplus, softsign, squareplus,
    soft_shrink, sparse_plus, silu, gelu, glu, tanh, tanh_shrink, threshold, sigmoid,
    sparse_sigmoid, exponential, hard_sigmoid, hard_silu, hard_tanh, hard_shrink, linear, mish,
    log_softmax, log_sigmoid)}
_BY_NAME["swish"] = silu
_BY_NAME["hard_swish"] = hard_silu


def names():
    """Every name ``get`` accepts, sorted."""
    return sorted(_BY_NAME)


def serialize(activation):
    """A built-in activation's name (``serialize(swish) == 'silu'``, as Keras)."""
    name = getattr(activation, "__name__", None)
    if _BY_NAME.get(name) is not activation:
        raise ValueError(f"Unknown activation function '{activation}' cannot be serialized: "
                         f"gpuaccel serializes its built-in activations ({names()}) by name")
    return name


def deserialize(config, custom_objects=None):
    """The activation named by ``config`` (a name, or Keras's ``{'class_name': 'function',
    'config': name}``); ``custom_objects`` maps extra names to functions."""
    name = config.get("config") if isinstance(config, dict) else config
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    raise ValueError(f"Could not interpret activation function identifier: {config!r} "
                     f"(accepted names: {names()})")


def get(identifier):
    """None -> ``linear``; a name or a config dict -> the function; a callable as it is."""
    if identifier is None:
        return linear
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        function = _BY_NAME.get(identifier)
    else:
        function = identifier
    if callable(function):
        return function
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")
