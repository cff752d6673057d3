"""Files gpuaccel writes appear whole or not at all: checkpoints, profiles, TensorBoard logs.

TensorBoard polls log directories while training runs, and a crash while saving must not
leave a truncated checkpoint where a good one was. So every writer goes through
:func:`atomic_open`: a temporary file in the target directory, flushed and fsync'd, then
renamed over the final name (``os.replace`` is atomic within one file system).

A process killed between creating the temporary file and the rename leaves it behind
(``.NAME.<pid>.XXXX.tmp``). The next write to the same path removes such leftovers of dead
processes; temporary files of live writers (this process's included) are left alone.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import time

__all__ = ["atomic_open", "atomic_write_bytes", "remove_quietly"]

_active_lock = threading.Lock()
_active_temporaries = set()  # this process's temporary files being written right now

# Temporary files of writers that died longer ago than this are removed even without a pid
# in their name (written by an older gpuaccel) or when the pid cannot be checked.
_ORPHAN_AGE_S = 600.0


def _process_alive(pid):
    """False only when no process ``pid`` exists on this machine (signal 0 probes it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, another user's
        pass
    return True


def remove_quietly(path):
    """Removes ``path`` if it can: a temporary file that a failed write leaves, or a leftover
    another process may have removed first. Never raises."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _remove_leftovers(folder, base):
    """Removes the temporary files that interrupted writes to ``folder/base`` left."""
    pattern = re.compile(r"\." + re.escape(base) + r"\.(?:(\d+)\.)?[^.]+\.tmp")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None:
            continue
        leftover = os.path.join(folder, name)
        with _active_lock:
            if leftover in _active_temporaries:
                continue
        pid = match.group(1)
        if pid is not None and int(pid) != os.getpid() and _process_alive(int(pid)):
            continue
        if pid is None:
            try:
                if time.time() - os.path.getmtime(leftover) < _ORPHAN_AGE_S:
                    continue
            except OSError:
                continue
        remove_quietly(leftover)


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
    base = os.path.basename(path)
    _remove_leftovers(folder, base)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.{os.getpid()}.", suffix=".tmp", dir=folder)
    with _active_lock:
        _active_temporaries.add(tmp)
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
        remove_quietly(tmp)
        raise
    finally:
        with _active_lock:
            _active_temporaries.discard(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> str:
    """Writes ``data`` to ``path`` atomically; returns the path."""
    with atomic_open(path) as f:
        f.write(data)
    return os.fspath(path)
