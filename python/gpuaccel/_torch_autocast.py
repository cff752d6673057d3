"""``torch.cuda.amp.autocast`` (``torch.autocast('cuda')``): inside the block, the PyTorch face's
matrix products and convolutions on GPU tensors compute in float16 (or bfloat16), and the
functions PyTorch keeps in float32 under autocast (softmax, log_softmax, the losses, the
norms) take half inputs up to float32, as PyTorch's CUDA autocast lists do.

Why a block and not a policy: PyTorch's mixed precision is this block around the forward pass
plus ``GradScaler`` (torch/_grad_scaler.py); Keras's is a layer dtype policy
(docs/mixed_precision.md). Both end in the same kernels: gpuaccel's float16/bfloat16 matmul and
convolution with float32 accumulation on tensor cores (docs/gpu.md). The casts are ordinary
recorded casts, so gradients reach float32 weights in float32.

CPU tensors are left alone (PyTorch's CUDA autocast does not touch them either); without a
usable GPU the block warns and disables itself, as PyTorch's does.
"""
import functools
import threading
import warnings

from . import _C
from ._cuda_devices import _physical_index, is_available
from .dtypes import as_dtype

__all__ = ["autocast", "lower_precision", "full_precision", "is_autocast_enabled",
           "get_autocast_gpu_dtype"]

_HALF = ("float16", "bfloat16")
_state = threading.local()  # PyTorch's autocast state is per thread


def _current():
    return getattr(_state, "dtype", None)  # None: autocast is off


def is_autocast_enabled():
    """Whether the innermost block on this thread casts (``torch.is_autocast_enabled``)."""
    return _current() is not None


def get_autocast_gpu_dtype():
    """The dtype an enabled block casts to (float16 unless the block said otherwise)."""
    return getattr(_state, "last_dtype", "float16")


def _is_gpu_float(t, names):
    return isinstance(t, _C.Tensor) and t._device_type == "GPU" and t._dtype_name in names


def _cast_all(args, kwargs, names, target):
    def cast(value):
        return _C.cast(value, target) if _is_gpu_float(value, names) else value
    return [cast(a) for a in args], {k: cast(v) for k, v in kwargs.items()}


def lower_precision(fn):
    """``fn`` with its float32 GPU tensor arguments cast to the block's dtype while autocast is
    on (PyTorch's lower-precision list: matmul, linear, conv...)."""
    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        target = _current()
        if target is None:
            return fn(*args, **kwargs)
        args, kwargs = _cast_all(args, kwargs, ("float32",), target)
        return fn(*args, **kwargs)
    return autocast_fn


def full_precision(fn):
    """``fn`` with its half GPU tensor arguments cast to float32 while autocast is on
    (PyTorch's float32 list: softmax, losses, norms)."""
    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        if _current() is None:
            return fn(*args, **kwargs)
        args, kwargs = _cast_all(args, kwargs, _HALF, "float32")
        return fn(*args, **kwargs)
    return autocast_fn


class autocast:  # noqa: N801 - torch's name
    """``with torch.autocast('cuda'):`` / ``with torch.cuda.amp.autocast():`` (see the module
    doc); also a decorator. ``enabled=False`` turns casting off inside an enabled block."""

    _stacklevel = 2  # of the warnings: the caller's line (a subclass's __init__ adds one)

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if device_type not in ("cuda", "cpu"):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}' (gpuaccel casts on 'cuda')")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {enabled!r}")
        self.device = device_type
        self.fast_dtype = as_dtype(dtype).name if dtype is not None else "float16"
        self._enabled = enabled
        if device_type == "cpu" and enabled:
            warnings.warn("gpuaccel's autocast casts GPU tensors only: autocast('cpu') changes "
                          "nothing (CPU ops compute in float32)", stacklevel=self._stacklevel)
            self._enabled = False
        elif enabled:
            if self.fast_dtype not in _HALF:
                raise RuntimeError(f"In CUDA autocast, the dtype must be float16 or bfloat16, "
                                   f"got {self.fast_dtype}")
            if not is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                              "Disabling", stacklevel=self._stacklevel)
                self._enabled = False
            elif self.fast_dtype == "bfloat16":
                if _C.gpu_info(_physical_index(None, "autocast"))["major"] < 8:
                    warnings.warn("In CUDA autocast, but the target dtype is not supported "
                                  "(bfloat16 needs compute capability 8.0+). Disabling "
                                  "autocast.", stacklevel=self._stacklevel)
                    self._enabled = False

    def __enter__(self):
        self._saved = (_current(), get_autocast_gpu_dtype())
        if self.device == "cuda":
            _state.dtype = self.fast_dtype if self._enabled else None
            if self._enabled:
                _state.last_dtype = self.fast_dtype
        return self

    def __exit__(self, *exc_info):
        _state.dtype, _state.last_dtype = self._saved
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def in_autocast(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return in_autocast
