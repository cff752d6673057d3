"""``tf.math`` names (also exported at the top level, as TF and PyTorch do) for the element-wise
and reduction ops, with TensorFlow's argument names; PyTorch's ``dim=``/``keepdim=`` are accepted
too. Inputs may be tensors, NumPy arrays, lists or numbers; two-operand functions promote
their operands as the operators do (``_promotion.py``, docs/ops.md "Type promotion").

Composite ops (``log1p``, ``softplus``, ``reduce_variance``, ``reduce_logsumexp``...) are written
with recorded C++ ops, so they differentiate like the primitives.
"""

import numpy as np

from . import _C, _row_scatter, errors
from ._int_range import check_int
from . import _unsupported
from ._convert import as_tensors, convert_to_tensor
from ._tensor import _dtype_name
from .dtypes import INTEGER_NAMES
from ._tf_sort import top_k


__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_std",
           "reduce_variance", "reduce_logsumexp", "reduce_any", "reduce_all", "argmax", "argmin",
           "exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "negative", "sigmoid",
           "tanh", "relu", "log1p", "expm1", "softplus", "sign", "add", "subtract", "multiply",
           "divide", "truediv", "pow", "maximum", "minimum", "squared_difference", "equal",
           "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
           "logical_or", "logical_not", "mul", "sub", "div", "true_divide", "is_nan",
           "is_finite", "is_inf", "add_n", "count_nonzero",
           "l2_normalize", "allclose", "isclose", "sinh", "cosh", "asinh", "acosh", "atanh",
           "floor", "ceil", "round", "rint", "trunc", "floordiv", "floormod", "mod",
           "truncatediv", "truncatemod", "top_k", "sin", "cos", "tan", "asin",
           "acos", "atan", "atan2",
           "divide_no_nan", "reciprocal_no_nan", "xlogy", "xlog1py", "xdivy", "logical_xor",
           "log_sigmoid", "softsign", "softmax", "log_softmax", "erf", "erfc", "cumsum",
           "cumprod", "cumulative_logsumexp", "reduce_euclidean_norm", "scalar_mul",
           "zero_fraction", "accumulate_n", "is_non_decreasing", "is_strictly_increasing",
           "polyval", "in_top_k", "confusion_matrix", "bincount", "invert_permutation",
           "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
           "segment_sum", "segment_mean", "logaddexp", "multiply_no_nan", "unsorted_segment_max",
           "unsorted_segment_min", "segment_max", "segment_min", "unsorted_segment_prod",
           "segment_prod", "erfinv", "ndtri"]


def _axes(axis, dim):
    axis = dim if dim is not None else axis
    if axis is None:
        return None
    # Checked (and named in errors) by the binding's argument conversion.
    return list(axis) if isinstance(axis, (list, tuple)) else axis


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None, dim=None, keepdim=None):
        x = convert_to_tensor(input_tensor)
        out = _C.reduce(op, x, _axes(axis, dim), bool(keepdim if keepdim is not None else keepdims))
        if op == "sum" and x._dtype_name in INTEGER_NAMES:
            # TF sums in the input's dtype, wrapping: the exact int64 sum narrowed is the same
            # value (wrap-around is arithmetic modulo 2^bits, whatever the order of the adds)
            out = _C.cast(out, x._dtype_name)
        return out
    reduce.__name__ = f"reduce_{op}"
    reduce.__doc__ = f"``tf.math.reduce_{op}(input_tensor, axis=None, keepdims=False)``."
    return reduce


reduce_sum = _reduce("sum")
reduce_mean = _reduce("mean")
reduce_max = _reduce("max")
reduce_min = _reduce("min")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance (TF's ``reduce_variance``: divides by N)."""
    x = convert_to_tensor(input_tensor)
    axes = _axes(axis, None)
    mean = _C.reduce("mean", x, axes, True)
    return _C.reduce("mean", _C.unary("square", _C.binary("sub", x, mean)), axes, bool(keepdims))


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    return _C.unary("sqrt", reduce_variance(input_tensor, axis, keepdims))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) computed after subtracting the maximum, so large values do not overflow.
    An infinite maximum is clamped to the largest finite value first (TF uses 0 there), so a
    slice of -inf gives -inf and one holding +inf gives +inf rather than inf - inf = NaN."""
    x = convert_to_tensor(input_tensor)
    axes = _axes(axis, None)
    peak = _C.detach(_C.reduce("max", x, axes, True))
    largest = 65504.0 if x._dtype_name == "float16" else 3.0e38
    peak = _C.binary("minimum", _C.binary("maximum", peak, _C.scalar_like(-largest, peak)),
                     _C.scalar_like(largest, peak))
    total = _C.reduce("sum", _C.unary("exp", _C.binary("sub", x, peak)), axes, True)
    out = _C.binary("add", _C.unary("log", total), peak)
    if keepdims:
        return out
    if axes is None:
        return _C.reshape(out, [])
    return _C.squeeze(out, axes if isinstance(axes, list) else [axes])


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product of entries (no gradient: computed on the host in float64, then cast back; integers
    in int64, wrapping as TF and PyTorch do, then narrowed to their dtype, which wraps again)."""
    x = convert_to_tensor(input_tensor)
    axes = _axes(axis, None)
    integer = x._dtype_name in INTEGER_NAMES
    values = np.prod(x.detach().numpy().astype(np.int64 if integer else np.float64),
                     axis=None if axes is None else tuple(axes) if isinstance(axes, list) else axes,
                     keepdims=bool(keepdims))
    values = np.asarray(values)
    if integer:
        values = values.astype(x.dtype.as_numpy_dtype)  # modulo 2^bits, as the wrapped product
    return convert_to_tensor(values, dtype=x.dtype)


