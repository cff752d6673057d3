"""gpuaccel._checksum: the SHA-256 trailer of the files gpuaccel reads back. Every truncation and
every changed byte is detected and named; files of other programs are read unchecked only when
the caller says so; the trailer does not stop NumPy from reading an .npz."""
import io
import zipfile

import numpy as np
import pytest

from gpuaccel import _checksum
from gpuaccel.errors import DataLossError


def test_round_trip_and_the_payload_comes_back_unchanged(tmp_path):
    payload = np.random.default_rng(0).bytes(3000)
    path = tmp_path / "f.bin"
    _checksum.write_with_checksum(path, payload)
    assert path.stat().st_size == len(payload) + _checksum.TRAILER_SIZE
    assert _checksum.verify(path) == payload
    assert _checksum.has_checksum(path.read_bytes()) and not _checksum.has_checksum(payload)


def test_every_truncation_is_detected(tmp_path):
    data = _checksum.with_checksum(b"0123456789" * 20)
    path = tmp_path / "cut.bin"
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        with pytest.raises(DataLossError, match=r"'.*cut\.bin' \(\d+ bytes\).*truncated") as e:
            _checksum.verify(path, what="weights file")
        assert e.value.filename == str(path)
        assert isinstance(e.value, OSError)  # what Keras's h5py readers raise


def test_every_changed_byte_is_detected(tmp_path):
    data = _checksum.with_checksum(b"weights" * 30)
    path = tmp_path / "bit.bin"
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x20
        path.write_bytes(bytes(damaged))
        with pytest.raises(DataLossError, match="bit.bin"):
            _checksum.verify(path)


def test_files_without_a_trailer(tmp_path):
    path = tmp_path / "foreign.h5"
    path.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(100))
    with pytest.raises(DataLossError, match="not written by gpuaccel"):
        _checksum.verify(path)
    assert _checksum.verify(path, required=False) == path.read_bytes()
    with pytest.raises(FileNotFoundError, match="No weights file at .*missing"):
        _checksum.verify(tmp_path / "missing", what="weights file")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        _checksum.verify(tmp_path)


def test_zip_readers_ignore_the_trailer():
    # An .npz with its trailer still opens with NumPy and zipfile, for users who inspect one.
    buffer = io.BytesIO()
    np.savez(buffer, a=np.arange(5))
    data = _checksum.with_checksum(buffer.getvalue())
    with np.load(io.BytesIO(data)) as archive:
        np.testing.assert_array_equal(archive["a"], np.arange(5))
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
