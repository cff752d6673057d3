"""``tf.TensorSpec``: a shape and dtype describing a tensor, which ``Dataset.from_generator``'s
``output_signature`` checks each element against (None dimensions match any size)."""
from .dtypes import as_dtype, float32


class TensorSpec:
    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=float32, name=None):
        self.shape = None if shape is None else tuple(
            None if d is None else int(d) for d in shape)
        self.dtype = as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value):
        shape = tuple(value.shape)
        if value.dtype != self.dtype:
            return False
        return self.shape is None or (len(shape) == len(self.shape) and all(
            e is None or e == a for e, a in zip(self.shape, shape)))

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"
