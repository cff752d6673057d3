"""``torch.backends.cudnn``, ``torch.backends.cuda.matmul`` and ``torch.backends.mps``: the
attribute switches and device probes PyTorch scripts use at the top, answered with PyTorch's defaults and wired to what gpuaccel's GPU path
does (docs/gpu.md):

- ``cudnn.deterministic = True`` asks for what ``torch.use_deterministic_algorithms`` asks of
  cuDNN; gpuaccel does not yet restrict cuDNN's algorithm choice, so with a GPU visible it
  warns as ``enable_op_determinism`` does (the CPU's ops are deterministic already);
- ``cudnn.benchmark``: gpuaccel picks convolution algorithms with cuDNN's heuristics and never
  times them (cudnnFind), so the flag is recorded and changes nothing;
- ``cudnn.enabled = False``: gpuaccel's GPU convolutions run only through cuDNN, so it warns
  that they still do;
- ``cudnn.allow_tf32`` and ``cuda.matmul.allow_tf32``: gpuaccel never computes float32 in
  TF32 (FMA math in cuDNN, 32F compute in cuBLASLt), so both are recorded; the matmul one reads
  and sets ``torch.set_float32_matmul_precision`` as in PyTorch ('highest' <-> False);
- ``mps.is_available()`` / ``mps.is_built()``: gpuaccel has no Apple Metal backend, so both
  answer False, as a PyTorch built without MPS does (scripts pick "cuda", "mps" or "cpu").
"""
import warnings

from .. import cuda as _cuda
from .. import version as _version
from ..config import experimental as _experimental
from ._global_switches import _matmul_precision

__all__ = ["cudnn", "cuda", "mps"]


def _bool_flag(value, name):
    if not isinstance(value, bool):
        raise RuntimeError(f"set_{name} expects a bool, but got {type(value).__name__}")
    return value


class _Cudnn:
    """``torch.backends.cudnn``: flags with PyTorch's defaults (see the module doc)."""

    def __init__(self):
        object.__setattr__(self, "_flags", {"enabled": True, "benchmark": False,
                                            "deterministic": False, "allow_tf32": True})

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name in flags:
            return flags[name]
        raise AttributeError(f"torch.backends.cudnn has no attribute {name!r} in gpuaccel "
                             f"(it has {', '.join(sorted(flags))}, is_available, version)")

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"torch.backends.cudnn has no flag {name!r} in gpuaccel "
                                 f"(its flags: {', '.join(sorted(self._flags))})")
        value = _bool_flag(value, {"enabled": "enabled_cudnn", "benchmark": "benchmark_cudnn",
                                   "deterministic": "deterministic_cudnn",
                                   "allow_tf32": "allow_tf32_cudnn"}[name])
        if name == "deterministic" and value:
            _experimental.warn_cudnn_not_restricted("torch.backends.cudnn.deterministic")
        if name == "enabled" and not value and _cuda.is_available():
            warnings.warn("torch.backends.cudnn.enabled = False: gpuaccel's GPU convolutions "
                          "run only through cuDNN, so they still use it", stacklevel=2)
        self._flags[name] = value

    @staticmethod
    def is_available():
        """Whether cuDNN can run: gpuaccel's GPU path needs it, so whenever a GPU is usable."""
        return _cuda.is_available()

    @staticmethod
    def version():
        """cuDNN's version as PyTorch's int (9.1.0 -> 90100); None without a usable GPU."""
        if not _cuda.is_available():
            return None
        return _version.runtime()["cudnn"] or None


class _Matmul:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` is ``get_float32_matmul_precision() !=
    'highest'``, as in PyTorch."""

    @property
    def allow_tf32(self):
        return _matmul_precision[0] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _matmul_precision[0] = "high" if _bool_flag(value, "allow_tf32_cublas") else "highest"


class _CudaBackend:
    matmul = _Matmul()

    @staticmethod
    def is_built():
        """Whether this gpuaccel was built with its CUDA backend."""
        return _version.cuda is not None


class _MpsBackend:
    """``torch.backends.mps``: gpuaccel has no Metal backend (see the module doc)."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def is_built():
        return False


cudnn = _Cudnn()
cuda = _CudaBackend()
mps = _MpsBackend()
