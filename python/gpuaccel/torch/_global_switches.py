"""PyTorch's process-wide switches (CPU threads, deterministic algorithms, float32 matmul
precision) over the settings gpuaccel already has, so a script's opening lines
(``torch.set_num_threads(1)``, ``torch.use_deterministic_algorithms(True)``,
``torch.set_float32_matmul_precision('high')``) mean what gpuaccel can do:

- threads are ``gpuaccel.config.threading``'s intra-op and inter-op counts, with PyTorch's
  argument checks; like TensorFlow's they can change only before the runtime starts (the first
  op), so a later change is a RuntimeError saying so (PyTorch allows it for the intra-op count);
- determinism is ``tf.config.experimental.enable_op_determinism``'s (what it changes on the
  CPU and the GPU is in its docstring); PyTorch's warn-only and debug-mode flags are kept
  alongside;
- gpuaccel computes float32 matmuls and convolutions in full float32 on every GPU (cuBLASLt's
  32F compute, cuDNN's FMA math: docs/gpu.md), never in TF32, so the matmul precision is
  recorded and answered as PyTorch's (``torch.backends.cuda.matmul.allow_tf32`` reads it) and
  changes no result.
"""
import builtins
import warnings

from .. import _C
from ..config import experimental as _experimental
from ..config import threading as _threading

__all__ = ["get_num_threads", "set_num_threads", "get_num_interop_threads",
           "set_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]


# ---- CPU threads ----

def _positive_thread_count(value, name):
    if isinstance(value, bool) or not isinstance(value, builtins.int):
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer, got {value}")
    return value


def _set_before_start(setter, value, name):
    try:
        setter(value)
    except RuntimeError as error:
        raise RuntimeError(f"{name}({value}): {error}; gpuaccel fixes its thread counts when "
                           f"the runtime starts, so call {name} before the first op") from None


def get_num_threads():
    """Threads a CPU op uses: the intra-op count, or OpenMP's team size when none was set."""
    return int(_C.cpu_threads_for_this_thread())


def set_num_threads(num):
    """The intra-op thread count (``tf.config.threading.set_intra_op_parallelism_threads``)."""
    _set_before_start(_threading.set_intra_op_parallelism_threads,
                      _positive_thread_count(num, "set_num_threads"), "set_num_threads")


def get_num_interop_threads():
    """The inter-op count set, or 1 when none was: gpuaccel runs a step's ops one at a time."""
    return _threading.get_inter_op_parallelism_threads() or 1


def set_num_interop_threads(num):
    """Recorded as the inter-op count (gpuaccel runs ops in order, so it changes nothing)."""
    _set_before_start(_threading.set_inter_op_parallelism_threads,
                      _positive_thread_count(num, "set_num_interop_threads"),
                      "set_num_interop_threads")


# ---- deterministic algorithms ----

_warn_only = [False]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Turns gpuaccel's op determinism on or off (``enable_op_determinism``)."""
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"use_deterministic_algorithms(): argument '{name}' must be bool, "
                            f"not {type(value).__name__}")
    if mode:
        with warnings.catch_warnings():
            if warn_only:  # PyTorch's warn-only still warns; the GPU note is one such warning
                warnings.simplefilter("default")
            _experimental.enable_op_determinism()
    else:
        _experimental.disable_op_determinism()
    _warn_only[0] = mode and warn_only


def are_deterministic_algorithms_enabled():
    return _experimental.is_op_determinism_enabled()


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only[0]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0/'default': off; 1/'warn': on, warn only; 2/'error': on."""
    if isinstance(debug_mode, bool) or not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


# ---- float32 matmul precision ----

_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """Recorded as PyTorch's ('highest', 'high' or 'medium'; another value warns and changes
    nothing, as PyTorch's); gpuaccel's float32 matmuls stay full float32 (module doc)."""
    if precision not in _MATMUL_PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]
