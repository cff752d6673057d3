"""``a @ b`` for integer operands as well as float ones.

The matmul kernels are float only; TF and torch also multiply integer matrices (``tf.matmul``
of two int32 constants in TF's tensor guide). ``_tensor`` (the ``@`` operator) and ``linalg``
(``matmul``) both dispatch here, which is why it is a module of its own below both.
"""
from . import _C

from .dtypes import INTEGER_NAMES as _INTEGER_DTYPES


def integer_or_float_matmul(a, b):
    """``a @ b``: two integer operands of one dtype are multiplied exactly as a broadcast
    product summed over the shared axis, in that dtype; anything else goes to the kernel.
    The product holds an (..., n, k, m) intermediate: fine for the small integer matrices
    such code uses."""
    if a._dtype_name not in _INTEGER_DTYPES or b._dtype_name != a._dtype_name:
        return _C.matmul(a, b)
    lhs = a.unsqueeze(0) if a.ndim == 1 else a
    rhs = b.unsqueeze(-1) if b.ndim == 1 else b
    product = (lhs.unsqueeze(-1) * rhs.unsqueeze(-3)).sum(dim=-2).to(a.dtype)
    if a.ndim == 1:
        product = product.squeeze(-2)
    if b.ndim == 1:
        product = product.squeeze(-1)
    return product
