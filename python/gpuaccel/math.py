"""``tf.math`` names for the element-wise and reduction ops (``tf.math.reduce_sum`` ...).

Inputs may be tensors, NumPy arrays, lists or numbers; two-operand functions promote their
operands as the operators do (``_promotion.py``, docs/ops.md "Type promotion")."""
from . import _C
from ._promotion import as_operands, as_tensor

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "argmin", "exp",
           "log", "sqrt", "abs", "square", "sigmoid", "tanh", "maximum", "minimum", "pow"]


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False):
        return _C.reduce(op, as_tensor(input_tensor, f"reduce_{op}", "input_tensor"), axis,
                         keepdims)
    reduce.__name__ = f"reduce_{op}"
    return reduce


reduce_sum = _reduce("sum")
reduce_mean = _reduce("mean")
reduce_max = _reduce("max")
reduce_min = _reduce("min")


def argmax(input, axis=0):
    """TF's default axis is 0 (torch's is the flattened tensor: ``t.argmax()``)."""
    return _C.reduce("argmax", as_tensor(input, "argmax", "input"), axis, False)


def argmin(input, axis=0):
    return _C.reduce("argmin", as_tensor(input, "argmin", "input"), axis, False)


def _unary(op):
    def fn(x):
        return _C.unary(op, as_tensor(x, op, "x"))
    fn.__name__ = op
    return fn


exp, log, sqrt, abs, square, sigmoid, tanh = (_unary(n) for n in (
    "exp", "log", "sqrt", "abs", "square", "sigmoid", "tanh"))


def _binary(op):
    def fn(x, y):
        return _C.binary(op, *as_operands(x, y, op))
    fn.__name__ = op
    return fn


maximum, minimum, pow = (_binary(n) for n in ("maximum", "minimum", "pow"))
