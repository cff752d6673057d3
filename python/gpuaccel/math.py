"""``tf.math`` names (also exported at the top level, as TF and PyTorch do) for the element-wise
and reduction ops, with TensorFlow's argument names; PyTorch's ``dim=``/``keepdim=`` are accepted
too. Inputs may be tensors, NumPy arrays, lists or numbers; two-operand functions promote
their operands as the operators do (``_promotion.py``, docs/ops.md "Type promotion").

Composite ops (``log1p``, ``softplus``, ``reduce_variance``, ``reduce_logsumexp``...) are written
with recorded C++ ops, so they differentiate like the primitives.
"""
import numpy as np

from . import _C
from ._int_range import check_int
from . import _unsupported
from ._convert import as_tensors, convert_to_tensor
from ._tensor import _dtype_name

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_std",
           "reduce_variance", "reduce_logsumexp", "reduce_any", "reduce_all", "argmax", "argmin",
           "exp", "log", "sqrt", "rsqrt", "abs", "square", "reciprocal", "negative", "sigmoid",
           "tanh", "relu", "log1p", "expm1", "softplus", "sign", "add", "subtract", "multiply",
           "divide", "truediv", "pow", "maximum", "minimum", "squared_difference", "equal",
           "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
           "logical_or", "logical_not", "mul", "sub", "div", "true_divide", "is_nan",
           "is_finite", "is_inf", "add_n", "count_nonzero",
           "l2_normalize", "allclose", "isclose"]


def _axes(axis, dim):
    axis = dim if dim is not None else axis
    if axis is None:
        return None
    # Checked (and named in errors) by the binding's argument conversion.
    return list(axis) if isinstance(axis, (list, tuple)) else axis


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None, dim=None, keepdim=None):
        x = convert_to_tensor(input_tensor)
        return _C.reduce(op, x, _axes(axis, dim), bool(keepdim if keepdim is not None else keepdims))
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
    """log(sum(exp(x))) computed after subtracting the maximum, so large values do not overflow."""
    x = convert_to_tensor(input_tensor)
    axes = _axes(axis, None)
    peak = _C.detach(_C.reduce("max", x, axes, True))
    total = _C.reduce("sum", _C.unary("exp", _C.binary("sub", x, peak)), axes, True)
    out = _C.binary("add", _C.unary("log", total), peak)
    if keepdims:
        return out
    if axes is None:
        return _C.reshape(out, [])
    return _C.squeeze(out, axes if isinstance(axes, list) else [axes])


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product of entries (no gradient: computed on the host in float64, then cast back)."""
    x = convert_to_tensor(input_tensor)
    axes = _axes(axis, None)
    values = np.prod(x.detach().numpy().astype(np.float64), axis=None if axes is None else tuple(
        axes) if isinstance(axes, list) else axes, keepdims=bool(keepdims))
    return convert_to_tensor(np.asarray(values), dtype=x.dtype)


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


def _unary(op, doc):
    def fn(x, name=None):
        return _C.unary(op, convert_to_tensor(x))
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
    """-1, 0 or 1 (no gradient, as TF: the derivative is 0 almost everywhere)."""
    x = _C.detach(convert_to_tensor(x))
    positive = _C.cast(_C.binary("greater", x, _C.scalar_like(0.0, x)), x._dtype_name)
    negative_ = _C.cast(_C.binary("less", x, _C.scalar_like(0.0, x)), x._dtype_name)
    return _C.binary("sub", positive, negative_)


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


__getattr__ = _unsupported.module_getattr(__name__, "tf.math", {
    "top_k": "argmax for k=1, or np.argsort on .numpy()",
    "cumsum": "a matmul with np.tril(np.ones((n, n))) as a constant",
    "sin": "a computation on .numpy() (there is no sin kernel yet)",
    "cos": "a computation on .numpy() (there is no cos kernel yet)",
    "floor": "gpuaccel.cast(x, 'int64') (truncates toward zero)",
    "round": "gpuaccel.cast(x + 0.5, 'int64') for non-negative values",
})
