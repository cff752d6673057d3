"""``keras.ops``: Keras 3's backend-neutral op names, the ones the Keras guides' custom layers,
losses and metrics are written with, mapped onto gpuaccel's tensor functions with Keras's
argument names and semantics (``concatenate`` joins on axis 0 by default, ``argmax`` over the
flattened tensor when ``axis`` is None and as int32, ``shape`` is a tuple of ints). They record
for GradientTape and trace into the C++ step like the functions they call.

Only names ``tests/python/test_keras_ops.py`` compares with real ``keras.ops`` are here; any
other raises an AttributeError saying so (``_unsupported.module_getattr``)."""
import numbers

import numpy as np

from .. import _array_ops, _creation, linalg as _linalg, math as _math, nn as _nn
from .._convert import convert_to_tensor as _convert_to_tensor
from .._tensor import Tensor


def _float_dtype(dtype):
    return str(getattr(dtype, "name", dtype) or "float32")


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    if sparse or ragged:
        raise NotImplementedError("keras.ops.convert_to_tensor(sparse=True / ragged=True) is not "
                                  "supported: gpuaccel tensors are dense")
    return _convert_to_tensor(x, dtype=None if dtype is None else _float_dtype(dtype))


def _tensor(x):
    return x if isinstance(x, Tensor) else _convert_to_tensor(x)


# ---- elementwise (NumPy broadcasting) ----
# The ops that only rename a gpuaccel function are built from a table: each is a function with
# Keras's parameter names (x1, x2 / x) that looks the gpuaccel function up when called. The
# functions come from the modules the top-level ``gpuaccel`` takes them from (``gpuaccel.math``
# unless said otherwise), not from ``gpuaccel`` itself, which imports this module.

def _two_operands(keras_name, gpuaccel_name=None, module=_math):
    gpuaccel_name = gpuaccel_name or keras_name

    def op(x1, x2):
        return getattr(module, gpuaccel_name)(x1, x2)
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``: ``gpuaccel.{gpuaccel_name}``."
    return op


def _one_operand(keras_name, module=_math, module_name="gpuaccel"):
    def op(x):
        return getattr(module, keras_name)(x)
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``: ``{module_name}.{keras_name}``."
    return op


add, subtract, multiply, divide, maximum, minimum = map(
    _two_operands, ("add", "subtract", "multiply", "divide", "maximum", "minimum"))
power = _two_operands("power", "pow")
greater, greater_equal, less, less_equal, logical_and, logical_or = map(
    _two_operands, ("greater", "greater_equal", "less", "less_equal", "logical_and",
                    "logical_or"))
matmul = _two_operands("matmul", module=_linalg)
logical_not, negative, abs, square, sqrt, exp, log, tanh = map(  # noqa: A001 -- Keras's names
    _one_operand, ("logical_not", "negative", "abs", "square", "sqrt", "exp", "log", "tanh"))
relu, sigmoid = (_one_operand(name, _nn, _nn.__name__) for name in ("relu", "sigmoid"))


def _is_bool(x):
    return isinstance(x, (bool, np.bool_)) or str(getattr(getattr(x, "dtype", None), "name",
                                                       getattr(x, "dtype", None))) == "bool"


def _comparable(x1, x2):
    """Booleans compared as Keras compares them (the guide's ``ops.equal(y_true, True)``): the
    C++ comparisons take numbers, so a bool operand makes both int32."""
    if _is_bool(x1) or _is_bool(x2):
        return cast(x1, "int32"), cast(x2, "int32")
    return x1, x2


def equal(x1, x2):
    return _math.equal(*_comparable(x1, x2))


def not_equal(x1, x2):
    return _math.not_equal(*_comparable(x1, x2))


# ---- other elementwise ----

def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return _nn.log_softmax(x, axis=axis)


def clip(x, x_min, x_max):
    return _array_ops.clip_by_value(x, x_min, x_max)


def cast(x, dtype):
    return _array_ops.cast(_tensor(x), _float_dtype(dtype))


def where(condition, x1=None, x2=None):
    if (x1 is None) != (x2 is None):
        raise ValueError("`x1` and `x2` either both should be `None` or both should have "
                         "non-None value.")  # Keras's words
    if x1 is None:
        raise NotImplementedError("keras.ops.where(condition) without x1/x2 (the indices of the "
                                  "true elements) is not supported yet")
    return _array_ops.where(condition, x1, x2)


