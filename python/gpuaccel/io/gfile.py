"""``tf.io.gfile``: TensorFlow's file API on the local filesystem.

Why not plain ``open``/``os``: course code written for TF calls ``tf.io.gfile.glob``,
``GFile(path, 'w')``, ``makedirs``... and catches TF's errors (``tf.errors.NotFoundError`` for a
missing file, ``AlreadyExistsError`` from ``copy``/``rename`` without ``overwrite``). These
functions are Python's file operations with TF's semantics and error types. Only local paths:
TF's other filesystems (``gs://``, ``hdfs://``) raise UnimplementedError here.

``glob`` returns its matches sorted (TF's order is the filesystem's, unspecified), so
``Dataset.list_files(..., shuffle=False)`` is TF's sorted order.
"""
import contextlib
import errno
import glob as _glob
import os
import shutil

from .. import errors
from .._host_strings import to_path

__all__ = ["GFile", "copy", "exists", "glob", "isdir", "join", "listdir", "makedirs", "mkdir",
           "remove", "rename", "rmtree", "stat", "walk", "matching_files"]

_ERRORS_BY_ERRNO = {
    errno.ENOENT: (errors.NotFoundError, "No such file or directory"),
    errno.EISDIR: (errors.FailedPreconditionError, "Is a directory"),
    errno.ENOTDIR: (errors.FailedPreconditionError, "Not a directory"),
    errno.EEXIST: (errors.AlreadyExistsError, "File exists"),
    errno.EACCES: (errors.PermissionDeniedError, "Permission denied"),
    errno.EPERM: (errors.PermissionDeniedError, "Operation not permitted"),
    errno.ENOTEMPTY: (errors.FailedPreconditionError, "Directory not empty"),
}


@contextlib.contextmanager
def tf_errors(path, op=None):
    """Turns the OSError of a file operation on ``path`` into TF's error for it
    ("<path>; No such file or directory" as a NotFoundError, ...)."""
    try:
        yield
    except OSError as error:
        if isinstance(error, errors.OpError):
            raise
        cls, text = _ERRORS_BY_ERRNO.get(error.errno, (None, None))
        if cls is None:
            raise
        raise cls(f"{path}; {text}", op) from error


def _local(path, what="path"):
    text = to_path(path, what)
    if "://" in text:
        raise errors.UnimplementedError(
            f"File system scheme '{text.split('://', 1)[0]}' not implemented (file: '{text}'); "
            "gpuaccel reads and writes local files only")
    return text


def exists(path):
    """Whether ``path`` (a file or a directory) exists."""
    return os.path.exists(_local(path))


def isdir(path):
    """Whether ``path`` is a directory (False when it does not exist)."""
    return os.path.isdir(_local(path))


def join(path, *paths):
    return os.path.join(path, *paths)


def listdir(path):
    """The names in directory ``path`` (no '.'/'..'); NotFoundError when it is not a directory."""
    path = _local(path)
    if not os.path.isdir(path):
        raise errors.NotFoundError(f"Could not find directory {path}")
    return os.listdir(path)


def mkdir(path):
    """Creates directory ``path`` (its parent must exist); an existing directory is fine."""
    path = _local(path)
    if os.path.isdir(path):
        return
    with tf_errors(path):
        os.mkdir(path)


def makedirs(path):
    """Creates ``path`` and its missing parents; FailedPreconditionError when a parent is a file."""
    path = _local(path)
    parent = path
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent.rstrip(os.sep)) if parent != os.sep else ""
    if parent and not os.path.isdir(parent):
        raise errors.FailedPreconditionError(f"{parent} is not a directory")
    with tf_errors(path):
        os.makedirs(path, exist_ok=True)


def remove(path):
    """Deletes file ``path``; NotFoundError when missing, FailedPrecondition for a directory."""
    path = _local(path)
    if os.path.isdir(path):
        raise errors.FailedPreconditionError(f"{path}; Is a directory")
    with tf_errors(path):
        os.remove(path)


