"""``tf.math`` names for the element-wise and reduction ops (``tf.math.reduce_sum`` ...)."""
from . import _C

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "argmin", "exp",
           "log", "sqrt", "abs", "square", "sigmoid", "tanh", "maximum", "minimum", "pow"]


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False):
        return _C.reduce(op, input_tensor, axis, keepdims)
    reduce.__name__ = f"reduce_{op}"
    return reduce


reduce_sum = _reduce("sum")
reduce_mean = _reduce("mean")
reduce_max = _reduce("max")
reduce_min = _reduce("min")


def argmax(input, axis=0):
    """TF's default axis is 0 (torch's is the flattened tensor: ``t.argmax()``)."""
    return _C.reduce("argmax", input, axis, False)


def argmin(input, axis=0):
    return _C.reduce("argmin", input, axis, False)


def _unary(op):
    def fn(x):
        return _C.unary(op, x)
    fn.__name__ = op
    return fn


exp, log, sqrt, abs, square, sigmoid, tanh = (_unary(n) for n in (
    "exp", "log", "sqrt", "abs", "square", "sigmoid", "tanh"))


def maximum(x, y):
    return _C.binary("maximum", x, y)


def minimum(x, y):
    return _C.binary("minimum", x, y)


def pow(x, y):
    return _C.binary("pow", x, y)
