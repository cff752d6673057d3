"""sin, cos, tan, their inverses, atan2, sinc and erf for the PyTorch face, composed from the
element-wise ops because gpuaccel has no kernel for them: a range reduction and a polynomial
(Taylor series on a reduced interval), so autograd differentiates them like any other
composition. float32 accuracy: ~1e-7 absolute for |x| up to a few hundred (the reduction
x - 2π round(x / 2π) loses ~|x| * 1e-7), erf ~1.5e-7 absolute (Abramowitz & Stegun 7.1.26).
A kernel would be faster and exact at large |x|; these are for course-sized use.
"""
import math

from . import _C
from . import _array_ops
from ._convert import convert_to_tensor

_FLOATING = ("float32", "float16", "bfloat16")


def _float(x):
    x = convert_to_tensor(x)
    return x if x._dtype_name in _FLOATING else _C.cast(x, "float32")


def _series(x2, coefficients):
    """c0 + c1 x2 + c2 x2² + ... by Horner's rule."""
    out = _C.scalar_like(coefficients[-1], x2) + x2 * 0.0
    for c in reversed(coefficients[:-1]):
        out = out * x2 + c
    return out


_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(9)]  # x^1 .. x^17


def sin(input):
    x = _float(input)
    two_pi = 2.0 * math.pi
    turns = _C.detach(_round(x * (1.0 / two_pi)))
    r = x - turns * two_pi  # [-π, π]
    # sin(π - |r|) = sin|r|: fold into [-π/2, π/2] (sign(r) (π/2 - ||r| - π/2|))
    folded = _sign(r) * (math.pi / 2 - _C.unary("abs", _C.unary("abs", r) - math.pi / 2))
    return folded * _series(folded * folded, _SIN)


def cos(input):
    return sin(_float(input) + math.pi / 2)


def tan(input):
    x = _float(input)
    return sin(x) / cos(x)


def _round(x):
    # round to nearest via an int64 cast of x + 0.5 toward -inf (constants: no gradient needed)
    shifted = _C.detach(x) + 0.5
    t = _C.cast(_C.cast(shifted, "int64"), x._dtype_name)
    return t - _C.cast(shifted < t, x._dtype_name)


def _sign(x):
    positive = _C.cast(x > 0, x._dtype_name)
    negative = _C.cast(x < 0, x._dtype_name)
    return _C.detach(positive - negative)


_ATAN = [(-1) ** k / (2 * k + 1) for k in range(14)]  # x^1 .. x^27 for |x| <= tan(π/8)


def _atan_small(x):
    return x * _series(x * x, _ATAN)


def atan(input):
    """atan(x) = 2 atan(x / (1 + sqrt(1 + x²))) twice: the argument reaches |t| < tan(π/8)."""
    x = _float(input)
    big = _C.cast(_C.unary("abs", x) > 1.0, x._dtype_name)
    # atan(x) = sign(x) π/2 - atan(1/x) for |x| > 1 keeps the halvings accurate
    safe = x * big + (1.0 - big)  # 1 where |x| <= 1, so 1 / safe is finite
    t = x * (1.0 - big) + big / safe  # |t| <= 1
    for _ in range(2):
        t = t / (_C.unary("sqrt", t * t + 1.0) + 1.0)
    small = _atan_small(t) * 4.0
    return small * (1.0 - big) + big * (_sign(x) * (math.pi / 2) - small)


def asin(input):
    x = _float(input)
    return atan(x * _C.unary("rsqrt", 1.0 - x * x))


def acos(input):
    return asin(input) * -1.0 + math.pi / 2


def atan2(input, other):
    """The angle of (other, input): atan(y / x) shifted by ±π where x < 0 (x = 0 gives ±π/2)."""
    y, x = _float(input), _float(other)
    zero_x = _C.cast(_C.binary("equal", x, _C.scalar_like(0.0, x)), y._dtype_name)
    safe_x = x + zero_x  # 1 where x == 0
    base = atan(y / safe_x) * (1.0 - zero_x) + zero_x * _sign(y) * (math.pi / 2)
    negative_x = _C.cast(x < 0, y._dtype_name)
    shift = negative_x * _C.detach(_array_ops.where(y < 0, _C.scalar_like(-math.pi, y),
                                                    _C.scalar_like(math.pi, y)))
    return base + shift


def sinc(input):
    """sin(πx) / (πx), 1 at 0."""
    x = _float(input)
    zero = _C.cast(_C.binary("equal", x, _C.scalar_like(0.0, x)), x._dtype_name)
    px = (x + zero) * math.pi
    return sin(px) / px * (1.0 - zero) + zero


_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf(input):
    x = _float(input)
    ax = _C.unary("abs", x)
    t = 1.0 / (ax * _ERF_P + 1.0)
    poly = t * _series(t, list(_ERF_A))
    return _sign(x) * (1.0 - poly * _C.unary("exp", -(ax * ax)))


def erfc(input):
    return 1.0 - erf(input)
