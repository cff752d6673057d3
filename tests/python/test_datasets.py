"""gpuaccel.keras.datasets: idx/npz parsing, the search order, the not-found error, and the real
Fashion-MNIST files from Debian's dataset-fashion-mnist package. No test touches the network:
downloads are disabled and urlopen is replaced by a function that fails the test."""
import gzip
import os
import struct

import numpy as np
import pytest

import gpuaccel
from gpuaccel.keras.datasets import _files, fashion_mnist, mnist
from gpuaccel.keras.datasets import DatasetFormatError, DatasetNotFoundError

DEBIAN_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_NAMES = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No network, no user cache, no GPUACCEL_DATA, no Debian files unless a test asks."""
    def no_network(*args, **kwargs):
        raise AssertionError("a dataset test tried to use the network")
    monkeypatch.setattr(_files.urllib.request, "urlopen", no_network)
    monkeypatch.setenv(_files.NO_DOWNLOAD_ENV, "1")
    monkeypatch.delenv(_files.DATA_ENV, raising=False)
    monkeypatch.delenv("KERAS_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(fashion_mnist, "_DEBIAN_DIR", str(tmp_path / "no-debian"))
    return home


def idx_bytes(array, code=0x08, dtype=">u1"):
    header = bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", d) for d in array.shape)
    return header + np.ascontiguousarray(array, dtype=dtype).tobytes()


def write_fashion(folder, n_train=12, n_test=5, seed=0, compress=True):
    """Small Fashion-MNIST-shaped files; returns the arrays written."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte.gz": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte.gz": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte.gz": rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    for name, a in arrays.items():
        data = idx_bytes(a)
        if compress:
            (folder / name).write_bytes(gzip.compress(data))
        else:
            (folder / name[:-3]).write_bytes(data)
    return arrays


def assert_matches(result, arrays):
    (x_train, y_train), (x_test, y_test) = result
    names = FASHION_NAMES
    for got, name in zip((x_train, y_train, x_test, y_test), names):
        np.testing.assert_array_equal(got, arrays[name])
        assert got.dtype == np.uint8


# ---- idx parsing ----

def test_parse_idx_uint8_3d():
    a = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    out = _files.parse_idx(idx_bytes(a))
    assert out.shape == (2, 3, 4) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, a)


def test_parse_idx_big_endian_types_become_native():
    a = np.array([[1, -2, 70000], [5, 6, -7]], dtype=np.int32)
    out = _files.parse_idx(idx_bytes(a, code=0x0C, dtype=">i4"))
    assert out.dtype == np.dtype("int32") and out.dtype.isnative
    np.testing.assert_array_equal(out, a)
    f = np.array([1.5, -2.25], dtype=np.float32)
    np.testing.assert_array_equal(_files.parse_idx(idx_bytes(f, code=0x0D, dtype=">f4")), f)


def test_parse_idx_bad_magic_names_what_was_found():
    data = b"\x12\x34\x08\x01" + struct.pack(">I", 3) + b"abc"
    with pytest.raises(DatasetFormatError, match=r"bad idx magic number 0x12340801"):
        _files.parse_idx(data, source="x.idx")
    with pytest.raises(ValueError, match="type code"):  # unknown type code 0x07
        _files.parse_idx(b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"a")


def test_parse_idx_truncated_data_and_header():
    a = np.zeros((4, 28, 28), np.uint8)
    data = idx_bytes(a)
    with pytest.raises(DatasetFormatError, match=r"truncated.*\(4, 28, 28\).*3136 data bytes.*3000"):
        _files.parse_idx(data[:16 + 3000], source="imgs")
    with pytest.raises(DatasetFormatError, match="truncated idx header"):
        _files.parse_idx(data[:9])
    with pytest.raises(DatasetFormatError, match="too short"):
        _files.parse_idx(b"\x00\x00")
    with pytest.raises(DatasetFormatError, match="trailing bytes"):
        _files.parse_idx(data + b"\x00")