def rmtree(path):
    """Deletes ``path`` and everything under it (a file is deleted too)."""
    path = _local(path)
    if not os.path.exists(path):
        raise errors.NotFoundError(f"{path} not found")
    with tf_errors(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def copy(src, dst, overwrite=False):
    """Copies file ``src`` to ``dst``; AlreadyExistsError when ``dst`` exists (or is a
    directory) and not ``overwrite``."""
    src, dst = _local(src, "src"), _local(dst, "dst")
    if not os.path.exists(src):
        raise errors.NotFoundError(f"{src}; No such file or directory")
    if os.path.exists(dst) and (not overwrite or os.path.isdir(dst)):
        raise errors.AlreadyExistsError("file already exists")
    with tf_errors(src):
        shutil.copyfile(src, dst)


def rename(src, dst, overwrite=False):
    """Renames (moves) ``src`` to ``dst``; AlreadyExistsError when ``dst`` exists and not
    ``overwrite``."""
    src, dst = _local(src, "src"), _local(dst, "dst")
    if not os.path.exists(src):
        raise errors.NotFoundError(f"{src}; No such file or directory")
    if os.path.exists(dst) and not overwrite:
        raise errors.AlreadyExistsError("file already exists")
    with tf_errors(src):
        os.replace(src, dst)


class FileStatistics:
    """``stat``'s answer: ``length`` (bytes), ``mtime_nsec``, ``is_directory``."""

    def __init__(self, length, mtime_nsec, is_directory):
        self.length, self.mtime_nsec, self.is_directory = length, mtime_nsec, is_directory


def stat(path):
    path = _local(path)
    with tf_errors(path):
        info = os.stat(path)
    return FileStatistics(info.st_size, info.st_mtime_ns, os.path.isdir(path))


def walk(top, topdown=True, onerror=None):
    """(dirpath, dirnames, filenames) for ``top`` and each directory under it; nothing for a
    missing ``top`` (as TF)."""
    top = _local(top, "top")
    if not os.path.isdir(top):
        return
    yield from os.walk(top, topdown=topdown, onerror=onerror)


def glob(pattern):
    """The paths that match ``pattern`` (or any of a list of patterns; shell wildcards * ? [..]),
    sorted; an empty list when none match."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    matches = set()
    for p in patterns:
        matches.update(_glob.glob(_local(p, "pattern")))
    return sorted(matches)


def matching_files(pattern):
    """TF's MatchingFiles (used by ``Dataset.list_files``): every match of each pattern, sorted
    all together; a file matched by two patterns is listed twice, as TF's op lists it."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    return sorted(path for p in patterns for path in _glob.glob(_local(p, "file_pattern")))


_MODES = ("r", "w", "a", "r+", "w+", "a+")


class GFile:
    """``tf.io.gfile.GFile(name, mode='r')``: a file object whose reads return ``str`` in text
    modes and ``bytes`` with 'b'; ``write`` takes either. The file is opened on first use (a
    missing file fails at the first read, as TF's)."""

    def __init__(self, name, mode="r"):
        if not isinstance(mode, str) or mode.replace("b", "") not in _MODES:
            raise errors.InvalidArgumentError(
                "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'", "GFile")
        self.name = _local(name, "name")
        self.mode = mode
        self._binary = "b" in mode
        self._file = None

    def _opened(self, writing):
        if writing and self.mode.replace("b", "") == "r":
            raise errors.PermissionDeniedError("File isn't open for writing", "GFile")
        if not writing and self.mode.replace("b", "") in ("w", "a"):
            raise errors.PermissionDeniedError("File isn't open for reading", "GFile")
        if self._file is None:
            with tf_errors(self.name):
                self._file = open(self.name, self.mode.replace("b", "") + "b")  # noqa: SIM115
        return self._file

    def _text(self, data):
        return data if self._binary else data.decode("utf-8")

    def read(self, n=-1):
        """``n`` bytes (all that remain for -1), as str in text mode."""
        return self._text(self._opened(False).read(n))

    def readline(self):
        return self._text(self._opened(False).readline())

    def readlines(self):
        return [self._text(line) for line in self._opened(False).readlines()]

    def __iter__(self):
        return iter(self.readlines())

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def write(self, file_content):
        if isinstance(file_content, str):
            file_content = file_content.encode("utf-8")
        elif not isinstance(file_content, (bytes, bytearray, memoryview)):
            raise TypeError(f"Expected binary or unicode string, got {file_content!r}")
        self._opened(True).write(file_content)

    def size(self):
        with tf_errors(self.name):
            return os.path.getsize(self.name)

    def seek(self, offset=None, whence=0, position=None):
        self._opened(self.mode.replace("b", "") in ("w", "a")).seek(
            offset if position is None else position, whence)

    def tell(self):
        return self._opened(self.mode.replace("b", "") in ("w", "a")).tell()

    def seekable(self):
        return True

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
