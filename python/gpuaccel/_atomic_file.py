"""Files gpuaccel writes appear whole or not at all: checkpoints, profiles, TensorBoard logs.

TensorBoard polls log directories while training runs, and a crash while saving must not
leave a truncated checkpoint where a good one was. So every writer goes through
:func:`atomic_open`: a temporary file in the target directory, flushed and fsync'd, then
renamed over the final name (``os.replace`` is atomic within one file system).
"""
from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["atomic_open", "atomic_write_bytes"]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike):
    """``with atomic_open(path) as f:`` writes binary data that replaces ``path`` on success.

    Parent folders are created. On an exception nothing is left behind and ``path`` keeps its
    old content.
    """
    path = os.fspath(path)
    if not path:
        raise ValueError("an empty path was given to write")
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=folder)
    try:
        # mkstemp creates the file private (0600); what we write is meant to be read by
        # TensorBoard or a colleague, possibly as another user, so make it world-readable.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> str:
    """Writes ``data`` to ``path`` atomically; returns the path."""
    with atomic_open(path) as f:
        f.write(data)
    return os.fspath(path)