def test_read_idx_damaged_gzip(tmp_path):
    p = tmp_path / "train-labels-idx1-ubyte.gz"
    p.write_bytes(gzip.compress(idx_bytes(np.arange(100, dtype=np.uint8)))[:30])
    with pytest.raises(DatasetFormatError, match="gzip data is damaged or truncated"):
        _files.read_idx(str(p))


# ---- Fashion-MNIST search order ----

def test_fashion_path_argument(tmp_path):
    arrays = write_fashion(tmp_path / "mine")
    assert_matches(fashion_mnist.load_data(path=str(tmp_path / "mine")), arrays)


def test_fashion_uncompressed_files(tmp_path):
    arrays = write_fashion(tmp_path / "raw", compress=False)
    assert_matches(fashion_mnist.load_data(path=tmp_path / "raw"), arrays)


def test_fashion_search_order(tmp_path, monkeypatch, isolated):
    data = tmp_path / "data"
    cache = isolated / ".keras" / "datasets" / "fashion-mnist"
    debian = tmp_path / "debian"
    monkeypatch.setattr(fashion_mnist, "_DEBIAN_DIR", str(debian))
    in_debian = write_fashion(debian, seed=4)
    assert_matches(fashion_mnist.load_data(), in_debian)
    in_cache = write_fashion(cache, seed=3)
    assert_matches(fashion_mnist.load_data(), in_cache)
    monkeypatch.setenv("GPUACCEL_DATA", str(data))
    in_root = write_fashion(data, seed=2)
    assert_matches(fashion_mnist.load_data(), in_root)
    in_sub = write_fashion(data / "fashion-mnist", seed=1)
    assert_matches(fashion_mnist.load_data(), in_sub)
    explicit = write_fashion(tmp_path / "explicit", seed=0)
    assert_matches(fashion_mnist.load_data(path=tmp_path / "explicit"), explicit)
    # An incomplete folder earlier in the order is skipped, not half-used.
    os.remove(data / "fashion-mnist" / "t10k-labels-idx1-ubyte.gz")
    assert_matches(fashion_mnist.load_data(), in_root)


def test_fashion_not_found_lists_every_place(tmp_path, monkeypatch, isolated):
    monkeypatch.setenv("GPUACCEL_DATA", str(tmp_path / "shared"))
    partial = tmp_path / "partial"
    write_fashion(partial)
    os.remove(partial / "train-images-idx3-ubyte.gz")
    with pytest.raises(DatasetNotFoundError) as info:
        fashion_mnist.load_data(path=str(partial))
    text = str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, gpuaccel.errors.NotFoundError)
    places = [str(partial), str(tmp_path / "shared" / "fashion-mnist"), str(tmp_path / "shared"),
              str(isolated / ".keras" / "datasets" / "fashion-mnist"), str(tmp_path / "no-debian")]
    positions = [text.index(f"  - {p} (") for p in places]
    assert positions == sorted(positions)
    assert f"{partial} (missing train-images-idx3-ubyte.gz)" in text
    assert "apt install dataset-fashion-mnist" in text
    assert "GPUACCEL_DATA" in text and "path=" in text


