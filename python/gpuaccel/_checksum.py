"""Files gpuaccel writes to be read back (weights, training checkpoints) end with a SHA-256
checksum of everything before it, checked before a byte of them is parsed.

An atomic write (``_atomic_file``) guarantees a reader never sees a half-written file of ours,
but not that the file stays whole afterwards: a copy cut short, a full disk during ``cp``, a
flipped bit on a USB stick. Without a check such a file loads as garbage weights or fails deep
inside a parser with an error that names neither the file nor the problem. With it, a damaged
file is a :class:`gpuaccel.errors.DataLossError` naming the file and what is wrong.

The checksum is a fixed-size trailer appended to the payload, so any format can carry it: a
NumPy ``.npz`` (zip readers find their directory from the end and ignore what follows) or an
HDF5 ``.weights.h5`` (HDF5 ignores bytes past its end-of-file address). Readers call
:func:`verify` and parse the payload it returns from memory::

    write_with_checksum(path, payload_bytes)
    payload = verify(path, what="weights file")
"""
from __future__ import annotations

import hashlib
import os

from ._atomic_file import atomic_write_bytes
from .errors import DataLossError

__all__ = ["TRAILER_SIZE", "with_checksum", "write_with_checksum", "has_checksum", "verify"]

_MAGIC = b"\n#gpuaccel-sha256:"
_DIGEST_HEX = 64
TRAILER_SIZE = len(_MAGIC) + _DIGEST_HEX + 1  # magic, hex digest, newline


def with_checksum(payload: bytes) -> bytes:
    """``payload`` followed by its checksum trailer."""
    digest = hashlib.sha256(payload).hexdigest().encode("ascii")
    return bytes(payload) + _MAGIC + digest + b"\n"


def write_with_checksum(path: str | os.PathLike, payload: bytes) -> str:
    """Writes ``payload`` and its checksum to ``path`` atomically; returns the path."""
    return atomic_write_bytes(path, with_checksum(payload))


def _trailer_digest(data: bytes):
    """The hex digest recorded in ``data``'s trailer, or None when it has no trailer."""
    if len(data) < TRAILER_SIZE:
        return None
    trailer = data[-TRAILER_SIZE:]
    if not trailer.startswith(_MAGIC) or not trailer.endswith(b"\n"):
        return None
    digest = trailer[len(_MAGIC):-1]
    if len(digest) != _DIGEST_HEX or any(c not in b"0123456789abcdef" for c in digest):
        return None
    return digest.decode("ascii")


def has_checksum(data: bytes) -> bool:
    """True when ``data`` ends with a (well-formed) checksum trailer."""
    return _trailer_digest(data) is not None


def verify(path: str | os.PathLike, what: str = "file", required: bool = True) -> bytes:
    """The payload of the file at ``path`` after checking its checksum.

    ``what`` names the kind of file in error messages ("weights file", "training checkpoint").
    A missing file is ``FileNotFoundError``. A file without a trailer is a ``DataLossError``
    (truncated, or not written by gpuaccel) unless ``required`` is False, in which case its
    whole content is returned unchecked (files written by other programs, e.g. Keras's own
    ``.weights.h5``). A trailer whose digest does not match is always a ``DataLossError``.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"No {what} at {path!r}") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{path!r} is a directory, not a {what}") from None
    recorded = _trailer_digest(data)
    if recorded is None:
        if not required:
            return data
        raise DataLossError(
            f"The {what} {path!r} ({len(data)} bytes) has no gpuaccel checksum at its end: it "
            "was truncated (a copy or download cut short) or was not written by gpuaccel. "
            "Restore it from a backup or write it again.", filename=path)
    payload = data[:-TRAILER_SIZE]
    actual = hashlib.sha256(payload).hexdigest()
    if actual != recorded:
        raise DataLossError(
            f"The {what} {path!r} is corrupted: the SHA-256 of its {len(payload)} bytes is "
            f"{actual[:16]}..., but it was written with {recorded[:16]}... Its content changed "
            "after it was written (a damaged copy or disk); restore it from a backup or write "
            "it again.", filename=path)
    return payload
