"""``tf.TensorShape``: a possibly partial shape (unknown rank, or None dimensions).

Why: TF code builds shapes for Keras hooks and specs with it (an RNN cell's ``state_size =
tf.TensorShape([units, dims])``, ``tf.TensorShape([None, 3])``; 6 TensorFlow tutorial and
keras-io example files). gpuaccel's tensors have fully known shapes, given as tuples, so this is
only the shape algebra, in plain Python: rank, indexing, ``as_list``, compatibility and merging,
with TF's error texts. ``dims`` gives ints and None (TF 2's ``Dimension`` objects are not
reproduced)."""
import numbers


def _dimension(value):
    value = getattr(value, "value", value)  # a TF Dimension
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Dimension value must be integer or None or have an __index__ method, "
                        f"got value '{value!r}' with type '{type(value)}'")
    if value < 0:
        raise ValueError(f"Dimension {int(value)} must be >= 0")
    return int(value)


def as_shape(shape):
    """``shape`` as a TensorShape (itself when it is one)."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


class TensorShape:
    """A shape whose rank (``dims is None``) or dimensions (None entries) may be unknown."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (str, bytes)):
            raise TypeError(f"Failed to convert '{dims!r}' to a shape: '{dims[:1]!r}'could not "
                            "be converted to a dimension. A shape should either be single "
                            "dimension (e.g. 10), or an iterable of dimensions (e.g. [1, 10, "
                            "None]).")
        else:
            try:
                items = iter(dims)
            except TypeError:  # a single dimension: a vector's shape
                self._dims = (_dimension(dims),)
            else:
                self._dims = tuple(_dimension(d) for d in items)

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def is_fully_defined(self):
        return self._dims is not None and None not in self._dims

    def num_elements(self):
        """The number of elements of a tensor of this shape, or None when not fully defined."""
        if not self.is_fully_defined():
            return None
        count = 1
        for dim in self._dims:
            count *= dim
        return count

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        """The most specific shape compatible with both, or a ValueError."""
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other):
        """The most specific shape that both shapes are compatible with."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self.rank is not None and other.rank is not None and self.rank != other.rank:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_has_rank(self, rank):
        if self.rank not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank):
        if self._dims is None:
            return TensorShape([None] * rank)
        self.assert_has_rank(rank)
        return self

    def with_rank_at_least(self, rank):
        if self.rank is not None and self.rank < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self.rank is not None and self.rank > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def __reduce__(self):
        return TensorShape, (None if self._dims is None else list(self._dims),)
