"""``torch.channels_last`` and the other memory formats: where a tensor's elements lie, not
what they are.

PyTorch tutorials convert a CNN's images and weights with ``x.to(memory_format=
torch.channels_last)`` for the GPU's NHWC kernels. gpuaccel's tensors are strided views, so
this is the same thing here: the shape stays NCHW, the elements are copied into NHWC order and
the strides say so (``(C*H*W, 1, W*C, C)``, as PyTorch reports them). Values, shapes and
gradients do not change; ops read the strided view like any other.
"""
from . import _C

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format", "contiguous", "is_contiguous", "to_memory_format"]


class memory_format:  # noqa: N801 - torch's class name
    """A memory-format constant (``torch.memory_format``)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name  # pickles as the module-level constant


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# The binding's row-major check, kept before Tensor.is_contiguous is replaced by the one below.
_row_major = _C.Tensor.is_contiguous

# The dimensions of a channels-last tensor from the innermost outwards (PyTorch's order in
# is_channels_last_contiguous), and the rank each format needs.
_CHANNELS_LAST_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def _checked(fmt, op):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}: memory_format must be a torch.memory_format (torch.channels_last, "
                        f"torch.contiguous_format, ...), got {type(fmt).__name__} {fmt!r}")
    rank = len(_CHANNELS_LAST_ORDER.get(fmt, ()))
    return fmt, rank


def is_contiguous(self, memory_format=contiguous_format):
    """Whether the strides are those ``contiguous(memory_format)`` would give (size-1
    dimensions may have any stride, as in PyTorch)."""
    fmt, rank = _checked(memory_format, "is_contiguous")
    if fmt in (contiguous_format, preserve_format):
        return _row_major(self)
    if self.ndim != rank:
        return False
    sizes, strides, expected = list(self.shape), self._strides(), 1
    for d in _CHANNELS_LAST_ORDER[fmt]:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def to_memory_format(self, memory_format, op):
    """``self`` with its elements laid out in ``memory_format`` (itself when they already are;
    preserve_format keeps the layout)."""
    fmt, rank = _checked(memory_format, op)
    if fmt is preserve_format:
        return self
    if fmt is contiguous_format:
        return self if _row_major(self) else _C.contiguous(self)
    if self.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format "
                           f"({op}: the tensor has shape {tuple(self.shape)})")
    if is_contiguous(self, fmt):
        return self
    channels_inner = [0] + list(range(2, rank)) + [1]  # NCHW -> NHWC
    back = [0, rank - 1] + list(range(1, rank - 1))  # NHWC -> NCHW
    return _C.permute(_C.contiguous(_C.permute(self, channels_inner)), back)


def contiguous(self, memory_format=contiguous_format):
    """``Tensor.contiguous(memory_format=torch.contiguous_format)``."""
    return to_memory_format(self, memory_format, "contiguous")


def stride(self, dim=None):
    """``Tensor.stride()``: elements to step per dimension (one int for ``dim``)."""
    strides = tuple(self._strides())
    if dim is None:
        return strides
    from ._int_range import check_int
    d = check_int(dim, "stride: dim")
    if not -max(self.ndim, 1) <= d < max(self.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-self.ndim}, {self.ndim - 1}], but got {d})")
    return strides[d]