def _bool_reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        x = _C.cast(convert_to_tensor(input_tensor), "float32")
        return _C.cast(_C.reduce(op, x, _axes(axis, None), bool(keepdims)), "bool")
    reduce.__name__ = "reduce_any" if op == "max" else "reduce_all"
    return reduce


reduce_any = _bool_reduce("max")
reduce_all = _bool_reduce("min")


def _tf_arg_extreme(op):
    def fn(input, axis=None, output_type="int64", name=None, dim=None, keepdim=None):
        if dim is not None or keepdim is not None:
            raise _unsupported.ambiguous(
                op, f"tf.{op}(input, axis=None) (axis 0 by default)",
                f"torch.{op}(input, dim=None, keepdim=False) (the flattened index by default)")
        out = _C.reduce(op, convert_to_tensor(input), 0 if axis is None else check_int(
            axis, "axis"), False)
        return out if output_type in ("int64", None) else _C.cast(out, _dtype_name(output_type))
    fn.__name__ = op
    fn.__doc__ = (f"``tf.math.{op}(input, axis=None, output_type=tf.int64)``: axis None means "
                  f"0, as TF (``gpuaccel.torch.{op}`` has torch's flattened default).")
    return fn


argmax = _tf_arg_extreme("argmax")
argmin = _tf_arg_extreme("argmin")


def _unary(op, doc, convert=convert_to_tensor):
    """The element-wise kernel ``op`` (cpp/kernels/unary_functors.h) on ``convert(x)``."""
    def fn(x, name=None):
        return _C.unary(op, convert(x))
    fn.__name__ = op
    fn.__doc__ = doc
    return fn


exp = _unary("exp", "e to the x, element-wise.")
log = _unary("log", "Natural logarithm, element-wise.")
sqrt = _unary("sqrt", "Square root, element-wise.")
rsqrt = _unary("rsqrt", "1 / sqrt(x), element-wise.")
abs = _unary("abs", "Absolute value, element-wise.")  # noqa: A001
square = _unary("square", "x * x, element-wise.")
reciprocal = _unary("reciprocal", "1 / x, element-wise.")
negative = _unary("neg", "-x, element-wise.")
sigmoid = _unary("sigmoid", "1 / (1 + exp(-x)), element-wise (``tf.sigmoid``/``torch.sigmoid``).")
tanh = _unary("tanh", "Hyperbolic tangent, element-wise.")
relu = _unary("relu", "max(x, 0), element-wise.")


def log1p(x, name=None):
    """log(1 + x) (composed, so it loses precision for |x| below about 1e-7)."""
    x = convert_to_tensor(x)
    return _C.unary("log", _C.binary("add", x, _C.scalar_like(1.0, x)))


def expm1(x, name=None):
    x = convert_to_tensor(x)
    return _C.binary("sub", _C.unary("exp", x), _C.scalar_like(1.0, x))


def softplus(features, name=None):
    """log(1 + exp(x)) written as relu(x) + log(1 + exp(-|x|)), which never overflows."""
    x = convert_to_tensor(features)
    return _C.binary("add", _C.unary("relu", x),
                     log1p(_C.unary("exp", _C.unary("neg", _C.unary("abs", x)))))


def sign(x, name=None):
    """-1, 0 or 1, and NaN for NaN (no gradient, as TF: the derivative is 0 almost
    everywhere)."""
    x = _C.detach(convert_to_tensor(x))
    positive = _C.cast(_C.binary("greater", x, _C.scalar_like(0.0, x)), x._dtype_name)
    negative_ = _C.cast(_C.binary("less", x, _C.scalar_like(0.0, x)), x._dtype_name)
    signs = _C.binary("sub", positive, negative_)
    if not x.dtype.is_floating_point:
        return signs
    # + (c - c) with c = clip(x, -1, 1): 0 for every number (inf included), NaN for NaN, as
    # maximum/minimum propagate NaN (docs/ops.md, "NaN and infinity").
    clipped = _C.binary("minimum", _C.binary("maximum", x, _C.scalar_like(-1.0, x)),
                        _C.scalar_like(1.0, x))
    return _C.binary("add", signs, _C.binary("sub", clipped, clipped))


def _into(result, out):
    """torch's ``out=``: the result written into ``out``'s memory (which is returned)."""
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"out= has shape {list(out.shape)}, the result has "
                           f"{list(result.shape)}")
    _C.copy_into(_C.detach(result) if result._dtype_name == out._dtype_name else
                 _C.cast(_C.detach(result), out._dtype_name), out)
    return out