def test_fashion_mismatched_counts(tmp_path):
    folder = tmp_path / "bad"
    write_fashion(folder, n_train=6)
    (folder / "train-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(idx_bytes(np.zeros(5, np.uint8))))
    with pytest.raises(DatasetFormatError, match="holds 6 images but .* holds 5 labels"):
        fashion_mnist.load_data(path=folder)


def test_fashion_download_is_atomic_and_verified(tmp_path, monkeypatch, isolated):
    """With downloads allowed, a payload with the wrong hash is never saved under its name."""
    monkeypatch.delenv(_files.NO_DOWNLOAD_ENV)
    served = []

    class FakeResponse:
        def __init__(self, data):
            self.data = data
        def read(self, n):
            out, self.data = self.data[:n], self.data[n:]
            return out
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return False

    def fake_urlopen(url, timeout=None):
        served.append(url)
        return FakeResponse(gzip.compress(idx_bytes(np.zeros(3, np.uint8))))

    monkeypatch.setattr(_files.urllib.request, "urlopen", fake_urlopen)
    with pytest.raises(DatasetNotFoundError, match="failed its SHA-256 check"):
        fashion_mnist.load_data()
    assert served == [fashion_mnist._BASE_URL + "train-images-idx3-ubyte.gz"]
    cache = isolated / ".keras" / "datasets" / "fashion-mnist"
    assert list(cache.iterdir()) == []  # no partial or unverified file left behind


# ---- MNIST ----

def write_mnist(path, n=7, seed=0):
    rng = np.random.default_rng(seed)
    arrays = dict(x_train=rng.integers(0, 256, (n, 28, 28), dtype=np.uint8),
                  y_train=rng.integers(0, 10, n, dtype=np.uint8),
                  x_test=rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
                  y_test=rng.integers(0, 10, 3, dtype=np.uint8))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return arrays


def assert_mnist(result, arrays):
    (x_train, y_train), (x_test, y_test) = result
    for got, key in zip((x_train, y_train, x_test, y_test), ("x_train", "y_train", "x_test", "y_test")):
        np.testing.assert_array_equal(got, arrays[key])
        assert got.dtype == np.uint8


def test_mnist_search_order(tmp_path, monkeypatch, isolated):
    cached = write_mnist(isolated / ".keras" / "datasets" / "mnist.npz", seed=2)
    assert_mnist(mnist.load_data(), cached)
    monkeypatch.setenv("GPUACCEL_DATA", str(tmp_path / "data"))
    shared = write_mnist(tmp_path / "data" / "mnist.npz", seed=1)
    assert_mnist(mnist.load_data(), shared)
    mine = write_mnist(tmp_path / "mine" / "mnist.npz", seed=0)
    assert_mnist(mnist.load_data(path=str(tmp_path / "mine" / "mnist.npz")), mine)
    assert_mnist(mnist.load_data(path=tmp_path / "mine"), mine)  # a folder holding it


def test_mnist_not_found_and_bad_archive(tmp_path, isolated):
    with pytest.raises(DatasetNotFoundError) as info:
        mnist.load_data(path=str(tmp_path / "nowhere.npz"))
    text = str(info.value)
    assert f"{tmp_path / 'nowhere.npz'} (no such file)" in text
    assert str(isolated / ".keras" / "datasets" / "mnist.npz") in text
    bad = tmp_path / "bad.npz"
    np.savez(bad, x_train=np.zeros((2, 28, 28), np.uint8))
    with pytest.raises(DatasetFormatError, match="lacks y_train, x_test, y_test"):
        mnist.load_data(path=bad)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(DatasetFormatError, match="not a readable .npz"):
        mnist.load_data(path=junk)


# ---- the real Fashion-MNIST from Debian ----

def independent_parse(path):
    """A second reader, written only from the idx layout: 16-byte header for images, 8 for
    labels, then raw uint8."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def test_real_fashion_mnist_from_debian(monkeypatch):
    assert all(os.path.isfile(os.path.join(DEBIAN_DIR, n)) for n in FASHION_NAMES), (
        "install Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist)")
    monkeypatch.setattr(fashion_mnist, "_DEBIAN_DIR", DEBIAN_DIR)
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    assert x_train.shape == (60000, 28, 28) and x_test.shape == (10000, 28, 28)
    assert y_train.shape == (60000,) and y_test.shape == (10000,)
    assert {a.dtype for a in (x_train, y_train, x_test, y_test)} == {np.dtype(np.uint8)}
    assert np.bincount(y_train, minlength=10).tolist() == [6000] * 10
    assert np.bincount(y_test, minlength=10).tolist() == [1000] * 10
    for got, name in zip((x_train, y_train, x_test, y_test), FASHION_NAMES):
        np.testing.assert_array_equal(got, independent_parse(os.path.join(DEBIAN_DIR, name)))
    assert 0 < x_train.mean() < 255 and x_train.max() == 255