# ---- reductions ----

def _reduction(function, x, axis, keepdims):
    return function(_tensor(x), axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return _reduction(_math.reduce_mean, x, axis, keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001 -- Keras's name
    return _reduction(_math.reduce_sum, x, axis, keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001 -- Keras's name
    if initial is not None:
        raise NotImplementedError("keras.ops.max(initial=...) is not supported yet")
    return _reduction(_math.reduce_max, x, axis, keepdims)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001 -- Keras's name
    if initial is not None:
        raise NotImplementedError("keras.ops.min(initial=...) is not supported yet")
    return _reduction(_math.reduce_min, x, axis, keepdims)


def _arg_reduction(function, x, axis, keepdims):
    """Keras's argmax/argmin: over the flattened tensor when ``axis`` is None, as int32."""
    x = _tensor(x)
    if axis is None:
        index = function(_array_ops.reshape(x, (-1,)), axis=0)
        if keepdims:
            index = _array_ops.reshape(index, (1,) * len(x.shape))
    else:
        index = function(x, axis=axis)
        if keepdims:
            index = _array_ops.expand_dims(index, axis)
    return _array_ops.cast(index, "int32")


def argmax(x, axis=None, keepdims=False):
    return _arg_reduction(_math.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg_reduction(_math.argmin, x, axis, keepdims)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 -- Keras's name
    """Vector norms (``axis`` an int, or None over the flattened tensor): ord None/2 (the
    2-norm), 1, and inf."""
    x = _tensor(x)
    if isinstance(axis, (tuple, list)) or (ord is not None and not isinstance(ord, numbers.Number)):
        raise NotImplementedError("keras.ops.norm of matrices (a tuple axis, ord='fro'/'nuc') "
                                  "is not supported yet; vector norms are")
    if ord is None or ord == 2:
        return _linalg.norm(x, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _math.reduce_sum(_math.abs(x), axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return _math.reduce_max(_math.abs(x), axis=axis, keepdims=keepdims)
    raise NotImplementedError(f"keras.ops.norm(ord={ord!r}) is not supported yet; use ord=None, "
                              f"1, 2 or inf")


# ---- shapes ----

def shape(x):
    """The static shape as a tuple of ints (as Keras 3 returns it eagerly)."""
    return tuple(int(d) for d in _tensor(x).shape)


def reshape(x, newshape):
    return _array_ops.reshape(x, newshape)


def transpose(x, axes=None):
    return _array_ops.transpose(x, perm=axes)


def concatenate(xs, axis=0):
    return _array_ops.concat(list(xs), axis=axis)


def stack(x, axis=0):
    return _array_ops.stack(list(x), axis=axis)


def expand_dims(x, axis):
    return _array_ops.expand_dims(x, axis)


def squeeze(x, axis=None):
    return _array_ops.squeeze(x, axis=axis)


def broadcast_to(x, shape):  # noqa: F811 -- Keras's argument name shadows shape() here only
    return _array_ops.broadcast_to(x, shape)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise NotImplementedError("keras.ops.one_hot(sparse=True) is not supported: gpuaccel "
                                  "tensors are dense")
    return _array_ops.one_hot(cast(x, "int32"), num_classes, axis=axis,
                              dtype=_float_dtype(dtype))


# ---- creation ----

def zeros(shape, dtype=None):  # noqa: F811
    return _creation.zeros(tuple(shape) if isinstance(shape, (list, tuple)) else (shape,),
                           dtype=_float_dtype(dtype))


def ones(shape, dtype=None):  # noqa: F811
    return _creation.ones(tuple(shape) if isinstance(shape, (list, tuple)) else (shape,),
                          dtype=_float_dtype(dtype))


def zeros_like(x, dtype=None):
    x = _tensor(x)
    return _array_ops.zeros_like(x) if dtype is None else zeros(shape(x), dtype)


def ones_like(x, dtype=None):
    x = _tensor(x)
    return _array_ops.ones_like(x) if dtype is None else ones(shape(x), dtype)


def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "keras.ops", {})(name)