def _binary(op, doc):
    def fn(x, y, name=None, *, out=None):
        return _into(_C.binary(op, *as_tensors(x, y)), out)
    fn.__name__ = op
    fn.__doc__ = doc
    return fn


add = _binary("add", "x + y with broadcasting.")
subtract = _binary("sub", "x - y with broadcasting.")
multiply = _binary("mul", "x * y with broadcasting.")
divide = _binary("div", "x / y with broadcasting.")
truediv = divide
mul, sub, div, true_divide = multiply, subtract, divide, divide  # torch's names
pow = _binary("pow", "x ** y with broadcasting.")  # noqa: A001
maximum = _binary("maximum", "Element-wise maximum (ties send the gradient to x).")
minimum = _binary("minimum", "Element-wise minimum (ties send the gradient to x).")
equal = _binary("equal", "x == y as a bool tensor.")
greater = _binary("greater", "x > y as a bool tensor.")
less = _binary("less", "x < y as a bool tensor.")


def squared_difference(x, y, name=None):
    return _C.unary("square", _C.binary("sub", *as_tensors(x, y)))


def logical_not(x, name=None):
    x = _C.cast(convert_to_tensor(x), "float32")
    return _C.binary("equal", x, _C.scalar_like(0.0, x))


def not_equal(x, y, name=None):
    return logical_not(equal(x, y))


def greater_equal(x, y, name=None):
    return logical_not(less(x, y))


def less_equal(x, y, name=None):
    return logical_not(greater(x, y))


def logical_and(x, y, name=None):
    a, b = (_C.cast(convert_to_tensor(v), "float32") for v in (x, y))
    return _C.cast(_C.binary("mul", a, b), "bool")


def logical_or(x, y, name=None):
    a, b = (_C.cast(convert_to_tensor(v), "float32") for v in (x, y))
    return _C.cast(_C.binary("maximum", a, b), "bool")


def is_nan(x, name=None):
    x = convert_to_tensor(x)
    return logical_not(equal(x, x))


def is_finite(x, name=None):
    """True where x is neither NaN nor ±inf (x - x is 0 only for finite x)."""
    x = _C.detach(convert_to_tensor(x))
    return _C.binary("equal", _C.binary("sub", x, x), _C.scalar_like(0.0, x))


def is_inf(x, name=None):
    return logical_and(logical_not(is_finite(x)), logical_not(is_nan(x)))


def add_n(inputs, name=None):
    """The sum of a list of same-shaped tensors."""
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    total = convert_to_tensor(inputs[0])
    for t in inputs[1:]:
        total = _C.binary("add", *as_tensors(total, t))
    return total


