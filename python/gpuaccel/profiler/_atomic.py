"""Atomic file writes for profiler exports.

TensorBoard polls log directories while training runs; a half-written ``.xplane.pb`` or trace
file would be read as corrupt. Every exporter therefore writes a temporary file in the target
directory and renames it over the final name (``os.replace`` is atomic on one file system).
"""
from __future__ import annotations

import os
import tempfile

__all__ = ["atomic_write_bytes"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> str:
    """Write ``data`` to ``path`` atomically, creating parent folders; returns the path."""
    path = os.fspath(path)
    if not path:
        raise ValueError("an empty path was given for a profiler export")
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=folder)
    try:
        # mkstemp creates the file private (0600); logs are meant to be read by TensorBoard,
        # possibly run by another user on a course server, so make them world-readable.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
