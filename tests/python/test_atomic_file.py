"""gpuaccel._atomic_file: a write replaces the file whole or not at all, and the temporary files
of writes killed half way are removed by the next write to the same path, but not those of a
write still running."""
import os
import signal
import subprocess
import sys

import pytest

from gpuaccel import _atomic_file

from runtime_fixtures import package_environment

KILLED_WRITER = """
import os, signal, sys
from gpuaccel import _atomic_file
with _atomic_file.atomic_open(sys.argv[1]) as f:
    f.write(b"half of it")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_write_replaces_whole_and_an_error_keeps_the_old_content(tmp_path):
    path = tmp_path / "sub" / "f.bin"
    _atomic_file.atomic_write_bytes(path, b"first")
    with pytest.raises(RuntimeError):
        with _atomic_file.atomic_open(path) as f:
            f.write(b"second, unfinished")
            raise RuntimeError("boom")
    assert path.read_bytes() == b"first"
    assert os.listdir(path.parent) == ["f.bin"]
    with pytest.raises(ValueError, match="empty path"):
        _atomic_file.atomic_write_bytes("", b"")


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    path = tmp_path / "model.weights.npz"
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)],
                              env=package_environment())
        assert done.returncode == -signal.SIGKILL
    # The second writer already removed the first one's leftover; its own is left.
    leftovers = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(leftovers) == 1 and not path.exists()
    # An older gpuaccel's leftover (no pid in the name), long abandoned, goes too.
    legacy = tmp_path / ".model.weights.npz.abcd1234.tmp"
    legacy.write_bytes(b"old")
    os.utime(legacy, (0, 0))
    # Files of other paths are not touched.
    other = tmp_path / ".other.npz.1.abcd.tmp"
    other.write_bytes(b"x")
    _atomic_file.atomic_write_bytes(path, b"whole")
    assert sorted(os.listdir(tmp_path)) == [".other.npz.1.abcd.tmp", "model.weights.npz"]
    assert path.read_bytes() == b"whole"


def test_temporary_files_of_live_writers_are_kept(tmp_path):
    path = tmp_path / "f.bin"
    # This process, mid-write: a second write of the same path leaves the first one's file.
    with _atomic_file.atomic_open(path) as f:
        f.write(b"a")
        _atomic_file.atomic_write_bytes(path, b"b")
        assert len([n for n in os.listdir(tmp_path) if n.endswith(".tmp")]) == 1
    assert path.read_bytes() == b"a"
    # Another live process (the parent of this one is certainly alive).
    alive = tmp_path / f".f.bin.{os.getppid()}.zzzz.tmp"
    alive.write_bytes(b"in progress")
    # A recent legacy name: its writer may still be running.
    recent = tmp_path / ".f.bin.qwerty12.tmp"
    recent.write_bytes(b"in progress")
    _atomic_file.atomic_write_bytes(path, b"c")
    assert alive.exists() and recent.exists()
