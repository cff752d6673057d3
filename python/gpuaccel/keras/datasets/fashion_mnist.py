"""``keras.datasets.fashion_mnist.load_data()``: Zalando's 28x28 clothing images, 10 classes.

Same return value as Keras (uint8 arrays, (60000, 28, 28) / (60000,) for training and
(10000, 28, 28) / (10000,) for test). The four idx files are looked for, in order, in ``path``,
``$GPUACCEL_DATA/fashion-mnist/``, ``$GPUACCEL_DATA``, the Keras cache
``~/.keras/datasets/fashion-mnist/`` and Debian's ``dataset-fashion-mnist`` package; if none
has them, they are downloaded from Keras's public bucket into the Keras cache.
"""
import gzip
import os

from . import _files

__all__ = ["load_data"]

_BASE_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
# Where Debian's dataset-fashion-mnist package installs the original gzip files.
_DEBIAN_DIR = "/usr/share/datasets/fashion-mnist"
_CACHE_SUBDIR = "fashion-mnist"

# SHA-256 of each file's *decompressed* idx payload. Keras publishes no hashes for these files,
# and mirrors recompress them (Debian's .gz bytes differ from Zalando's), so the data itself
# is what gets verified.
_FILES = {
    "train-images-idx3-ubyte.gz": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte.gz": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte.gz": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte.gz": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}


def _find(folder, name):
    """``folder/name`` or its uncompressed twin, whichever exists (None if neither)."""
    for candidate in (name, name[:-3]):
        p = os.path.join(folder, candidate)
        if os.path.isfile(p):
            return p
    return None


def _candidates(path):
    places = []
    if path is not None:
        places.append(os.path.expanduser(os.fspath(path)))
    root = _files.data_root()
    if root:
        places += [os.path.join(root, "fashion-mnist"), root]
    places.append(os.path.join(_files.keras_cache_dir(), _CACHE_SUBDIR))
    places.append(_DEBIAN_DIR)
    return places


def _describe(folder):
    if not os.path.isdir(folder):
        return f"{folder} (no such directory)"
    missing = [n for n in _FILES if _find(folder, n) is None]
    return f"{folder} (missing {', '.join(missing)})"


def _payload_matches(expected):
    def check(tmp):
        with gzip.open(tmp, "rb") as f:
            return _files.sha256_of(f.read()) == expected
    return check


def _download_all(folder):
    for name, digest in _FILES.items():
        dest = os.path.join(folder, name)
        if _find(folder, name) is None:
            _files.download(_BASE_URL + name, dest, _payload_matches(digest))


def _load_pair(folder, images_name, labels_name):
    images_path, labels_path = _find(folder, images_name), _find(folder, labels_name)
    images, labels = _files.read_idx(images_path), _files.read_idx(labels_path)
    if images.ndim != 3 or images.dtype.name != "uint8":
        raise _files.DatasetFormatError(
            f"{images_path}: expected uint8 images of shape (count, rows, cols), found "
            f"{images.dtype.name} of shape {images.shape}")
    if labels.ndim != 1 or labels.dtype.name != "uint8":
        raise _files.DatasetFormatError(
            f"{labels_path}: expected uint8 labels of shape (count,), found {labels.dtype.name} "
            f"of shape {labels.shape}")
    if len(images) != len(labels):
        raise _files.DatasetFormatError(
            f"{images_path} holds {len(images)} images but {labels_path} holds {len(labels)} "
            "labels; the two files must have the same count")
    return images, labels


def load_data(path=None):
    """Loads Fashion-MNIST as ``((x_train, y_train), (x_test, y_test))`` of uint8 NumPy arrays.

    Args:
        path: optional directory holding ``train-images-idx3-ubyte.gz``,
            ``train-labels-idx1-ubyte.gz``, ``t10k-images-idx3-ubyte.gz`` and
            ``t10k-labels-idx1-ubyte.gz`` (uncompressed copies without ``.gz`` work too).
    Raises:
        DatasetNotFoundError (a FileNotFoundError and gpuaccel.errors.NotFoundError) when the
        files are found nowhere and cannot be downloaded; DatasetFormatError (a ValueError) when
        a file is damaged.
    """
    places = _candidates(path)
    folder = next((p for p in places if all(_find(p, n) for n in _FILES)), None)
    download_error = None
    if folder is None and _files.downloads_allowed():
        cache = os.path.join(_files.keras_cache_dir(), _CACHE_SUBDIR)
        try:
            _download_all(cache)
            folder = cache
        except (OSError, _files.urllib.error.URLError, _files.DatasetFormatError) as e:
            download_error = e
    if folder is None:
        raise _files.not_found(
            "Fashion-MNIST", [_describe(p) for p in places],
            ["set the environment variable GPUACCEL_DATA to a folder holding fashion-mnist/ "
             "with the four idx .gz files",
             "on Debian/Ubuntu: sudo apt install dataset-fashion-mnist",
             "pass the folder of the four files: fashion_mnist.load_data(path='/my/folder')",
             f"download them from {_BASE_URL} into "
             f"{os.path.join(_files.keras_cache_dir(), _CACHE_SUBDIR)}"],
            download_error)
    train = _load_pair(folder, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz")
    test = _load_pair(folder, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    return train, test
