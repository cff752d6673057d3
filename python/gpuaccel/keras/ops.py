"""``keras.ops``: Keras 3's backend-neutral op names, the ones the Keras guides' custom layers,
losses and metrics are written with, mapped onto gpuaccel's tensor functions with Keras's
argument names and semantics (``concatenate`` joins on axis 0 by default, ``argmax`` over the
flattened tensor when ``axis`` is None and as int32, ``shape`` is a tuple of ints). They record
for GradientTape and trace into the C++ step like the functions they call.

Only names ``tests/python/test_keras_ops.py`` compares with real ``keras.ops`` are here; any
other raises an AttributeError saying so (``_unsupported.module_getattr``)."""
import builtins
import numbers
import sys as _sys

import numpy as np

from .. import _C, _array_ops, _conv3d, _creation, _numpy_ops, linalg as _linalg, math as _math
from .. import nn as _nn
from .._convert import as_tensors as _as_tensors, convert_to_tensor as _convert_to_tensor
from .._python_function import custom_gradient  # noqa: F401 -- keras.ops.custom_gradient
from ._ops_linalg import (cholesky, det, eigh, inv, logdet, lstsq, matrix_rank, pinv, qr,  # noqa
                          slogdet, solve, solve_triangular, svd)
from .._tensor import Tensor, arange as _arange
from ..dtypes import INTEGER_NAMES
from . import activations as _activations
from ._pooling_layers import adaptive_pool as _adaptive_pool
from . import _ops_groups
from . import _ops_image as image  # keras.ops.image: resize, rgb_to_grayscale, extract_patches




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


def power(x1, x2):
    """x1 ** x2; integer operands compute in float32 and come back integers (the pow kernel
    takes floats), as Keras keeps them."""
    a, b = _as_tensors(x1, x2)
    if a.dtype.is_floating_point:
        return _math.pow(a, b)
    return cast(_math.pow(cast(a, "float32"), cast(b, "float32")), a._dtype_name)


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


# Keras sums these as int32 (int32 itself too; gpuaccel's own sums count in int64).
_SUMMED_AS_INT32 = ("bool", "int32", "int16", "int8", "uint8")


def sum(x, axis=None, keepdims=False):  # noqa: A001 -- Keras's name
    x = _tensor(x)
    if x._dtype_name in _SUMMED_AS_INT32 and x._dtype_name != "int32":
        x = cast(x, "int32")  # Keras sums bool and the narrower integers as int32
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


# ---- more elementwise: tf.math's composites under NumPy's names ----

def _float(x):
    """Keras computes these in floats: integer and bool inputs become float32."""
    return _math._float(x)


def _floated(keras_name, function):
    def op(x):
        return function(_float(x))
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}`` (integers become float32)."
    return op


def _same_dtype(keras_name, function):
    """An op whose result keeps an integer input's dtype (Keras's ``abs``, ``sign``...)."""
    def op(x):
        return function(_tensor(x))
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``."
    return op


absolute = _same_dtype("absolute", _math.abs)
fabs = _floated("fabs", _math.abs)
sign = _same_dtype("sign", _math.sign)
trunc = _same_dtype("trunc", _math.trunc)
floor, ceil = _floated("floor", _math.floor), _floated("ceil", _math.ceil)
sin, cos, tan = (_floated(n, getattr(_math, n)) for n in ("sin", "cos", "tan"))
arcsin, arccos, arctan = (_floated(n, f) for n, f in (
    ("arcsin", _math.asin), ("arccos", _math.acos), ("arctan", _math.atan)))
arctan2 = _two_operands("arctan2", "atan2")
sinc = _floated("sinc", _math._sinc)
sinh, cosh = _floated("sinh", _math.sinh), _floated("cosh", _math.cosh)
arcsinh, arccosh, arctanh = (_floated(n, f) for n, f in (
    ("arcsinh", _math.asinh), ("arccosh", _math.acosh), ("arctanh", _math.atanh)))
log1p, expm1 = _floated("log1p", _math.log1p), _floated("expm1", _math.expm1)
erf, erfc = _floated("erf", _math.erf), _floated("erfc", _math.erfc)
reciprocal, rsqrt = _floated("reciprocal", _math.reciprocal), _floated("rsqrt", _math.rsqrt)
isnan = _same_dtype("isnan", _math.is_nan)
isfinite = _same_dtype("isfinite", _math.is_finite)
isinf = _same_dtype("isinf", _math.is_inf)
true_divide = _two_operands("true_divide", "divide")
floor_divide = _two_operands("floor_divide", "floordiv")
mod = _two_operands("mod", "floormod")
logical_xor = _two_operands("logical_xor")
divide_no_nan = _two_operands("divide_no_nan")
logaddexp = _two_operands("logaddexp")


def _log_base(keras_name, base):
    def op(x):
        x = _float(x)
        return _math.divide(_math.log(x), _C.scalar_like(float(np.log(base)), x))
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``: log(x) / log({base})."
    return op


log2, log10 = _log_base("log2", 2), _log_base("log10", 10)


def exp2(x):
    x = _float(x)
    return _math.pow(_C.scalar_like(2.0, x), x)


def cbrt(x):
    """sign(x) |x|^(1/3): the real cube root, negative for negative x."""
    x = _float(x)
    return _math.multiply(_math.sign(x), _math.pow(_math.abs(x), 1.0 / 3.0))


def _scaled(keras_name, factor):
    def op(x):
        x = _float(x)
        return _math.multiply(x, _C.scalar_like(factor, x))
    op.__name__ = op.__qualname__ = keras_name
    return op


deg2rad, rad2deg = _scaled("deg2rad", np.pi / 180.0), _scaled("rad2deg", 180.0 / np.pi)


def round(x, decimals=0):  # noqa: A001 -- Keras's name
    """Half to even, at ``decimals`` places."""
    x = _tensor(x)
    if decimals == 0 or not x.dtype.is_floating_point:
        return _math.round(x)
    scale = _C.scalar_like(10.0 ** decimals, x)
    return _math.divide(_math.round(_math.multiply(x, scale)), scale)


def hypot(x1, x2):
    a, b = (_float(v) for v in _as_tensors(x1, x2))
    return _math.sqrt(_math.add(_math.square(a), _math.square(b)))


def heaviside(x1, x2):
    """0 below zero, 1 above, x2 at zero."""
    a, b = (_float(v) for v in _as_tensors(x1, x2))
    zero = _math._mask(_math.equal(a, 0.0), a)
    return _math.add(_math._mask(_math.greater(a, 0.0), a), _math.multiply(zero, b))


def fmod(x1, x2):
    """x1 - trunc(x1 / x2) x2: the remainder with x1's sign (C's fmod)."""
    a, b = _as_tensors(x1, x2)
    _math._check_integer_divisor(a, b)
    quotient = _math.trunc(_math.divide(a, b))
    if not a.dtype.is_floating_point:
        quotient = cast(quotient, a._dtype_name)
    return _math.subtract(a, _math.multiply(quotient, b))


