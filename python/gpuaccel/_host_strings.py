"""Host strings: what gpuaccel hands out where TensorFlow has a scalar (or 1-D) string tensor.

Why it exists: gpuaccel tensors hold numbers only (no string dtype, by design), yet input
pipelines move file paths and file contents around: ``tf.io.read_file(path)``,
``Dataset.list_files``, ``from_tensor_slices(list_of_paths)``. These values stay Python objects on
the host. ``HostString`` is a ``bytes`` subclass, so every bytes operation (and PIL, ``open``,
``os.path``) takes it as is, and it also answers the Tensor calls that code written for TF makes on
a scalar string tensor: ``.numpy()`` returns the plain ``bytes`` (as TF's does), ``shape`` is
``()``. A batch of them is a ``HostStrings`` array (NumPy object array of bytes, the value TF's
``.numpy()`` returns for a 1-D string tensor).
"""
import os

import numpy as np

from ._tensor_shape import TensorShape


class HostString(bytes):
    """A scalar string value (UTF-8 bytes for text), standing in for TF's tf.string scalar."""

    __slots__ = ()

    def numpy(self):
        """The plain ``bytes`` (TF: a scalar string tensor's ``.numpy()`` is ``bytes``)."""
        return bytes(self)

    @property
    def shape(self):
        return TensorShape([])

    @property
    def ndim(self):
        return 0

    def __repr__(self):
        return f"HostString({bytes(self)!r})"


class HostStrings(np.ndarray):
    """An array of strings (NumPy ``object`` dtype holding ``bytes``): a batch of HostStrings."""

    def numpy(self):
        """A plain NumPy object array of ``bytes``, as TF's ``.numpy()`` of a string tensor."""
        return np.asarray(self).copy()

    def __getitem__(self, index):
        item = super().__getitem__(index)
        if isinstance(item, np.ndarray):
            return item
        return HostString(item)


def is_host_string(value):
    """Whether ``value`` is a string leaf of a dataset element (not a numeric tensor or array)."""
    if isinstance(value, (str, bytes, HostStrings)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in ("S", "U", "O")


def to_bytes(value, what):
    """``value`` as plain ``bytes``: str (UTF-8, as TF encodes it), bytes-like, a path-like, or a
    0-d NumPy string array. Anything else raises TypeError naming ``what``."""
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, os.PathLike):
        return os.fsencode(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in ("S", "U", "O"):
        return to_bytes(value.item(), what)
    if isinstance(value, np.ndarray) and value.dtype.kind in ("S", "U", "O"):
        raise ValueError(f"{what} must be a scalar string, got an array of shape "
                         f"{list(value.shape)}")
    raise TypeError(f"{what} must be a string (str or bytes), got {type(value).__name__}")


def to_path(value, what):
    """A filesystem path (str) from a str, bytes, HostString or path-like ``value``."""
    return os.fsdecode(to_bytes(value, what))


def string_rows(values):
    """A NumPy object array of ``bytes`` for a list or array of strings (the component of
    ``from_tensor_slices`` that is a list of paths)."""
    array = np.asarray(values, dtype=object)
    flat = [to_bytes(v, "from_tensor_slices: a string component entry") for v in array.reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


def string_leaf(value):
    """A dataset's string leaf as gpuaccel yields it: HostString for a scalar, HostStrings for an
    array or a list (of bytes entries; object arrays, since NumPy's fixed-width bytes would drop
    trailing NUL bytes of file contents)."""
    if isinstance(value, HostString):
        return value
    if isinstance(value, (str, bytes, bytearray)):
        return HostString(to_bytes(value, "a string element"))
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return HostString(to_bytes(value.item(), "a string element"))
    return string_rows(value).view(HostStrings)
