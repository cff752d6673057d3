"""``tf.config.threading``: how many CPU threads an op uses (intra-op) and how many ops may run
at once (inter-op), with TensorFlow's names and rules: 0 lets the system pick, and a count can
change only before the runtime starts (the first op), after which TensorFlow's
``RuntimeError`` says it "cannot be modified after initialization".

The intra-op count sets the OpenMP team of every CPU op (oneDNN's included), like
``OMP_NUM_THREADS`` but from Python. gpuaccel runs a step's ops one after another, so the
inter-op count is recorded and reported and changes nothing (docs/devices.md).
"""
import numbers

from .. import _C

__all__ = ["get_intra_op_parallelism_threads", "set_intra_op_parallelism_threads",
           "get_inter_op_parallelism_threads", "set_inter_op_parallelism_threads"]


def _thread_count(num_threads, name):
    # bool is an Integral too, and True threads is never what someone meant.
    if isinstance(num_threads, bool) or not isinstance(num_threads, numbers.Integral):
        raise TypeError(f"{name}: num_threads must be an int >= 0 (0 lets the system pick), "
                        f"got {num_threads!r} of type {type(num_threads).__name__}")
    if not -2 ** 31 <= num_threads <= 2 ** 31 - 1:  # the core's int (negatives: its message)
        raise ValueError(f"{name}: num_threads must be in [0, {2 ** 31 - 1}], got {num_threads}")
    return int(num_threads)


def set_intra_op_parallelism_threads(num_threads):
    """Threads each CPU op may use; 0 lets OpenMP decide (``OMP_NUM_THREADS`` or every core)."""
    _C.set_intra_op_parallelism_threads(
        _thread_count(num_threads, "set_intra_op_parallelism_threads"))


def get_intra_op_parallelism_threads():
    """The intra-op count set with ``set_intra_op_parallelism_threads`` (0: the system picks)."""
    return _C.intra_op_parallelism_threads()


def set_inter_op_parallelism_threads(num_threads):
    """Recorded for TensorFlow code that sets it; gpuaccel runs ops in order, so no effect."""
    _C.set_inter_op_parallelism_threads(
        _thread_count(num_threads, "set_inter_op_parallelism_threads"))


def get_inter_op_parallelism_threads():
    """The inter-op count set with ``set_inter_op_parallelism_threads`` (0: the system picks)."""
    return _C.inter_op_parallelism_threads()