def isclose(x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _math.isclose(x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(x1, x2, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _convert_to_tensor(np.asarray(_math.allclose(x1, x2, rtol=rtol, atol=atol,
                                                        equal_nan=equal_nan)))


# ---- activations (Keras's formulas, gpuaccel.keras.activations) ----

(celu, elu, glu, hard_shrink, hard_sigmoid, hard_silu, hard_tanh, leaky_relu, log_sigmoid,
 relu6, selu, silu, soft_shrink, softplus, softsign, squareplus, tanh_shrink, threshold,
 sparse_plus, sparse_sigmoid) = (getattr(_activations, name) for name in (
     "celu", "elu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_tanh", "leaky_relu",
     "log_sigmoid", "relu6", "selu", "silu", "soft_shrink", "softplus", "softsign", "squareplus",
     "tanh_shrink", "threshold", "sparse_plus", "sparse_sigmoid"))
swish, hard_swish = silu, hard_silu


def gelu(x, approximate=True):
    """Keras.ops's default is the tanh approximation (keras.activations.gelu's is not)."""
    return _activations.gelu(x, approximate=approximate)


# ---- more reductions ----

def _axes_arg(axis):
    return list(axis) if isinstance(axis, (list, tuple)) else axis


def all(x, axis=None, keepdims=False):  # noqa: A001 -- Keras's name
    return _math.reduce_all(x, _axes_arg(axis), keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001 -- Keras's name
    return _math.reduce_any(x, _axes_arg(axis), keepdims)


def amax(x, axis=None, keepdims=False):
    return max(x, axis, keepdims)


def amin(x, axis=None, keepdims=False):
    return min(x, axis, keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    """The product (a host computation: no gradient, and it does not trace)."""
    out = _math.reduce_prod(x, _axes_arg(axis), keepdims)
    return out if dtype is None else cast(out, dtype)


def var(x, axis=None, keepdims=False):
    return _math.reduce_variance(_float(x), _axes_arg(axis), keepdims)


def std(x, axis=None, keepdims=False):
    return _math.reduce_std(_float(x), _axes_arg(axis), keepdims)


def logsumexp(x, axis=None, keepdims=False):
    return _math.reduce_logsumexp(x, _axes_arg(axis), keepdims)


def count_nonzero(x, axis=None):
    return _math.count_nonzero(x, _axes_arg(axis), dtype="int32")


def moments(x, axes, keepdims=False, synchronized=False):
    if synchronized:
        raise NotImplementedError("keras.ops.moments(synchronized=True) needs a distribution "
                                  "strategy; use synchronized=False")
    x = _tensor(x)
    axes = _axes_arg(axes)
    return (_math.reduce_mean(x, axes, keepdims), _math.reduce_variance(x, axes, keepdims))


def _scan(function):
    def op(x, axis=None, dtype=None):
        x = _tensor(x)
        if dtype is not None or x._dtype_name in ("bool", "uint8"):
            x = cast(x, "int32" if dtype is None else dtype)  # Keras counts bools as int32
        if axis is None:
            x, axis = reshape(x, (-1,)), 0
        return function(x, axis=axis)
    op.__name__ = op.__qualname__ = function.__name__
    op.__doc__ = f"``keras.ops.{function.__name__}``: over the flattened tensor when axis is None."
    return op


cumsum, cumprod = _scan(_math.cumsum), _scan(_math.cumprod)


def normalize(x, axis=-1, order=2, epsilon=None):
    if order != 2:
        raise NotImplementedError(f"keras.ops.normalize(order={order!r}) is not supported yet; "
                                  f"use order=2")
    return _math.l2_normalize(x, axis=axis, epsilon=1e-12 if epsilon is None else epsilon)


def in_top_k(targets, predictions, k):
    return _math.in_top_k(targets, predictions, k)


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment(data, segment_ids, num_segments, sorted, _math.segment_sum,
                    _math.unsorted_segment_sum)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment(data, segment_ids, num_segments, sorted, _math.segment_prod,
                    _math.unsorted_segment_prod)


# ---- shapes and arrays (NumPy's names, gpuaccel._numpy_ops) ----

(flip, roll, tril, triu, tri, diag, diagonal, moveaxis, swapaxes, repeat, outer, inner,
 vdot, ravel, diff, append, hstack, vstack, dstack, array_split, take, take_along_axis, meshgrid,
 rot90, digitize, searchsorted, kron, ptp, average, logspace) = (getattr(_numpy_ops, name) for
                                                                 name in (
    "flip", "roll", "tril", "triu", "tri", "diag", "diagonal", "moveaxis", "swapaxes",
    "repeat", "outer", "inner", "vdot", "ravel", "diff", "append", "hstack", "vstack", "dstack",
    "array_split", "take", "take_along_axis", "meshgrid", "rot90", "digitize", "searchsorted",
    "kron", "ptp", "average", "logspace"))


def trace(x, offset=0, axis1=0, axis2=1):
    x = _tensor(x)
    total = _numpy_ops.trace(x, offset, axis1, axis2)  # an exact int64 sum for integers
    return cast(total, "int32") if x._dtype_name in _SUMMED_AS_INT32 else total


def isin(x1, x2, assume_unique=False, invert=False):
    hits = _numpy_ops.isin(x1, x2)
    return logical_not(hits) if invert else hits


def fliplr(x):
    return flip(x, 1)


def flipud(x):
    return flip(x, 0)


def diagflat(x, k=0):
    return diag(ravel(x), k)


def dot(x1, x2):
    """NumPy's dot: a product for scalars, the inner product of vectors, matmul otherwise
    (a vector on the right contracts with the last axis)."""
    a, b = _as_tensors(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim == 1:
        return _numpy_ops.inner(a, b)
    if a.ndim == 1:
        return squeeze(matmul(expand_dims(a, 0), b), 0) if b.ndim == 2 else \
            _linalg.tensordot(a, b, [[0], [b.ndim - 2]])
    return matmul(a, b) if b.ndim == 2 or a.ndim == b.ndim else \
        _linalg.tensordot(a, b, [[a.ndim - 1], [b.ndim - 2]])


def tensordot(x1, x2, axes=2):
    return _linalg.tensordot(x1, x2, axes)


def einsum(subscripts, *operands, **kwargs):
    return _linalg.einsum(subscripts, *operands)


def split(x, indices_or_sections, axis=0):
    """NumPy's split: a number of equal pieces, or the indices to cut before."""
    x = _tensor(x)
    n = shape(x)[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        if n % indices_or_sections:
            raise ValueError(f"array split does not result in an equal division: {n} entries "
                             f"in {indices_or_sections} pieces")
        return array_split(x, indices_or_sections, axis)
    cuts = [0, *(int(i) for i in indices_or_sections), n]
    sizes = [builtins.max(b - a, 0) for a, b in zip(cuts, cuts[1:])]
    return _array_ops.split(x, sizes, axis=axis)


def hsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=1 if len(shape(x)) > 1 else 0)


def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=0)


def unstack(x, num=None, axis=0):
    return _array_ops.unstack(x, num=num, axis=axis)


def tile(x, repeats):
    x = _tensor(x)
    reps = [repeats] if isinstance(repeats, numbers.Integral) else list(repeats)
    if len(reps) < x.ndim:
        reps = [1] * (x.ndim - len(reps)) + reps
    elif len(reps) > x.ndim:
        x = reshape(x, (1,) * (len(reps) - x.ndim) + shape(x))
    return _array_ops.tile(x, reps)


def pad(x, pad_width, mode="constant", constant_values=None):
    x = _tensor(x)
    widths = np.broadcast_to(np.asarray(pad_width, np.int64).reshape(-1, 2) if np.ndim(
        pad_width) else np.full((1, 2), pad_width), (x.ndim, 2))
    return _array_ops.pad(x, widths.tolist(), mode, 0 if constant_values is None else
                          constant_values)


def ndim(x):
    return len(shape(x))


def size(x):
    return int(np.prod(shape(x), dtype=np.int64))


def dtype(x):
    return _tensor(x)._dtype_name


def is_tensor(x):
    return isinstance(x, Tensor)


def convert_to_numpy(x):
    return np.asarray(_tensor(x).numpy())


def copy(x):
    return _array_ops.identity(_tensor(x))


def stop_gradient(variable):
    return _C.detach(_tensor(variable))


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """1 at each class a row lists (the max of its one-hot rows)."""
    if sparse:
        raise NotImplementedError("keras.ops.multi_hot(sparse=True) is not supported: gpuaccel "
                                  "tensors are dense")
    if axis != -1:
        raise NotImplementedError(f"keras.ops.multi_hot(axis={axis!r}) is not supported yet; "
                                  f"use axis=-1")
    num_classes = kwargs.pop("num_tokens", num_classes)
    hot = one_hot(inputs, num_classes, dtype="float32")  # [..., entries, classes]
    return cast(max(hot, axis=-2), _float_dtype(dtype))


# ---- more creation ----

def arange(start, stop=None, step=None, dtype=None):
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype is None:
        is_int = builtins.all(isinstance(v, numbers.Integral) for v in (start, stop, step))
        dtype = "int32" if is_int else "float32"
    return _arange(start, stop, step, dtype=_float_dtype(dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if retstep or not endpoint or axis != 0:
        raise NotImplementedError("keras.ops.linspace(retstep/endpoint=False/axis) is not "
                                  "supported yet")
    return _creation.linspace(start, stop, num, dtype=_float_dtype(dtype))


def eye(N, M=None, k=0, dtype=None):  # noqa: N803 -- Keras's names
    return cast(_convert_to_tensor(np.eye(N, M, k, dtype=np.float32)), _float_dtype(dtype))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def full(shape, fill_value, dtype=None):  # noqa: F811
    """float32 unless ``dtype`` says otherwise (Keras's floatx), whatever the fill value."""
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    return cast(_array_ops.fill(dims, fill_value), "float32" if dtype is None else dtype)


def full_like(x, fill_value, dtype=None):
    x = _tensor(x)
    return full(shape(x), fill_value, x._dtype_name if dtype is None else dtype)


def empty(shape, dtype=None):  # noqa: F811
    return zeros(shape, dtype)


def empty_like(x, dtype=None):
    return zeros_like(x, dtype)


def array(x, dtype=None):
    return convert_to_tensor(x, dtype)


# ---- more element-wise ----

def isposinf(x):
    x = _tensor(x)
    return logical_and(_math.is_inf(x), _math.greater(x, 0.0))


def isneginf(x):
    x = _tensor(x)
    return logical_and(_math.is_inf(x), _math.less(x, 0.0))


def signbit(x):
    """True where the sign bit is set: below zero, and -0.0 (whose reciprocal is -inf)."""
    x = _tensor(x)
    if not x.dtype.is_floating_point:
        return _math.less(x, 0)
    x = _C.detach(x)
    negative_zero = logical_and(_math.equal(x, 0.0), _math.less(_math.reciprocal(x), 0.0))
    return logical_or(_math.less(x, 0.0), negative_zero)


def ldexp(x1, x2):
    """x1 * 2 ** x2 (``x2`` integers)."""
    a = _float(x1)
    exponent = _tensor(x2)
    if exponent.dtype.is_floating_point:
        raise TypeError(f"ldexp's x2 must be integers, got {exponent._dtype_name}")
    return _math.multiply(a, _math.pow(_C.scalar_like(2.0, a), cast(exponent, a._dtype_name)))


def logaddexp2(x1, x2):
    """log2(2 ** x1 + 2 ** x2), as logaddexp in base 2 (never overflows)."""
    a, b = (_float(v) for v in _as_tensors(x1, x2))
    ln2 = _C.scalar_like(float(np.log(2.0)), a)
    return _math.divide(_math.logaddexp(_math.multiply(a, ln2), _math.multiply(b, ln2)), ln2)


def saturate_cast(x, dtype):
    """cast, with values first clipped to what ``dtype`` holds (no integer wrap-around)."""
    return _array_ops.saturate_cast(_tensor(x), _float_dtype(dtype))


# ---- losses, normalizations and layers' maths, as Keras's TF backend computes them ----

_EPSILON = 1e-7  # keras.config.epsilon()


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise (not averaged): -t log(o) - (1 - t) log(1 - o), o clipped to
    [eps, 1 - eps]; from logits, TF's stable max(x, 0) - x t + log(1 + exp(-|x|))."""
    t, o = (_float(v) for v in _as_tensors(target, output))
    if from_logits:
        return _math.add(_math.subtract(relu(o), _math.multiply(o, t)),
                         _math.log1p(_math.exp(negative(abs(o)))))
    o = clip(o, _EPSILON, 1.0 - _EPSILON)
    one = _C.scalar_like(1.0, o)
    return negative(_math.add(_math.multiply(t, _math.log(o)), _math.multiply(
        _math.subtract(one, t), _math.log(_math.subtract(one, o)))))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(t log(o)) along ``axis``; probabilities are first scaled to sum to 1 and clipped."""
    t, o = (_float(v) for v in _as_tensors(target, output))
    if from_logits:
        return negative(sum(_math.multiply(t, log_softmax(o, axis=axis)), axis=axis))
    o = _math.divide(o, sum(o, axis=axis, keepdims=True))
    o = clip(o, _EPSILON, 1.0 - _EPSILON)
    return negative(sum(_math.multiply(t, _math.log(o)), axis=axis))


def _normalized_axes(x, axis):
    return [a % x.ndim for a in (axis if isinstance(axis, (list, tuple)) else [axis])]


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """(x - mean) / sqrt(var + eps) over ``axis``, then * gamma + beta."""
    if kwargs.get("rms_scaling"):
        raise NotImplementedError("keras.ops.layer_normalization(rms_scaling=True) is "
                                  "deprecated in Keras and not supported; use "
                                  "keras.ops.rms_normalization")
    x = _float(x)
    axes = _normalized_axes(x, axis)
    eps = _EPSILON if epsilon is None else epsilon
    mean_, variance = moments(x, axes, keepdims=True)
    inverse = _math.rsqrt(_math.add(variance, eps))
    out = _math.multiply(_math.subtract(x, mean_), inverse)
    if gamma is not None:
        out = _math.multiply(out, gamma)
    return out if beta is None else _math.add(out, beta)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """x / sqrt(mean(x²) + eps) over ``axis``, times ``scale``."""
    x = _float(x)
    eps = _EPSILON if epsilon is None else epsilon
    mean_square = mean(square(x), axis=_normalized_axes(x, axis), keepdims=True)
    out = _math.multiply(x, _math.rsqrt(_math.add(mean_square, eps)))
    return out if scale is None else _math.multiply(out, scale)


def batch_normalization(x, mean, variance, axis, offset=None, scale=None,  # noqa: F811
                        epsilon=1e-3):
    """(x - mean) / sqrt(variance + eps) * scale + offset, the statistics given along
    ``axis``."""
    x = _float(x)
    axis = axis % x.ndim

    def along(v):
        v = _tensor(v)
        return reshape(v, [x.shape[axis] if d == axis else 1 for d in range(x.ndim)]) \
            if v.ndim == 1 else v
    return _nn.batch_normalization(x, along(mean), along(variance),
                                   None if offset is None else along(offset),
                                   None if scale is None else along(scale), epsilon)


def psnr(x1, x2, max_val):
    """Peak signal-to-noise ratio: 20 log10(max_val) - 10 log10(mse) (over all entries)."""
    a, b = (_float(v) for v in _as_tensors(x1, x2))
    mse = mean(square(_math.subtract(a, b)))
    return _math.subtract(_C.scalar_like(20.0 * float(np.log10(max_val)), mse),
                          _math.multiply(log10(mse), _C.scalar_like(10.0, mse)))


def _channels_last(data_format, op):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"keras.ops.{op}(data_format={data_format!r}) is not "
                                  f"supported yet; use channels_last")


def _rank4(x, op):
    x = _tensor(x)
    if x.ndim != 4:
        raise NotImplementedError(f"keras.ops.{op} supports 2-D (rank-4, NHWC) inputs; got "
                                  f"shape {list(x.shape)}")
    return x


def _spatial(value, rank, name):
    """An int or ``rank`` ints, as a list of ``rank`` ints."""
    values = [value] * rank if isinstance(value, numbers.Integral) else list(value)
    if len(values) != rank:
        raise ValueError(f"{name} must be an int or {rank} ints for a {rank}-D convolution, got "
                         f"{value!r}")
    return [int(v) for v in values]


def _conv_rank(x, op):
    if x.ndim not in (3, 4, 5):
        raise ValueError(f"keras.ops.{op} supports 1-D, 2-D and 3-D convolutions (inputs of "
                         f"rank 3, 4 or 5, channels last); got shape {list(x.shape)}")
    return x.ndim - 2


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D, 2-D or 3-D convolution by the inputs' rank: inputs (N, spatial..., C), kernel
    (spatial..., C / groups, F); the groups are C over the kernel's input channels, as in
    Keras."""
    _channels_last(data_format, "conv")
    x, kernel = _as_tensors(inputs, kernel)
    rank = _conv_rank(x, "conv")
    if kernel.ndim != rank + 2 or x.shape[-1] % kernel.shape[-2]:
        raise ValueError(f"keras.ops.conv: kernel of shape {list(kernel.shape)} does not fit "
                         f"inputs of shape {list(x.shape)} (expected (spatial..., in_channels "
                         f"or a divisor of it, filters))")
    groups = x.shape[-1] // kernel.shape[-2]
    strides, dilations = (_spatial(strides, rank, "strides"),
                          _spatial(dilation_rate, rank, "dilation_rate"))
    if rank == 3:
        pads = _conv3d.padding_pairs(padding.upper(), x.shape[1:4], kernel.shape[:3], strides,
                                     dilations)
        return _conv3d.conv3d(x, kernel, None, strides, pads, dilations, groups)
    if rank == 1:
        x, kernel = _C.expand_dims(x, 1), _C.expand_dims(kernel, 0)
        strides, dilations = [1, *strides], [1, *dilations]
    out = _nn.conv2d(x, kernel, strides=strides, padding=padding.upper(), dilations=dilations,
                     groups=groups)
    return _C.squeeze(out, [1]) if rank == 1 else out


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1):
    """1-D, 2-D or 3-D transposed convolution by the inputs' rank: inputs (N, spatial..., C),
    kernel (spatial..., F, C); output sizes as Keras computes them."""
    from ._convolution_layers import transposed_length
    _channels_last(data_format, "conv_transpose")
    x, kernel = _as_tensors(inputs, kernel)
    rank = _conv_rank(x, "conv_transpose")
    strides, dilations = (_spatial(strides, rank, "strides"),
                          _spatial(dilation_rate, rank, "dilation_rate"))
    extras = [None] * rank if output_padding is None else _spatial(output_padding, rank,
                                                                   "output_padding")
    sizes = [transposed_length(*axis) for axis in zip(
        x.shape[1:-1], kernel.shape[:rank], strides, [padding.lower()] * rank, extras,
        dilations)]
    return _nn.conv_transpose(x, kernel, [x.shape[0], *sizes, kernel.shape[-2]], strides,
                              padding.upper(), dilations=dilations)


def _pool(inputs, pool_size, strides, padding, data_format, function, op):
    _channels_last(data_format, op)
    return function(_rank4(inputs, op), pool_size, pool_size if strides is None else strides,
                    padding.upper())


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool(inputs, pool_size, strides, padding, data_format, _nn.max_pool2d, "max_pool")


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool(inputs, pool_size, strides, padding, data_format, _nn.avg_pool2d,
                 "average_pool")


def _adaptive(inputs, output_size, data_format, reduction, op):
    _channels_last(data_format, op)
    x = _tensor(inputs)
    rank = x.ndim - 2
    if rank < 1:
        raise ValueError(f"keras.ops.{op} needs (batch, ..., channels) inputs, got shape "
                         f"{list(x.shape)}")
    sizes = (output_size,) * rank if isinstance(output_size, numbers.Integral) else \
        tuple(output_size)
    if len(sizes) != rank:
        raise ValueError(f"output_size must hold {rank} sizes for inputs of shape "
                         f"{list(x.shape)}, got {output_size!r}")
    return _adaptive_pool(x, [int(n) for n in sizes], reduction)


def adaptive_average_pool(inputs, output_size, data_format=None):
    return _adaptive(inputs, output_size, data_format, "mean", "adaptive_average_pool")


def adaptive_max_pool(inputs, output_size, data_format=None):
    return _adaptive(inputs, output_size, data_format, "max", "adaptive_max_pool")


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """Each input channel convolved with its own kernel[:, :, c, :] (output channel c * M + m,
    as Keras): ``tf.nn.depthwise_conv2d``."""
    _channels_last(data_format, "depthwise_conv")
    return _nn.depthwise_conv2d(_rank4(inputs, "depthwise_conv"), kernel, strides,
                                padding.upper(), dilations=dilation_rate)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    """depthwise_conv, then a 1 x 1 conv with ``pointwise_kernel``: ``tf.nn.separable_conv2d``."""
    _channels_last(data_format, "separable_conv")
    return _nn.separable_conv2d(_rank4(inputs, "separable_conv"), depthwise_kernel,
                                pointwise_kernel, strides, padding.upper(),
                                dilations=dilation_rate)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """softmax(q k^T * scale + bias, masked) v, for (batch, time, heads, head_dim) tensors."""
    if flash_attention or attn_logits_soft_cap is not None:
        raise NotImplementedError("keras.ops.dot_product_attention(flash_attention / "
                                  "attn_logits_soft_cap) is not supported yet")
    q, k, v = (_float(t) for t in (query, key, value))
    scale = 1.0 / float(np.sqrt(q.shape[-1])) if scale is None else float(scale)
    logits = _math.multiply(_linalg.einsum("btnh,bsnh->bnts", q, k), scale)
    if bias is not None:
        logits = _math.add(logits, bias)
    keep = None
    if mask is not None:
        keep = cast(_tensor(mask), "float32")
    if is_causal:
        t, s = logits.shape[-2:]
        causal = _convert_to_tensor(np.tril(np.ones((t, s), np.float32)))
        keep = causal if keep is None else _math.multiply(keep, causal)
    if keep is not None:  # masked logits get the dtype's lowest value, as Keras does
        logits = _math._select(cast(keep, logits._dtype_name), logits,
                               _C.scalar_like(_math._LOWEST[logits._dtype_name], logits))
    weights = softmax(logits, axis=-1)
    return _linalg.einsum("bnts,bsnh->btnh", weights, v)


def space_to_depth(x, block_size, data_format="channels_last"):
    """Each block_size x block_size spatial block becomes block_size² channels."""
    _channels_last(data_format, "space_to_depth")
    x = _rank4(x, "space_to_depth")
    n, h, w, c = x.shape
    b = int(block_size)
    if h % b or w % b:
        raise ValueError(f"space_to_depth needs height and width divisible by block_size={b}, "
                         f"got {h} x {w}")
    blocks = reshape(x, (n, h // b, b, w // b, b, c))
    return reshape(transpose(blocks, (0, 1, 3, 2, 4, 5)), (n, h // b, w // b, b * b * c))


def depth_to_space(x, block_size, data_format="channels_last"):
    _channels_last(data_format, "depth_to_space")
    x = _rank4(x, "depth_to_space")
    n, h, w, c = x.shape
    b = int(block_size)
    if c % (b * b):
        raise ValueError(f"depth_to_space needs channels divisible by block_size²={b * b}, "
                         f"got {c}")
    blocks = reshape(x, (n, h, w, b, b, c // (b * b)))
    return reshape(transpose(blocks, (0, 1, 3, 2, 4, 5)), (n, h * b, w * b, c // (b * b)))


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment(data, segment_ids, num_segments, sorted, _math.segment_max,
                    _math.unsorted_segment_max)


def _segment(data, segment_ids, num_segments, is_sorted, sorted_fn, unsorted_fn):
    if num_segments is None:
        if is_sorted:
            return sorted_fn(data, segment_ids)
        num_segments = int(np.max(_tensor(segment_ids).numpy())) + 1
    return unsorted_fn(data, segment_ids, num_segments)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    return _segment(data, segment_ids, num_segments, sorted, _math.segment_min,
                    _math.unsorted_segment_min)


def bincount(x, weights=None, minlength=0, sparse=False):
    if sparse:
        raise NotImplementedError("keras.ops.bincount(sparse=True) is not supported: gpuaccel "
                                  "tensors are dense")
    return _math.bincount(x, weights=weights, minlength=minlength)


# ---- more arrays ----

def slice(inputs, start_indices, shape):  # noqa: A001,F811 -- Keras's names
    """The block of ``shape`` starting at ``start_indices`` (a -1 in shape: to the end)."""
    x = _tensor(inputs)
    starts = [int(i) for i in (start_indices.numpy() if hasattr(start_indices, "numpy")
                               else start_indices)]
    sizes = [int(s) for s in shape]
    return _C.slice(x, [(b, n if s == -1 else b + s, 1)
                        for b, s, n in zip(starts, sizes, x.shape)])


def slice_update(inputs, start_indices, updates):
    """``inputs`` with the block at ``start_indices`` replaced by ``updates``: the updates
    padded to the input's shape, blended in with a 0/1 mask (differentiable in both)."""
    x, u = _tensor(inputs), _tensor(updates)
    starts = [int(i) for i in (start_indices.numpy() if hasattr(start_indices, "numpy")
                               else start_indices)]
    widths = [(b, n - b - m) for b, m, n in zip(starts, u.shape, x.shape)]
    if builtins.any(before < 0 or after < 0 for before, after in widths):
        raise ValueError(f"updates of shape {list(u.shape)} at {starts} do not fit in a "
                         f"tensor of shape {list(x.shape)}")
    placed = _array_ops.pad(cast(u, x._dtype_name), widths)
    inside = _array_ops.pad(_C.tensor_full(list(u.shape), 1.0, x._dtype_name, x._device_name),
                            widths)
    return _math._select(inside, placed, x)


def get_item(x, key):
    return _tensor(x)[key]


def dsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=2)


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of ``sequence_length`` along the last axis, every ``sequence_stride`` entries:
    shape (..., frames, sequence_length)."""
    x = _tensor(x)
    n, length, stride = x.shape[-1], int(sequence_length), int(sequence_stride)
    frames = 1 + (n - length) // stride
    picks = (np.arange(frames)[:, None] * stride + np.arange(length)[None, :]).reshape(-1)
    out = take(x, picks, axis=x.ndim - 1)
    return reshape(out, shape(x)[:-1] + (frames, length))


def unravel_index(indices, shape):  # noqa: F811
    """The coordinates of flat ``indices`` in an array of ``shape``, one tensor per axis."""
    flat = _tensor(indices)
    coords = []
    for size in reversed([int(d) for d in shape]):
        coords.append(_math.floormod(flat, size))
        flat = _math.floordiv(flat, size)
    return tuple(reversed(coords))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` by the trapezoidal rule along ``axis``."""
    y = _float(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    pairs = _math.add(take(y, np.arange(1, n), axis), take(y, np.arange(n - 1), axis))
    widths = _C.scalar_like(float(dx), y) if x is None else diff(_float(x), axis=-1 if _tensor(
        x).ndim == 1 else axis)
    if x is not None and _tensor(x).ndim == 1 and y.ndim > 1:
        widths = reshape(widths, [n - 1 if d == axis else 1 for d in range(y.ndim)])
    return _math.multiply(sum(_math.multiply(pairs, widths), axis=axis), 0.5)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if axis != 0:
        raise NotImplementedError("keras.ops.geomspace(axis != 0) is not supported yet")
    values = np.geomspace(float(start), float(stop), int(num), endpoint).astype(np.float32)
    return cast(_convert_to_tensor(values), _float_dtype(dtype))


def vander(x, N=None, increasing=False):  # noqa: N803 -- Keras's name
    """Columns x^(N-1) ... x^0 (or increasing): repeated products, exact for integers."""
    x = _tensor(x)
    n = x.shape[0] if N is None else int(N)
    column = reshape(x, (-1, 1))
    powers = [ones_like(column)]
    for _ in range(n - 1):
        powers.append(_math.multiply(powers[-1], column))
    return concatenate(powers if increasing else powers[::-1], axis=1)


def cdist(x, y):
    """Euclidean distances between the rows of x (..., m, d) and of y (..., n, d)."""
    a, b = (_float(v) for v in _as_tensors(x, y))
    delta = _math.subtract(expand_dims(a, -2), expand_dims(b, -3))
    return _math.sqrt(sum(square(delta), axis=-1))


def corrcoef(x):
    """Pearson correlation between the rows of ``x`` (variables), over its columns."""
    x = _float(x)
    centred = _math.subtract(x, mean(x, axis=-1, keepdims=True))
    covariance = matmul(centred, transpose(centred))
    scale = _math.sqrt(diagonal(covariance))
    return _math.divide(covariance, outer(scale, scale))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors along the last axis."""
    if axis is not None:
        axisa = axisb = axisc = axis
    if (axisa, axisb, axisc) != (-1, -1, -1):
        raise NotImplementedError("keras.ops.cross on other axes than the last is not "
                                  "supported yet")
    a, b = _as_tensors(x1, x2)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"cross needs 3-vectors on the last axis, got shapes "
                         f"{list(a.shape)} and {list(b.shape)}")
    return _linalg.cross(a, b)


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] is the first true condition, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select needs as many conditions as choices, got {len(condlist)} "
                         f"and {len(choicelist)}")
    out = None
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        choice = _tensor(choice)
        otherwise = out if out is not None else _C.scalar_like(float(default), choice)
        out = _math._select(cast(condition, choice._dtype_name), choice, otherwise)
    return out


def nonzero(x):
    """The coordinates of the non-zero entries, one int32 tensor per axis (read on the host)."""
    values = np.asarray(_tensor(x).numpy())
    return tuple(_convert_to_tensor(c.astype(np.int32)) for c in np.nonzero(values))


def histogram(x, bins=10, range=None):  # noqa: A002 -- Keras's name
    """(counts, edges) of ``bins`` equal bins over ``range`` (the data's min and max by
    default); the last bin includes its right edge."""
    x = reshape(_float(x), (-1,))
    low, high = (float(v) for v in (range if range is not None else
                                    (min(x).numpy(), max(x).numpy())))
    edges = np.linspace(low, high, int(bins) + 1).astype(np.float32)
    inside = logical_and(greater_equal(x, low), less_equal(x, high))
    index = minimum(_numpy_ops.digitize(x, edges[1:-1]), int(bins) - 1)
    hits = _math.multiply(one_hot(index, int(bins)), expand_dims(cast(inside, "float32"), -1))
    return cast(sum(hits, axis=0), "int32"), _convert_to_tensor(edges)


erfinv = _floated("erfinv", _math.erfinv)


def isreal(x):
    """True everywhere: gpuaccel has no complex dtype."""
    return _array_ops.ones_like(cast(x, "bool"))


# ---- windows (constants of their length, as NumPy computes them) ----

def _window(keras_name, numpy_window):
    def op(x, *args):
        return _convert_to_tensor(numpy_window(int(x), *args).astype(np.float32))
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``: ``np.{numpy_window.__name__}`` as float32."
    return op


bartlett, blackman, hamming, hanning, kaiser = (
    _window(w.__name__, w) for w in (np.bartlett, np.blackman, np.hamming, np.hanning,
                                     np.kaiser))


# ---- control flow: Python control flow, run eagerly ----
# Reading a traced value on the host (bool(pred), int(index)) breaks the C++ trace of a layer's
# call (cpp/nn/op_trace.h), which then runs its Python call eagerly: these functions never bake
# one branch into a replayed step.

def cond(pred, true_fn, false_fn):
    return true_fn() if bool(pred) else false_fn()


def switch(index, branches, *operands):
    """branches[index](*operands), the index clipped into range (as Keras)."""
    chosen = builtins.min(builtins.max(int(index), 0), len(branches) - 1)
    return branches[chosen](*operands)


def fori_loop(lower, upper, body_fun, init_val):
    """body_fun(i, value) for i in [lower, upper), i an int32 scalar tensor (as Keras's TF
    backend passes it)."""
    value = init_val
    for i in builtins.range(int(lower), int(upper)):
        value = body_fun(_convert_to_tensor(np.int32(i)), value)
    return value


def while_loop(cond, body, loop_vars, maximum_iterations=None):  # noqa: F811
    is_tuple = isinstance(loop_vars, (tuple, list))
    state = tuple(loop_vars) if is_tuple else (loop_vars,)
    steps = 0
    while (maximum_iterations is None or steps < maximum_iterations) and bool(cond(*state)):
        out = body(*state)
        state = tuple(out) if is_tuple else (out,)
        steps += 1
    return state if is_tuple else state[0]


def map(f, xs):  # noqa: A001 -- Keras's name
    """f applied to each slice xs[i], the results stacked."""
    return stack([f(x) for x in unstack(xs)])


def vectorized_map(function, elements):
    return map(function, elements)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """carry, y = f(carry, x) over the slices of ``xs`` (or ``length`` times with x None);
    returns (the last carry, the ys stacked)."""
    items = unstack(xs) if xs is not None else [None] * int(length)
    carry, ys = init, []
    for x in (items[::-1] if reverse else items):
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys = ys[::-1]
    return carry, (stack(ys) if ys and ys[0] is not None else None)


def associative_scan(f, elems, reverse=False, axis=0):
    """The inclusive scan of an associative ``f`` along ``axis`` (log2(n) doubling steps)."""
    x = _tensor(elems)
    return _math._scan(x, _math._axis_index(axis, x.ndim), f, None, False, reverse)


# ---- NaN-ignoring reductions and replacements: the NaN entries are replaced by the select
# kernel (where), so they never spread into the result or its gradient ----

# The largest finite value of each floating dtype (nan_to_num's default for ±inf).
_LARGEST_FINITE = {"float32": 3.4028234663852886e38, "float16": 65504.0,
                   "bfloat16": 3.3895313892515355e38, "float64": 1.7976931348623157e308}


def _is_floating(x):
    return x.dtype.is_floating_point


def _nan_replaced(x, value):
    """x with its NaN entries replaced by ``value`` (integers have none)."""
    if not _is_floating(x):
        return x
    return _array_ops.where(_math.is_nan(x), _C.scalar_like(value, x), x)


def _valid_count(x, axis, keepdims):
    """The number of non-NaN entries reduced, in x's dtype."""
    return sum(cast(logical_not(_math.is_nan(x)), x._dtype_name), axis, keepdims)


def _nan_where_all_nan(x, result, axis, keepdims, fill=float("nan")):
    """``fill`` where every entry reduced was NaN (NumPy's and Keras's nanmax/nanmin/nanarg*)."""
    empty = _math.equal(_valid_count(x, axis, keepdims), 0.0)
    return _array_ops.where(empty, _C.scalar_like(fill, result), result)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (the dtype's largest and
    smallest finite values by default)."""
    x = _tensor(x)
    if not _is_floating(x):
        return x
    largest = _LARGEST_FINITE[x._dtype_name]
    out = _nan_replaced(x, nan)
    for value, infinity in ((largest if posinf is None else posinf, float("inf")),
                            (-largest if neginf is None else neginf, float("-inf"))):
        out = _array_ops.where(_math.equal(x, _C.scalar_like(infinity, x)),
                               _C.scalar_like(value, x), out)
    return out


def _nan_skipping(keras_name, pick):
    """fmax/fmin: the other operand where one is NaN (NaN only where both are)."""
    def op(x1, x2):
        a, b = _as_tensors(x1, x2)
        best = pick(a, b)
        if not _is_floating(best):
            return best
        return _array_ops.where(_math.is_nan(a), b, _array_ops.where(_math.is_nan(b), a, best))
    op.__name__ = op.__qualname__ = keras_name
    op.__doc__ = f"``keras.ops.{keras_name}``: NaN only where both operands are NaN."
    return op


fmax = _nan_skipping("fmax", _math.maximum)
fmin = _nan_skipping("fmin", _math.minimum)


def nansum(x, axis=None, keepdims=False):
    return sum(_nan_replaced(_tensor(x), 0.0), axis, keepdims)


def nanprod(x, axis=None, keepdims=False):
    return prod(_nan_replaced(_tensor(x), 1.0), axis, keepdims)


def nanmean(x, axis=None, keepdims=False):
    """The mean of the non-NaN entries; NaN where there are none (0 / 0)."""
    x = _tensor(x)
    if not _is_floating(x):
        return mean(x, axis, keepdims)
    return _math.divide(nansum(x, axis, keepdims), _valid_count(x, axis, keepdims))


def _nan_extreme(reduction, fill):
    """nanmax/nanmin: the reduction with NaN entries as ``fill`` (its identity), NaN where all
    were NaN."""
    def op(x, axis=None, keepdims=False):
        x = _tensor(x)
        if not _is_floating(x):
            return reduction(x, axis, keepdims)
        return _nan_where_all_nan(x, reduction(_nan_replaced(x, fill), axis, keepdims), axis,
                                  keepdims)
    op.__name__ = op.__qualname__ = "nan" + reduction.__name__
    op.__doc__ = f"``keras.ops.nan{reduction.__name__}``: NaN where every entry is NaN."
    return op


nanmax = _nan_extreme(max, float("-inf"))
nanmin = _nan_extreme(min, float("inf"))


def nanvar(x, axis=None, keepdims=False):
    """The variance of the non-NaN entries (ddof 0); NaN where there are none."""
    x = _float(x)
    deviation = subtract(x, nanmean(x, axis, True))
    # Only NaN entries are dropped: inf - inf stays NaN, as in NumPy and Keras.
    squared = _array_ops.where(_math.is_nan(x), _C.scalar_like(0.0, x), square(deviation))
    return _math.divide(sum(squared, axis, keepdims), _valid_count(x, axis, keepdims))


def nanstd(x, axis=None, keepdims=False):
    return sqrt(nanvar(x, axis, keepdims))


def _nan_arg_reduction(function, fill):
    def op(x, axis=None, keepdims=False):
        x = _tensor(x)
        if not _is_floating(x):
            return function(x, axis, keepdims)
        index = function(_nan_replaced(x, fill), axis, keepdims)
        if axis is None:
            x = reshape(x, (-1,))
            if keepdims:
                x = reshape(x, (1,) * len(index.shape) + (-1,))
            count = _valid_count(x, -1, False)
        else:
            count = _valid_count(x, axis, keepdims)
        # Keras gives -1 where every entry is NaN.
        return _array_ops.where(_math.equal(count, 0.0), _C.scalar_like(-1, index), index)
    op.__name__ = op.__qualname__ = "nan" + function.__name__
    op.__doc__ = f"``keras.ops.nan{function.__name__}``: -1 where every entry is NaN."
    return op


nanargmax = _nan_arg_reduction(argmax, float("-inf"))
nanargmin = _nan_arg_reduction(argmin, float("inf"))


def nancumsum(x, axis=None, dtype=None):
    """Keras's: the cumulative sum of nan_to_num(x) (NaN as 0, ±inf as the largest finite)."""
    return cumsum(nan_to_num(x, 0.0), axis, dtype)


def nancumprod(x, axis=None, dtype=None):
    return cumprod(nan_to_num(x, 1.0), axis, dtype)


# ---- sorting and what is built on it (the sort kernel: stable, NaN last) ----

def _flat_if_none(x, axis):
    x = _tensor(x)
    return (reshape(x, (-1,)), -1) if axis is None else (x, axis)


def sort(x, axis=-1):
    x, axis = _flat_if_none(x, axis)
    return _C.sort(x, axis, False)[0]


def argsort(x, axis=-1):
    """int32 indices (Keras's TensorFlow backend), stable."""
    x, axis = _flat_if_none(x, axis)
    return cast(_C.sort(x, axis, False)[1], "int32")


def top_k(x, k, sorted=True):  # noqa: A002 -- Keras's name
    return _math.top_k(_tensor(x), k, sorted=sorted)


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _sorted_rows(x, axis):
    """x (floating) sorted along ``axis`` (None: all axes; a tuple: those axes together),
    the sorted axis last, and the shape keepdims gives."""
    ndim = len(x.shape)
    axes = list(builtins.range(ndim)) if axis is None else [
        a % ndim for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    kept = [a for a in builtins.range(ndim) if a not in axes]
    moved = _C.permute(x, kept + axes) if kept + axes != list(builtins.range(ndim)) else x
    rows = reshape(moved, [x.shape[a] for a in kept] + [-1])
    keep_shape = [1 if a in axes else x.shape[a] for a in builtins.range(ndim)]
    return _C.sort(rows, -1, False)[0], keep_shape


def _quantile_of_sorted(rows, q, method):
    """NumPy's quantile ``q`` of each sorted row (NaN where the row holds NaN)."""
    n = rows.shape[-1]
    position = q * (n - 1)
    low, high = int(np.floor(position)), int(np.ceil(position))
    below, above = rows[..., low], rows[..., high]
    fraction = position - low
    if method == "lower":
        value = below
    elif method == "higher":
        value = above
    elif method == "midpoint":
        value = multiply(add(below, above), 0.5) if low != high else below
    elif method == "nearest":
        # NumPy rounds half to even positions.
        value = rows[..., int(np.around(position))]
    else:  # linear, even at a whole position: an infinite entry gives NaN there, as NumPy
        value = add(below, multiply(subtract(above, below), fraction))
    last = rows[..., n - 1]
    return _array_ops.where(_math.equal(last, last), value, last)


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """NumPy's quantiles (q in [0, 1], a number or a list: its axis comes first)."""
    return _quantiles(x, q, axis, method, keepdims, _quantile_of_sorted)


def _nan_quantile_of_sorted(rows, q, method):
    """NumPy's nanquantile ``q`` of each sorted row: the row's NaNs are last, so its first
    ``count`` entries are its numbers and the position is q (count - 1), one per row, read with
    take_along_last_axis (no gradient). NaN for a row of NaNs only."""
    count = _valid_count(rows, -1, True)
    position = maximum(multiply(subtract(count, 1.0), q), 0.0)
    low, high = _math.floor(position), _math.ceil(position)

    def at(place):
        return _C.take_along_last_axis(rows, cast(place, "int64"))[..., 0]
    below, above = at(low), at(high)
    if method == "lower":
        return below
    if method == "higher":
        return above
    if method == "midpoint":
        return multiply(add(below, above), 0.5)
    if method == "nearest":
        return at(_math.round(position))  # half to even, as NumPy
    return add(below, multiply(subtract(above, below), subtract(position, low)[..., 0]))


def _quantiles(x, q, axis, method, keepdims, of_sorted):
    """Quantiles ``q`` (in [0, 1]; a list gives a leading axis) of x along ``axis``, each row's
    from ``of_sorted(sorted rows, q, method)``."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"Invalid value for argument `method`: {method!r}; expected one of "
                         f"{_QUANTILE_METHODS}")
    qs = np.asarray(q.numpy() if hasattr(q, "numpy") else q, np.float64)
    if (qs < 0).any() or (qs > 1).any():
        raise ValueError(f"Quantiles must be in the range [0, 1], got {qs.tolist()}")
    rows, keep_shape = _sorted_rows(_float(x), axis)
    outs = []
    for value in qs.reshape(-1).tolist():
        out = of_sorted(rows, value, method)
        outs.append(reshape(out, keep_shape) if keepdims else out)
    if qs.ndim == 0:
        return outs[0]
    return reshape(stack(outs), list(qs.shape) + list(outs[0].shape))


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """NumPy's nanquantile: the quantiles of each row's non-NaN entries."""
    return _quantiles(x, q, axis, method, keepdims, _nan_quantile_of_sorted)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    qs = np.asarray(q.numpy() if hasattr(q, "numpy") else q, np.float64)
    return nanquantile(x, qs / 100.0, axis, method, keepdims)


def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis, "linear", keepdims)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    qs = np.asarray(q.numpy() if hasattr(q, "numpy") else q, np.float64)
    return quantile(x, qs / 100.0, axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    """The mean of the two middle entries of an even count (NumPy's); NaN with a NaN."""
    return quantile(x, 0.5, axis, "linear", keepdims)


# ---- bitwise (Keras's TensorFlow backend: promoted by result_type, shift counts clamped to
# [0, bits - 1] as tf.bitwise does; bool operands of and/or/xor/invert work, as with Keras's
# NumPy and JAX backends, where the TensorFlow backend refuses them) ----

def _bitwise(keras_name, op):
    def fn(x, y):
        return _C.bitwise(op, _tensor(x), _tensor(y))
    fn.__name__ = fn.__qualname__ = keras_name
    fn.__doc__ = f"``keras.ops.{keras_name}``: x {op} y bit by bit (integer or bool tensors)."
    return fn


def _shift(keras_name, op):
    def fn(x, y):
        from .. import bitwise as _tf_bitwise
        x = _tensor(x)
        # A Python int count takes x's dtype (Keras keeps it weak); a tensor promotes.
        if isinstance(y, numbers.Integral):
            y = _C.scalar_operand(y, x, keras_name, True)
        else:
            y = _tensor(y)
        common = _C.result_type(x, y)
        x, y = _C.cast(x, common), _C.cast(y, common)
        if y._dtype_name not in INTEGER_NAMES:
            return _C.bitwise(op, x, y)  # the kernel's frontend refuses it with the dtype named
        return _C.bitwise(op, x, _tf_bitwise.clamped_shift_counts(y))
    fn.__name__ = fn.__qualname__ = keras_name
    fn.__doc__ = (f"``keras.ops.{keras_name}``: integer x shifted by y bits (counts clamped to "
                  f"[0, bits - 1], as TensorFlow).")
    return fn


bitwise_and = _bitwise("bitwise_and", "and")
bitwise_or = _bitwise("bitwise_or", "or")
bitwise_xor = _bitwise("bitwise_xor", "xor")
bitwise_left_shift = left_shift = _shift("bitwise_left_shift", "left_shift")
bitwise_right_shift = right_shift = _shift("bitwise_right_shift", "right_shift")


def bitwise_invert(x):
    """``keras.ops.bitwise_invert`` (and ``bitwise_not``): every bit flipped."""
    return _C.bitwise_not(_tensor(x))


bitwise_not = bitwise_invert


def unique(x, sorted=True, return_index=False, return_inverse=False,  # noqa: A002
           return_counts=False, axis=None, size=None, fill_value=None):
    """``keras.ops.unique`` as its TensorFlow backend answers: distinct entries (or slices
    along ``axis``) ascending, or in order of first appearance with sorted=False; int32
    index/inverse/counts; ``size`` truncates or pads (values with fill_value, indices with 1,
    counts with 0)."""
    from .. import _unique
    x = _tensor(x)
    if axis is not None:
        axis = int(axis) % builtins.max(x.ndim, 1)
    groups = _unique.unique(x, axis, first_appearance=not sorted)
    y, first, counts = groups.values, groups.first, groups.counts
    inverse = groups.inverse if axis is not None else _C.reshape(groups.inverse, list(x.shape))
    if size is not None:
        along = 0 if axis is None else axis
        found = y.shape[along]
        keep = builtins.min(found, int(size))
        pad = int(size) - keep
        y = _C.slice(y, [(0, keep if d == along else n, 1) for d, n in enumerate(y.shape)])
        first, counts = (_C.slice(t, [(0, keep, 1)]) for t in (first, counts))
        if pad:
            shape = [pad if d == along else n for d, n in enumerate(y.shape)]
            filler = _C.tensor_full(shape, 0.0 if fill_value is None else float(fill_value),
                                    y._dtype_name, y._device_name)
            y = _C.concat([y, filler], along)
            first = _C.concat([first, _C.tensor_full([pad], 1.0, "int64", y._device_name)], 0)
            counts = _C.concat([counts, _C.tensor_full([pad], 0.0, "int64", y._device_name)], 0)
    results = [y] + [_C.cast(first, "int32")] * bool(return_index) + \
        [_C.cast(inverse, "int32")] * bool(return_inverse) + \
        [_C.cast(counts, "int32")] * bool(return_counts)
    return tuple(results) if len(results) > 1 else results[0]


def scatter(indices, values, shape):
    """``keras.ops.scatter``: zeros of ``shape`` with ``values`` added at ``indices``
    (``tf.scatter_nd``, as Keras's TensorFlow backend)."""
    from .. import _tf_index_ops
    return _tf_index_ops.scatter_nd(indices, values, shape)


def scatter_update(inputs, indices, updates, reduction=None):
    """``keras.ops.scatter_update``: ``inputs`` with ``updates`` written at ``indices``
    (reduction None: replaced; 'add', 'max', 'min': combined with the entry there)."""
    from .. import _tf_index_ops as ops
    functions = {None: ops.tensor_scatter_nd_update, "add": ops.tensor_scatter_nd_add,
                 "max": ops.tensor_scatter_nd_max, "min": ops.tensor_scatter_nd_min}
    if reduction not in functions:
        raise ValueError(f"Unsupported reduction: {reduction} (gpuaccel has None, 'add', 'max' "
                         f"and 'min'; 'mul' is not there yet)")
    x = _tensor(inputs)
    u = updates if isinstance(updates, Tensor) else _convert_to_tensor(np.asarray(updates),
                                                                       dtype=x._dtype_name)
    return functions[reduction](x, indices, u)


# Names that need a kernel gpuaccel lacks, with what to do meanwhile.
_ON_THE_HOST = "a computation on keras.ops.convert_to_numpy(x) with NumPy"
_NEEDS_A_KERNEL = {
    "argpartition": f"{_ON_THE_HOST} (np.argpartition); sort/argsort give a full order",
    **{name: "np.linalg on keras.ops.convert_to_numpy(x) (there is no linear-algebra kernel "
             "yet)" for name in ("cholesky_inverse", "eig", "lu_factor")},
}


# keras.ops.nn / .numpy / .linalg: the same functions, grouped as Keras groups them.
nn = _ops_groups.OpsGroup(__name__ + ".nn", _ops_groups.NN_NAMES, _sys.modules[__name__])
numpy = _ops_groups.OpsGroup(__name__ + ".numpy", _ops_groups.NUMPY_NAMES, _sys.modules[__name__])
linalg = _ops_groups.OpsGroup(__name__ + ".linalg", _ops_groups.LINALG_NAMES,
                              _sys.modules[__name__])


def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "keras.ops", _NEEDS_A_KERNEL)(name)
