"""lgamma, digamma, mvlgamma, i0, erfinv and frexp for the PyTorch face, composed because
gpuaccel has no kernel for them: lgamma/digamma shift the argument by 8 and use Stirling's
series there (reflection through sin for negative arguments), i0 its power series (20 terms:
float32-accurate for |x| <= 8), erfinv Giles' single-precision polynomials (2010). Autograd
differentiates each composition.
"""
import collections
import math

import numpy as np

from .dtypes import FLOATING_NAMES
from . import _C
from . import math as _math
from ._convert import convert_to_tensor

_SHIFT = 8


def _float(x):
    x = convert_to_tensor(x)
    return x if x._dtype_name in FLOATING_NAMES else _C.cast(x, "float32")


def _positive_part(x):
    """x where x > 0, else 1 - x (the reflected argument; both branches stay finite)."""
    positive = _C.cast(x > 0, x._dtype_name)
    return x * positive + (1.0 - x) * (1.0 - positive), positive


def _lgamma_positive(x):
    z = x + float(_SHIFT)
    zi = 1.0 / z
    zi2 = zi * zi
    series = zi * (1.0 / 12 + zi2 * (-1.0 / 360 + zi2 * (1.0 / 1260 - zi2 / 1680)))
    stirling = (z - 0.5) * _C.unary("log", z) - z + 0.5 * math.log(2 * math.pi) + series
    shift = _C.unary("log", x)
    for k in range(1, _SHIFT):
        shift = shift + _C.unary("log", x + float(k))
    return stirling - shift


def lgamma(input):
    x = _float(input)
    arg, positive = _positive_part(x)
    value = _lgamma_positive(arg)
    # lgamma(x) = log(π / |sin(πx)|) - lgamma(1 - x) for x <= 0
    reflected = math.log(math.pi) - _C.unary("log", _C.unary("abs", _math.sin(
        x * math.pi * (1.0 - positive) + positive * 0.5))) - value
    return value * positive + reflected * (1.0 - positive)


def _digamma_positive(x):
    z = x + float(_SHIFT)
    zi = 1.0 / z
    zi2 = zi * zi
    series = zi2 * (1.0 / 12 - zi2 * (1.0 / 120 - zi2 * (1.0 / 252 - zi2 / 240)))
    value = _C.unary("log", z) - zi * 0.5 - series
    for k in range(_SHIFT):
        value = value - 1.0 / (x + float(k))
    return value


def digamma(input):
    x = _float(input)
    arg, positive = _positive_part(x)
    value = _digamma_positive(arg)
    # digamma(x) = digamma(1 - x) - π / tan(πx) for x <= 0
    angle = x * math.pi * (1.0 - positive) + positive * 0.5
    reflected = value - math.pi / _math.tan(angle)
    return value * positive + reflected * (1.0 - positive)


def mvlgamma(input, p):
    """The multivariate log-gamma: p(p-1)/4 log π + sum_j lgamma(x - j/2)."""
    x = _float(input)
    p = int(p)
    out = lgamma(x) + p * (p - 1) / 4 * math.log(math.pi)
    for j in range(1, p):
        out = out + lgamma(x - j / 2)
    return out


_I0 = [1.0 / math.factorial(k) ** 2 for k in range(20)]


def i0(input):
    """The modified Bessel function of the first kind, order 0: sum ((x/2)²)^k / (k!)²."""
    x = _float(input)
    q = x * x * 0.25
    out = _C.scalar_like(_I0[-1], q) + q * 0.0
    for c in reversed(_I0[:-1]):
        out = out * q + c
    return out


_ERFINV_CENTRAL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
_ERFINV_TAIL = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]


def _horner(t, coefficients):
    out = _C.scalar_like(coefficients[0], t) + t * 0.0
    for c in coefficients[1:]:
        out = out * t + c
    return out


def erfinv(input):
    x = _float(input)
    w = -_C.unary("log", (1.0 - x) * (1.0 + x))
    central = _C.cast(w < 5.0, x._dtype_name)
    near = _horner(w - 2.5, _ERFINV_CENTRAL)
    far = _horner(_C.unary("sqrt", _C.binary("maximum", w, _C.scalar_like(5.0, w))) - 3.0,
                  _ERFINV_TAIL)
    return (near * central + far * (1.0 - central)) * x


def frexp(input):
    """(mantissa, exponent) with x = mantissa 2^exponent and 0.5 <= |mantissa| < 1 (0, 0 at 0);
    the exponents are read on the host (NumPy's frexp), the mantissa is x times a constant."""
    x = _float(input)
    values = _C.detach(x)._numpy().astype(np.float32)
    mantissa, exponent = np.frexp(values)
    scale = convert_to_tensor(np.ldexp(np.float32(1.0), -exponent).astype(np.float32)).to(
        device=x._device_name, dtype=x._dtype_name)
    return _Frexp(x * scale, convert_to_tensor(exponent.astype(np.int32)).to(
        device=x._device_name))


_Frexp = collections.namedtuple("frexp", ["mantissa", "exponent"])
