"""``tf.TensorArray`` as TensorFlow runs it eagerly: a Python list of tensors with TF's checks.

Course code writes a ``tf.function`` loop's per-step outputs into a TensorArray and stacks them
(an RNN unrolled by hand). Eagerly TF keeps the written tensors in a list, ``write`` returns
the array itself, and unwritten entries read as zeros of the element shape; gpuaccel does the
same, so gradients flow from ``stack``/``concat``/``read`` back to whatever was written.
"""
from . import _C, errors
from ._array_ops import concat, split, stack, unstack
from ._convert import convert_to_tensor
from ._tensor import Tensor
from .dtypes import as_dtype

__all__ = ["TensorArray"]


def _index(value):
    return int(value.numpy()) if isinstance(value, Tensor) else int(value)


class TensorArray:
    """``tf.TensorArray(dtype, size, dynamic_size=False, clear_after_read=True,
    element_shape=None, infer_shape=True)``: write/read/stack/unstack/gather/scatter/
    split/concat/size/close."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None or flow is not None:
            raise ValueError("TensorArray handles are not supported when eager execution is "
                             "enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is "
                             "enabled.")
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else list(element_shape)
        self._items = [None] * _index(size)
        self._read_and_cleared = set()

    dtype = property(lambda self: self._dtype)
    dynamic_size = property(lambda self: self._dynamic_size)

    @property
    def element_shape(self):
        """The elements' shape as a tuple (None entries unknown), or None before any write."""
        return None if self._element_shape is None else tuple(self._element_shape)

    def _zeros(self):
        if self._element_shape is None or None in self._element_shape:
            raise errors.InvalidArgumentError(
                "TensorArray has an unwritten entry and no fully known element_shape to give it "
                "as zeros")
        written = next((t for t in self._items if t is not None), None)
        return _C.tensor_full(self._element_shape, 0.0, self._dtype.name,
                              None if written is None else written._device_name)

    def _filled(self, index):
        if self._items[index] is None:
            self._items[index] = self._zeros()
        return self._items[index]

    def _write(self, index, value):
        index = _index(index)
        if index < 0:
            raise errors.OutOfRangeError(f"Writing to negative indices (index {index}) is not "
                                         f"allowed.")
        if index >= len(self._items):
            if not self._dynamic_size:
                raise errors.OutOfRangeError(
                    f"Tried to write to index {index} but array is not resizeable and size "
                    f"is: {len(self._items)} ")
            self._items.extend([None] * (index - len(self._items) + 1))
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value, dtype=self._dtype)
        if value.dtype != self._dtype:
            raise errors.InvalidArgumentError(
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write dtype "
                f"{value.dtype.name} ")
        shape = list(value.shape)
        known = self._element_shape
        if known is not None and (len(known) != len(shape) or any(
                k is not None and k != s for k, s in zip(known, shape))):
            raise ValueError(f"Incompatible shape for value ({tuple(shape)}), expected "
                             f"({tuple(known)})")
        if self._infer_shape:
            self._element_shape = shape
        self._items[index] = value

    def write(self, index, value, name=None):
        """Stores ``value`` at ``index`` and returns this TensorArray (TF's eager result)."""
        self._write(index, value)
        return self

    def read(self, index, name=None):
        index = _index(index)
        if index < 0:
            raise errors.OutOfRangeError(f"Reading from negative indices (index {index}) is not "
                                         f"allowed.")
        if index >= len(self._items):
            raise errors.OutOfRangeError(f"Tried to read from index {index} but array size is: "
                                         f"{len(self._items)} ")
        if self._items[index] is None and index in self._read_and_cleared:
            raise errors.InvalidArgumentError(
                f"Could not read index {index} twice because it was cleared after a previous "
                f"read (perhaps try setting clear_after_read = false?)")
        value = self._filled(index)
        if self._clear_after_read:
            self._items[index] = None
            self._read_and_cleared.add(index)
        return value

    def stack(self, name=None):
        """The entries stacked on a new first axis (unwritten ones as zeros)."""
        if not self._items:
            shape = [0] + list(self._element_shape or [])
            return _C.tensor_full(shape, 0.0, self._dtype.name, None)
        return stack([self._filled(i) for i in range(len(self._items))], 0)

    def gather(self, indices, name=None):
        values = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        return stack([self._filled(int(i)) for i in values], 0)

    def concat(self, name=None):
        """The entries joined along their first axis."""
        items = [self._filled(i) for i in range(len(self._items))]
        scalar = next((i for i, t in enumerate(items) if t.ndim == 0), None)
        if scalar is not None:
            raise errors.InvalidArgumentError(f"Concat saw a scalar shape at index {scalar} but "
                                              f"requires at least vectors.")
        return concat(items, 0)

    def unstack(self, value, name=None):
        """Entry i becomes value[i]; returns this TensorArray."""
        rows = unstack(convert_to_tensor(value), axis=0)
        if len(rows) > len(self._items) and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {len(rows)} tensors into a TensorArray of static "
                             f"size {len(self._items)} ")
        self._items = list(rows)
        return self

    def scatter(self, indices, value, name=None):
        values = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        for index, row in zip(values, unstack(convert_to_tensor(value), axis=0)):
            self._write(index, row)
        return self

    def split(self, value, lengths, name=None):
        """The entries become consecutive pieces of ``value`` of the given lengths."""
        value = convert_to_tensor(value)
        sizes = [int(n) for n in (lengths.numpy().tolist() if isinstance(lengths, Tensor)
                                  else lengths)]
        if value.ndim == 0:
            raise errors.InvalidArgumentError(f"Expected value to be at least a vector, but "
                                              f"received shape: {list(value.shape)} ")
        if sum(sizes) != value.shape[0]:
            raise errors.InvalidArgumentError(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{sum(sizes)} and value's shape is: {list(value.shape)} ")
        if not self._dynamic_size and len(sizes) != len(self._items):
            raise errors.InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths ({len(self._items)} vs. "
                f"{len(sizes)}), and the TensorArray is not marked as dynamically resizeable.")
        self._items = list(split(value, sizes, axis=0))
        return self

    def size(self, name=None):
        return convert_to_tensor(len(self._items), dtype="int32")

    def identity(self):
        return self

    def close(self, name=None):
        self._items = []