def count_nonzero(input, axis=None, keepdims=False, dtype="int64", name=None):
    x = _C.cast(logical_not(input), "float32")
    nonzero = _C.binary("sub", _C.scalar_like(1.0, x), x)
    return _C.cast(_C.reduce("sum", nonzero, _axes(axis, None), bool(keepdims)), str(dtype))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x²), epsilon)) along ``axis``."""
    x = convert_to_tensor(x)
    norm_sq = _C.reduce("sum", _C.unary("square", x), _axes(axis, None), True)
    return _C.binary("mul", x, _C.unary("rsqrt", _C.binary(
        "maximum", norm_sq, _C.scalar_like(float(epsilon), norm_sq))))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``torch.isclose``: |input - other| <= atol + rtol * |other|, element-wise (bool)."""
    a, b = as_tensors(input, other)
    return convert_to_tensor(np.isclose(_host(a), _host(b), rtol=rtol, atol=atol,
                                        equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``torch.allclose``: a Python bool, True when every pair is close (NumPy's rule)."""
    a, b = as_tensors(input, other)
    return bool(np.allclose(_host(a), _host(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def _host(t):
    return _C.detach(t)._numpy().astype(np.float64)


# ---- composites: more tf.math names, each built from the recorded ops above ----

def _c(value, like):
    return _C.scalar_like(float(value), like)


def _float(x):
    """x as a tensor of a floating dtype (integers and bools become float32, as these ops
    need a float kernel)."""
    x = convert_to_tensor(x)
    return x if x.dtype.is_floating_point else _C.cast(x, "float32")


def _mask(x, like):
    """A bool tensor as 0/1 in ``like``'s dtype (no gradient)."""
    return _C.cast(_C.detach(x), like._dtype_name)


def _select(mask, a, b):
    """tf.where(mask, a, b) for a 0/1 ``mask`` (the select kernel: the branch not taken never
    shows)."""
    return _C.where(mask, a, b)


def multiply_no_nan(x, y, name=None):
    """``tf.math.multiply_no_nan``: x * y, and 0 where y is 0 even if x is inf or NaN."""
    a, b = as_tensors(x, y)
    zero = _C.binary("equal", b, _c(0.0, b))
    product = _C.binary("mul", a, b)
    return _C.where(zero, _c(0.0, product), product)


# The trigonometric and hyperbolic functions and erf: kernels (the C library's functions,
# exact at any |x|, NaN outside the domain as TF), differentiated by their kernels' gradients.
# Integers and bools become float32, as TF's and torch's float-only functions take them.
sin = _unary("sin", "``tf.math.sin(x)``.", _float)
cos = _unary("cos", "``tf.math.cos(x)``.", _float)
tan = _unary("tan", "``tf.math.tan(x)``.", _float)
asin = _unary("asin", "``tf.math.asin(x)``: NaN outside [-1, 1].", _float)
acos = _unary("acos", "``tf.math.acos(x)``: NaN outside [-1, 1].", _float)
atan = _unary("atan", "``tf.math.atan(x)``.", _float)
sinh = _unary("sinh", "``tf.math.sinh(x)``.", _float)
cosh = _unary("cosh", "``tf.math.cosh(x)``.", _float)
asinh = _unary("asinh", "``tf.math.asinh(x)``.", _float)
acosh = _unary("acosh", "``tf.math.acosh(x)``: NaN below 1.", _float)
atanh = _unary("atanh", "``tf.math.atanh(x)``: ±inf at ±1, NaN beyond.", _float)
erf = _unary("erf", "``tf.math.erf(x)``.", _float)


def _sinc(x):
    """sin(πx) / (πx), and 1 at 0 (where selects it, so 0/0 never shows): torch.sinc and
    keras.ops.sinc (tf.math has no sinc)."""
    x = _float(x)
    zero = _C.binary("equal", x, _c(0.0, x))
    px = _C.binary("mul", _C.where(zero, _c(1.0, x), x), _c(np.pi, x))
    return _C.where(zero, _c(1.0, x), _C.binary("div", sin(px), px))


def atan2(y, x, name=None):
    """``tf.math.atan2(y, x)``: the angle of the point (x, y), in [-π, π] (integers promote
    to float32)."""
    a, b = as_tensors(y, x)
    return _C.binary("atan2", a, b)


# Floats at least this large in magnitude are already integers (the mantissa has no fraction
# bits left), so rounding leaves them alone; below it the int32 (float64: int64) cast is exact.
_INTEGRAL_FROM = {"float32": 2.0 ** 23, "float16": 2.0 ** 10, "bfloat16": 2.0 ** 7,
                  "float64": 2.0 ** 52}


def trunc(x, name=None):
    """Rounds toward zero (no gradient: its derivative is 0 almost everywhere). NaN and ±inf
    come back unchanged."""
    x = _C.detach(convert_to_tensor(x))
    if not x.dtype.is_floating_point:
        return x
    limit = _INTEGRAL_FROM[x._dtype_name]
    small = _mask(_C.binary("less", _C.unary("abs", x), _c(limit, x)), x)
    clipped = _C.binary("minimum", _C.binary("maximum", x, _c(-limit, x)), _c(limit, x))
    integer = "int64" if x._dtype_name == "float64" else "int32"  # holds every |x| < limit
    truncated = _C.cast(_C.cast(clipped, integer), x._dtype_name)
    # where(|x| < limit, trunc(x), x): clipped is finite, so 0 * truncated never spreads NaN.
    return _C.binary("add", _C.binary("mul", small, truncated),
                     _C.binary("mul", _C.binary("sub", _c(1.0, small), small), x))


def floor(x, name=None):
    """The largest integer not above x (no gradient, as TF's derivative is 0)."""
    t = trunc(x)
    if not t.dtype.is_floating_point:
        return t
    return _C.binary("sub", t, _mask(_C.binary("less", convert_to_tensor(x), t), t))


def ceil(x, name=None):
    t = trunc(x)
    if not t.dtype.is_floating_point:
        return t
    return _C.binary("add", t, _mask(_C.binary("greater", convert_to_tensor(x), t), t))


def round(x, name=None):  # noqa: A001 -- TF's name
    """Rounds half to even (banker's rounding), as ``tf.math.round`` and NumPy."""
    original = _C.detach(convert_to_tensor(x))
    if not original.dtype.is_floating_point:
        return original
    limit = _INTEGRAL_FROM[original._dtype_name]
    small = _mask(_C.binary("less", _C.unary("abs", original), _c(limit, original)), original)
    x = _C.binary("minimum", _C.binary("maximum", original, _c(-limit, original)),
                  _c(limit, original))  # finite, so the arithmetic below never makes NaN
    low = floor(x)
    fraction = _C.binary("sub", x, low)
    half = _c(0.5, x)
    odd = _C.binary("sub", low, _C.binary("mul", floor(_C.binary("mul", low, half)),
                                          _c(2.0, x)))  # low mod 2: 1 where low is odd
    up = _C.binary("add", _mask(_C.binary("greater", fraction, half), x),
                   _C.binary("mul", _mask(_C.binary("equal", fraction, half), x), odd))
    return _select(small, _C.binary("add", low, up), original)  # ±inf, NaN: unchanged


rint = round


def _check_integer_divisor(a, b):
    if not a.dtype.is_floating_point and b.numel() and not bool(reduce_all(b)):
        raise errors.InvalidArgumentError("Integer division by zero: y has a 0 entry")


def floordiv(x, y, name=None):
    """floor(x / y); integers come back integers (exact while |x / y| < 2^24), and an integer
    division by zero is an InvalidArgumentError, as TF (a host read of whether y has a 0)."""
    a, b = as_tensors(x, y)
    _check_integer_divisor(a, b)
    quotient = floor(_C.binary("div", a, b))
    return quotient if a.dtype.is_floating_point else _C.cast(quotient, a._dtype_name)


def floormod(x, y, name=None):
    """x - floor(x / y) * y: the result has the sign of y, as TF and Python's %."""
    a, b = as_tensors(x, y)
    return _C.binary("sub", a, _C.binary("mul", floordiv(a, b), b))


mod = floormod


def truncatediv(x, y, name=None):
    """x / y rounded toward zero (C's integer division); integers come back integers, and an
    integer division by zero is an InvalidArgumentError, as TF."""
    a, b = as_tensors(x, y)
    _check_integer_divisor(a, b)
    quotient = trunc(_C.binary("div", a, b))
    return quotient if a.dtype.is_floating_point else _C.cast(quotient, a._dtype_name)


def truncatemod(x, y, name=None):
    """x - truncatediv(x, y) * y: the result has the sign of x, as C's fmod and %."""
    a, b = as_tensors(x, y)
    return _C.binary("sub", a, _C.binary("mul", truncatediv(a, b), b))


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (even for x = 0 or inf)."""
    a, b = as_tensors(x, y)
    zero = _C.binary("equal", b, _c(0.0, b))
    quotient = _C.binary("div", a, _C.where(zero, _c(1.0, b), b))  # y = 1 where y was 0
    return _C.where(zero, _c(0.0, quotient), quotient)


def reciprocal_no_nan(x, name=None):
    x = convert_to_tensor(x)
    return divide_no_nan(_c(1.0, x), x)


def _where_x_is_zero(x, y, fn, safe_y):
    """fn(x, y), and 0 where x is 0 (y replaced there by ``safe_y`` so fn stays finite); the
    mask also zeroes the gradient there, as TF's."""
    a, b = as_tensors(x, y)
    zero = _mask(_C.binary("equal", a, _c(0.0, a)), a)
    safe = _select(zero, _c(safe_y, b), b)
    return _C.binary("mul", fn(a, safe), _C.binary("sub", _c(1.0, zero), zero))


def xlogy(x, y, name=None):
    """x * log(y), 0 where x is 0."""
    return _where_x_is_zero(x, y, lambda a, b: _C.binary("mul", a, _C.unary("log", b)), 1.0)


def xlog1py(x, y, name=None):
    """x * log(1 + y), 0 where x is 0."""
    return _where_x_is_zero(x, y, lambda a, b: _C.binary("mul", a, log1p(b)), 0.0)


def xdivy(x, y, name=None):
    """x / y, 0 where x is 0."""
    return _where_x_is_zero(x, y, lambda a, b: _C.binary("div", a, b), 1.0)


def logical_xor(x, y, name=None):
    a, b = (_C.cast(convert_to_tensor(v), "float32") for v in (x, y))
    return _C.binary("greater", _C.unary("abs", _C.binary("sub", a, b)), _c(0.0, a))


def log_sigmoid(x, name=None):
    """-softplus(-x): never overflows."""
    return _C.unary("neg", softplus(_C.unary("neg", _float(x))))


def softsign(features, name=None):
    x = _float(features)
    return _C.binary("div", x, _C.binary("add", _c(1.0, x), _C.unary("abs", x)))


def softmax(logits, axis=None, name=None):
    return _C.softmax(convert_to_tensor(logits), -1 if axis is None else check_int(axis, "axis"),
                      False)


def log_softmax(logits, axis=None, name=None):
    return _C.softmax(convert_to_tensor(logits), -1 if axis is None else check_int(axis, "axis"),
                      True)


def erfc(x, name=None):
    """1 - erf(x) (no erfc kernel: absolute float32 accuracy, 0 past x ~ 4)."""
    x = _float(x)
    return _C.binary("sub", _c(1.0, x), erf(x))


def logaddexp(x, y):
    """log(exp(x) + exp(y)) = max(x, y) + log1p(exp(-|x - y|)), which never overflows."""
    a, b = as_tensors(x, y)
    return _C.binary("add", _C.binary("maximum", a, b), log1p(_C.unary("exp", _C.unary(
        "neg", _C.unary("abs", _C.binary("sub", a, b))))))


def _axis_index(axis, ndim):
    axis = check_int(axis, "axis")
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {ndim}; use an "
                         f"axis in [{-ndim}, {ndim})")
    return axis % max(ndim, 1)


def _along(x, axis, start, stop):
    return _C.slice(x, [(0, n, 1) if d != axis else (start, stop, 1)
                        for d, n in enumerate(x.shape)])


def _scan(x, axis, combine, identity, exclusive, reverse):
    """Inclusive prefix scan along ``axis`` by doubling (Hillis & Steele): log2(n) steps of
    ``combine(x[i], x[i - d])``, each a slice, a combine and a concat, so it differentiates and
    keeps inf/NaN where they are (a matmul with a triangle of ones would spread 0 * inf)."""
    n = x.shape[axis]

    def shifted_join(head, body):
        parts = [body, head] if reverse else [head, body]
        return _C.concat(parts, axis)

    if exclusive and n:
        pad_shape = list(x.shape)
        pad_shape[axis] = 1
        pad = _C.tensor_full(pad_shape, float(identity), x._dtype_name, x._device_name)
        x = shifted_join(pad, _along(x, axis, 0, n - 1) if not reverse else
                         _along(x, axis, 1, n))
    d = 1
    while d < n:
        if reverse:
            head, rest, partner = (_along(x, axis, n - d, n), _along(x, axis, 0, n - d),
                                   _along(x, axis, d, n))
        else:
            head, rest, partner = (_along(x, axis, 0, d), _along(x, axis, d, n),
                                   _along(x, axis, 0, n - d))
        x = shifted_join(head, combine(rest, partner))
        d *= 2
    return x


def _scan_op(name, combine, identity):
    def fn(x, axis=0, exclusive=False, reverse=False, name=None):
        t = convert_to_tensor(x)
        if t.ndim == 0:
            t = _C.reshape(t, [1])
        return _scan(t, _axis_index(axis, t.ndim), combine, identity, exclusive, reverse)
    fn.__name__ = name
    fn.__doc__ = (f"``tf.math.{name}(x, axis=0, exclusive=False, reverse=False)``: the running "
                  f"{name[3:]} along ``axis``.")
    return fn


cumsum = _scan_op("cumsum", lambda a, b: _C.binary("add", a, b), 0.0)
cumprod = _scan_op("cumprod", lambda a, b: _C.binary("mul", a, b), 1.0)
cumulative_logsumexp = _scan_op("cumulative_logsumexp", logaddexp, -np.inf)
cumulative_logsumexp.__doc__ = ("``tf.math.cumulative_logsumexp(x, axis=0, exclusive=False, "
                                "reverse=False)``: log(cumsum(exp(x))) without overflow.")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    x = convert_to_tensor(input_tensor)
    return _C.unary("sqrt", _C.reduce("sum", _C.unary("square", x), _axes(axis, None),
                                      bool(keepdims)))


def scalar_mul(scalar, x, name=None):
    return multiply(scalar, x)


def zero_fraction(value, name=None):
    """The fraction of entries equal to 0, as float32."""
    x = convert_to_tensor(value)
    return _C.reduce("mean", _C.cast(logical_not(x), "float32"), None, False)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    return add_n(inputs)


def _neighbours(x, name):
    x = _C.reshape(convert_to_tensor(x), [-1])
    n = x.shape[0]
    return _along(x, 0, 1, n), _along(x, 0, 0, max(n - 1, 0))


def is_non_decreasing(x, name=None):
    later, earlier = _neighbours(x, "is_non_decreasing")
    return reduce_all(greater_equal(later, earlier))


def is_strictly_increasing(x, name=None):
    later, earlier = _neighbours(x, "is_strictly_increasing")
    return reduce_all(greater(later, earlier))


def polyval(coeffs, x, name=None):
    """coeffs[0] x^(n-1) + ... + coeffs[n-1], by Horner's rule (``coeffs`` a list)."""
    if not isinstance(coeffs, (list, tuple)):
        raise TypeError(f"coeffs must be a list of tensors or numbers, got "
                        f"{type(coeffs).__name__}")
    x = convert_to_tensor(x)
    if not coeffs:
        return _C.binary("mul", x, _c(0.0, x))
    total = convert_to_tensor(coeffs[0])
    for c in coeffs[1:]:
        total = add(multiply(total, x), c)
    return _C.binary("add", total, _C.binary("mul", x, _c(0.0, x))) if total.shape != x.shape \
        else total


def in_top_k(targets, predictions, k, name=None):
    """Whether ``predictions[i, targets[i]]`` is among the ``k`` largest of row i: fewer than k
    entries are strictly larger (so ties at the boundary count as in, as TF)."""
    scores = convert_to_tensor(predictions)
    if scores.ndim != 2:
        raise ValueError(f"predictions must be a [batch, classes] matrix, got shape "
                         f"{list(scores.shape)}")
    picks = _C.one_hot(_C.contiguous(_C.cast(convert_to_tensor(targets), "int64")),
                       scores.shape[1], scores._dtype_name)
    target_score = _C.reduce("sum", _C.binary("mul", picks, scores), [1], True)
    larger = _C.reduce("sum", _C.cast(_C.binary("greater", scores, target_score), "float32"),
                       [1], False)
    return _C.binary("less", larger, _C.scalar_like(float(check_int(k, "k")), larger))


def _counts_dtype(dtype):
    return _dtype_name(dtype) if dtype is not None else "int32"


def _class_count(labels, num_classes):
    if num_classes is not None:
        return check_int(num_classes, "num_classes", 1)
    values = labels.numpy()
    return int(values.max()) + 1 if values.size else 0


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype="int32",
                     name=None):
    """counts[i, j]: how many (weighted) samples of label i were predicted j."""
    truth = _C.reshape(_C.cast(convert_to_tensor(labels), "int64"), [-1])
    guess = _C.reshape(_C.cast(convert_to_tensor(predictions), "int64"), [-1])
    n = max(_class_count(truth, num_classes), _class_count(guess, num_classes))
    # Each sample's cell as one id, counted by the row scatter in float64 (exact counts, memory
    # samples + n², not samples x n); a label or prediction outside [0, n) counts nowhere.
    inside = _C.binary("mul", _in_range(truth, n), _in_range(guess, n))
    cell = _C.where(_C.cast(inside, "bool"),
                    _C.binary("add", _C.binary("mul", truth, _C.scalar_like(n, truth)), guess),
                    _C.scalar_like(-1, truth))
    amounts = (_C.tensor_full([truth.shape[0], 1], 1.0, "float64", truth._device_name)
               if weights is None else
               _C.reshape(_C.cast(convert_to_tensor(weights), "float64"), [-1, 1]))
    counts = _C.segment_sum_rows(_C.contiguous(amounts), cell, n * n)
    return _C.cast(_C.reshape(counts, [n, n]), _counts_dtype(dtype))


def _in_range(ids, n):
    """1 where 0 <= ids < n, else 0 (ids' dtype)."""
    return _C.binary("mul", _C.cast(_C.binary("greater", ids, _C.scalar_like(-1, ids)), ids._dtype_name),
                     _C.cast(_C.binary("less", ids, _C.scalar_like(n, ids)), ids._dtype_name))


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype="int32", name=None,
             axis=None):
    """How many times (or with ``weights``, how much weight) each value 0..n-1 occurs."""
    if axis is not None:
        raise NotImplementedError("bincount(axis=...) is not supported yet; use axis=None")
    values = _C.reshape(_C.cast(convert_to_tensor(arr), "int64"), [-1])
    n = _class_count(values, None)
    if minlength is not None:
        n = max(n, check_int(minlength, "minlength", 0))
    if maxlength is not None:
        n = min(n, check_int(maxlength, "maxlength", 0))
    # by the row scatter-add (memory len(values), not len(values) x n; values >= n count
    # nowhere), in float64: counts exact, weights summed in one fixed order
    if weights is not None:
        w = convert_to_tensor(weights)
        picks = _C.reshape(_C.cast(w, "float64"), [-1, 1])
        dtype = w._dtype_name
    else:
        picks = _C.tensor_full([int(values.shape[0]), 1], 1.0, "float64", values._device_name)
    totals = _C.segment_sum_rows(_C.contiguous(picks), _C.contiguous(values), n)
    return _C.cast(_C.reshape(totals, [n]), _counts_dtype(dtype))


def invert_permutation(x, name=None):
    """y[x[i]] = i, for a permutation x of 0..n-1."""
    p = convert_to_tensor(x)
    values = p.numpy()
    if values.ndim != 1 or sorted(values.tolist()) != list(range(values.size)):
        raise errors.InvalidArgumentError(f"invert_permutation needs a permutation of "
                                          f"0..n-1, got {values.tolist()}")
    return convert_to_tensor(np.argsort(values, kind="stable").astype(values.dtype))


def _segment_rows(x, segment_ids):
    """(rows (N, D), ids (N,), tail): ``x`` of shape ids.shape + tail as the (N, D) rows the
    row scatter kernels take, with one integer id per row."""
    ids = convert_to_tensor(segment_ids)
    if ids._dtype_name not in ("int32", "int64"):
        ids = _C.cast(ids, "int64")
    rows = int(np.prod(ids.shape, dtype=np.int64))
    tail = list(x.shape[ids.ndim:])
    flat = _C.reshape(x, [rows, int(np.prod(tail, dtype=np.int64))])
    return flat, _C.reshape(ids, [rows]), tail


def _segment_totals(data, segment_ids, num_segments):
    """(sums, counts) per segment (float data), by the row scatter-add kernel: ids outside
    [0, num_segments) count nowhere, as TF drops negative ones."""
    x = _float(data)
    flat, flat_ids, tail = _segment_rows(x, segment_ids)
    sums = _C.reshape(_C.segment_sum_rows(flat, flat_ids, num_segments), [num_segments] + tail)
    counts = _C.cast(_row_scatter.segment_counts(flat_ids, num_segments, x._device_name),
                     x._dtype_name)
    return sums, _C.reshape(counts, [num_segments] + [1] * len(tail))


def _segment_reduce(data, segment_ids, num_segments, reduction, empty_is_zero=False):
    """The sum, prod, max or min per segment in the data's dtype, on the row scatter (cost rows
    x width, whatever the number of segments): integer sums and products wrap as TF's. An
    empty segment holds 0 (sum), 1 (prod), or the dtype's lowest (max) / highest (min) value,
    as TF's unsorted ops; TF's sorted max/min give it 0 (``empty_is_zero``). Ids outside
    [0, num_segments) count nowhere."""
    x = convert_to_tensor(data)
    if x._dtype_name == "bool" and reduction in ("sum", "prod"):
        x = _C.cast(x, "float32")  # a count or an all, as a number
    flat, flat_ids, tail = _segment_rows(x, segment_ids)
    out = _row_scatter.segment_reduce(flat, flat_ids, num_segments, reduction)
    if empty_is_zero:
        filled = _C.binary("greater", _row_scatter.segment_counts(flat_ids, num_segments,
                                                                  x._device_name),
                           _C.tensor_full([], 0.0, "int32", x._device_name))
        out = _C.where(filled, out, _C.scalar_like(0, out))
    return _C.reshape(out, [num_segments] + tail)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Integers stay integers (wrapping as TF's)."""
    return _segment_reduce(data, segment_ids, check_int(num_segments, "num_segments", 0), "sum")


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """An empty segment holds 1; the gradient is each entry's segment-mates' product (zeros
    included), as TF's."""
    return _segment_reduce(data, segment_ids, check_int(num_segments, "num_segments", 0), "prod")


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    sums, counts = _segment_totals(data, segment_ids, check_int(num_segments, "num_segments", 0))
    return divide_no_nan(sums, counts)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    sums, counts = _segment_totals(data, segment_ids, check_int(num_segments, "num_segments", 0))
    return divide_no_nan(sums, _C.unary("sqrt", counts))


def _sorted_segments(segment_ids):
    values = convert_to_tensor(segment_ids).numpy()
    if values.size and (np.diff(values) < 0).any():
        raise errors.InvalidArgumentError("segment_ids must be sorted (non-decreasing); use "
                                          "unsorted_segment_* for unsorted ids")
    return int(values.max()) + 1 if values.size else 0


def segment_sum(data, segment_ids, name=None):
    return unsorted_segment_sum(data, segment_ids, _sorted_segments(segment_ids))


def segment_prod(data, segment_ids, name=None):
    return unsorted_segment_prod(data, segment_ids, _sorted_segments(segment_ids))


def segment_mean(data, segment_ids, name=None):
    return unsorted_segment_mean(data, segment_ids, _sorted_segments(segment_ids))


# The floating dtypes' lowest finite values (keras.ops' causal attention masks with them).
_LOWEST = {"float32": float(np.finfo(np.float32).min), "float16": float(np.finfo(np.float16).min),
           "bfloat16": -3.3895313892515355e38, "float64": float(np.finfo(np.float64).min)}


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Empty segments hold the dtype's lowest value, as TF."""
    return _segment_reduce(data, segment_ids, check_int(num_segments, "num_segments", 0), "max")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    return _segment_reduce(data, segment_ids, check_int(num_segments, "num_segments", 0), "min")


def segment_max(data, segment_ids, name=None):
    return _segment_reduce(data, segment_ids, _sorted_segments(segment_ids), "max", True)


def segment_min(data, segment_ids, name=None):
    return _segment_reduce(data, segment_ids, _sorted_segments(segment_ids), "min", True)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision: a
# polynomial in w = -log(1 - x²), one for the centre (w < 5) and one in sqrt(w) for the tails.
_ERFINV_CENTRE = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAILS = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients, w):
    p = _c(coefficients[0], w)
    for coefficient in coefficients[1:]:
        p = _C.binary("add", _C.binary("mul", p, w), _c(coefficient, w))
    return p


def erfinv(x, name=None):
    """The inverse of erf on (-1, 1) (±1 give NaN here, not ±inf)."""
    x = _float(x)
    w = _C.unary("neg", _C.unary("log", _C.binary("mul", _C.binary("sub", _c(1.0, x), x),
                                                   _C.binary("add", _c(1.0, x), x))))
    centre = _mask(_C.binary("less", w, _c(5.0, w)), w)
    # Each polynomial is evaluated where it stays finite: the centre one on min(w, 5), the
    # tail one on max(w, 5), so the blend of the two never multiplies 0 by inf.
    p_centre = _horner(_ERFINV_CENTRE, _C.binary("sub", _C.binary("minimum", w, _c(5.0, w)),
                                                 _c(2.5, w)))
    p_tails = _horner(_ERFINV_TAILS, _C.binary("sub", _C.unary("sqrt", _C.binary(
        "maximum", w, _c(5.0, w))), _c(3.0, w)))
    return _C.binary("mul", _select(centre, p_centre, p_tails), x)


def ndtri(x, name=None):
    """The standard normal quantile: sqrt(2) erfinv(2x - 1)."""
    x = _float(x)
    return _C.binary("mul", erfinv(_C.binary("sub", _C.binary("mul", x, _c(2.0, x)),
                                              _c(1.0, x))), _c(np.sqrt(2.0), x))


__getattr__ = _unsupported.module_getattr(__name__, "tf.math", {
    **{name: f"a computation on .numpy() (there is no {name} kernel yet)" for name in (
        "lgamma", "digamma", "igamma",
        "igammac", "betainc", "zeta", "polygamma", "bessel_i0", "bessel_i0e", "bessel_i1",
        "bessel_i1e")},
})
