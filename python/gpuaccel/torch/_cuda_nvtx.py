"""``torch.cuda.nvtx``: the NVTX ranges PyTorch code brackets steps with
(``torch.cuda.nvtx.range_push("forward")`` ... ``range_pop()``), recorded as user ranges of
gpuaccel's profiler (the ``record_function`` ranges of ``torch.profiler``), so they show in its
trace and summaries, on a GPU or not (PyTorch's CPU build raises instead: it has no NVTX).
It lives in the PyTorch face, which attaches it to ``gpuaccel.cuda`` (torch.cuda), because it
needs the face's profiler, which itself uses gpuaccel.cuda."""
import contextlib

from .profiler import record_function

__all__ = ["range_push", "range_pop", "range", "mark"]

_open_ranges = []  # the ranges pushed and not yet popped, innermost last


def _user_range(msg):
    return record_function(msg)


def range_push(msg):
    """Opens a nested range; returns its depth (0 for the outermost), as NVTX does."""
    opened = _user_range(msg)
    opened.__enter__()
    _open_ranges.append(opened)
    return len(_open_ranges) - 1


def range_pop():
    """Closes the innermost open range; returns the depth it had, or -1 when none was open."""
    if not _open_ranges:
        return -1
    _open_ranges.pop().__exit__(None, None, None)
    return len(_open_ranges)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - torch's name
    """``with torch.cuda.nvtx.range("step {}", i):`` a range around the block (the message
    formatted with the arguments, as PyTorch's)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()


def mark(msg):
    """An instant in the trace: a range that opens and closes at once."""
    with _user_range(msg):
        pass
