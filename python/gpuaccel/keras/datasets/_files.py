"""Finding, reading and (when online) fetching dataset files for ``gpuaccel.keras.datasets``.

Course machines are often offline or behind a slow link, so every loader first looks in a list
of local places (an explicit ``path``, ``$GPUACCEL_DATA``, the Keras cache, Debian's dataset
packages) and only then downloads from the public location Keras uses, verifying a SHA-256
before the file is moved into the cache. When nothing works the error lists every place that
was searched and the ways to provide the files. Parsing lives here too so that MNIST-style
``idx`` files and ``.npz`` archives are read the same way by every loader.
"""
import gzip
import hashlib
import os
import tempfile
import urllib.error
import urllib.request

import numpy as np

from ... import errors
from ..._atomic_file import remove_quietly

__all__ = ["DatasetNotFoundError", "DatasetFormatError", "read_idx", "keras_home",
           "keras_cache_dir", "data_root", "download"]

# Environment variable that names a folder of pre-downloaded datasets (a course's shared drive).
DATA_ENV = "GPUACCEL_DATA"
# Set to 1 to forbid downloads (tests, air-gapped labs): a missing dataset is then an error.
NO_DOWNLOAD_ENV = "GPUACCEL_NO_DOWNLOAD"

_GZIP_MAGIC = b"\x1f\x8b"
_DOWNLOAD_CHUNK = 1 << 20

# idx type codes (third byte of the magic number) and the big-endian NumPy dtype they store.
_IDX_DTYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


class DatasetNotFoundError(errors.NotFoundError, FileNotFoundError):
    """A dataset's files are in none of the places searched and could not be downloaded.

    Both a ``FileNotFoundError`` (what ``open`` raises) and ``gpuaccel.errors.NotFoundError``."""

    def __init__(self, message):
        super().__init__(message)


class DatasetFormatError(ValueError):
    """A dataset file exists but is not what its name promises (bad magic, truncated, ...)."""


def data_root():
    """The folder named by ``$GPUACCEL_DATA``, or None when unset or empty."""
    root = os.environ.get(DATA_ENV, "").strip()
    return os.path.expanduser(root) if root else None


def keras_home():
    """Keras's cache root: ``$KERAS_HOME`` or ``~/.keras``."""
    home = os.environ.get("KERAS_HOME", "").strip()
    return os.path.expanduser(home) if home else os.path.join(os.path.expanduser("~"), ".keras")


def keras_cache_dir():
    """Keras's dataset cache: ``$KERAS_HOME/datasets`` or ``~/.keras/datasets``."""
    return os.path.join(keras_home(), "datasets")


def downloads_allowed():
    return os.environ.get(NO_DOWNLOAD_ENV, "").strip() not in ("1", "true", "yes")


def _read_bytes(path):
    """The file's bytes, gunzipped when the file is gzip data (whatever its name says)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise DatasetFormatError(
                f"{path}: the gzip data is damaged or truncated ({e}); delete the file and "
                "download it again") from None
    return raw


def parse_idx(data, source="<bytes>"):
    """An ``idx`` payload (MNIST's format) as a NumPy array in native byte order.

    Layout: two zero bytes, a type code, the number of dimensions, then one big-endian uint32
    per dimension, then the values row-major and big-endian."""
    if len(data) < 4:
        raise DatasetFormatError(
            f"{source}: {len(data)} bytes is too short for an idx file (it needs at least the "
            "4-byte magic number)")
    zero0, zero1, code, ndim = data[0], data[1], data[2], data[3]
    if zero0 != 0 or zero1 != 0 or code not in _IDX_DTYPES:
        raise DatasetFormatError(
            f"{source}: bad idx magic number 0x{int.from_bytes(data[:4], 'big'):08X}; an idx "
            "file starts with 0x0000 followed by a type code (0x08 uint8, 0x09 int8, 0x0B int16, "
            "0x0C int32, 0x0D float32, 0x0E float64) and the number of dimensions, e.g. "
            "0x00000803 for uint8 images")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetFormatError(
            f"{source}: truncated idx header: {ndim} dimensions need {header} header bytes, the "
            f"file has {len(data)}")
    dims = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    body = len(data) - header
    if body != expected:
        what = "truncated" if body < expected else "has trailing bytes"
        raise DatasetFormatError(
            f"{source}: idx file {what}: shape {dims} of {dtype.name} needs {expected} data "
            f"bytes after the header, the file has {body}")
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    return array.astype(dtype.newbyteorder("="), copy=True)


def read_idx(path):
    """The array stored in an idx file, gzip-compressed or not."""
    return parse_idx(_read_bytes(path), source=path)


def sha256_of(data):
    return hashlib.sha256(data).hexdigest()


def download(url, dest, check):
    """Fetches ``url`` to ``dest`` atomically: the bytes go to a temporary file next to
    ``dest``; ``check(path)`` must return True (a hash matched) before the file is renamed into
    place, so an interrupted or corrupted download never poses as the dataset."""
    folder = os.path.dirname(dest) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dest) + ".", suffix=".part", dir=folder)
    try:
        # mkstemp makes the file private (0600); a cache is shared, as the one urllib would
        # have written (umask's 0644). (_atomic_file.atomic_open cannot serve here: ``check``
        # needs the temporary file's path before the rename.)
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            while True:
                chunk = response.read(_DOWNLOAD_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
        if not check(tmp):
            raise DatasetFormatError(
                f"the file downloaded from {url} failed its SHA-256 check (a corrupted or "
                "changed download); nothing was saved. Try again, or provide the file yourself")
        os.replace(tmp, dest)
    except BaseException:
        remove_quietly(tmp)
        raise


def not_found(dataset, searched, how, download_error=None):
    """The error raised when a dataset is nowhere: every place searched, and what to do."""
    lines = [f"{dataset} was not found. Places searched, in order:"]
    lines += [f"  - {place}" for place in searched]
    if download_error is not None:
        lines.append(f"Downloading it failed: {download_error}")
    elif not downloads_allowed():
        lines.append(f"Downloading is disabled (${NO_DOWNLOAD_ENV} is set).")
    lines.append("To provide it:")
    lines += [f"  - {h}" for h in how]
    return DatasetNotFoundError("\n".join(lines))
