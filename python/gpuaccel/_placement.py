"""``gpuaccel.device``: one object that is both TensorFlow's ``tf.device(name)`` scope and
PyTorch's ``torch.device('cuda:0')``.

As a context manager it asks that ops in the block run on that device (per thread, nestable,
``None`` clears the request). An unavailable device falls back to the CPU under soft
placement (the TF 2 default) and raises ``InvalidArgumentError`` otherwise, at the op.
"""
from . import _C


class device:
    """``with gpuaccel.device('/GPU:0'):`` or ``gpuaccel.device('cuda:1')``.

    Accepts every spelling of ``gpuaccel._C.parse_device_name`` ('/CPU:0', '/GPU:1',
    '/device:GPU:0', '/job:localhost/replica:0/task:0/device:CPU:0', 'cpu', 'cuda', 'cuda:1'),
    another ``device``, an object with a ``.name`` (a ``LogicalDevice``), or ``None``.
    """

    __slots__ = ("_spec", "_name")

    def __init__(self, name, index=None):
        if index is not None:  # torch.device('cuda', 1)
            if not isinstance(name, str) or ":" in name or not isinstance(index, int) \
                    or isinstance(index, bool) or index < 0:
                raise RuntimeError(f"device(type, index) takes a device type without an index "
                                   f"('cuda', 'cpu') and a non-negative int index; got "
                                   f"{name!r}, {index!r}")
            name = f"{name}:{index}"
        if isinstance(name, device):
            self._spec, self._name = name._spec, name._name
            return
        if name is not None and not isinstance(name, str) and hasattr(name, "name"):
            name = name.name
        if name is not None and not isinstance(name, str):
            raise ValueError(
                f"gpuaccel.device expects a device name string such as '/GPU:0' or 'cuda:0', "
                f"a LogicalDevice or None; got {name!r}")
        self._name = name
        self._spec = None if name is None else _C.parse_device_name(name)

    @property
    def type(self):
        """PyTorch's spelling: ``'cuda'`` or ``'cpu'`` (``None`` for ``device(None)``)."""
        if self._spec is None:
            return None
        return "cuda" if self._spec[0] == "GPU" else "cpu"

    @property
    def device_type(self):
        """TensorFlow's spelling: ``'GPU'`` or ``'CPU'``."""
        return None if self._spec is None else self._spec[0]

    @property
    def index(self):
        return None if self._spec is None else self._spec[1]

    @property
    def name(self):
        """The TensorFlow name, e.g. ``'/device:GPU:0'`` (index 0 when none was given)."""
        if self._spec is None:
            return None
        return f"/device:{self._spec[0]}:{self._spec[1] or 0}"

    def __enter__(self):
        _C.push_device_scope(self._name)
        return self

    def __exit__(self, *exc):
        _C.pop_device_scope()
        return False

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except ValueError:
                return False
        return isinstance(other, device) and self._spec == other._spec

    def __hash__(self):
        return hash(self._spec)

    def __str__(self):
        if self._spec is None:
            return "None"
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"
