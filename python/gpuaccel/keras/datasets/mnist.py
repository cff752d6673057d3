"""``keras.datasets.mnist.load_data()``: LeCun's 28x28 handwritten digits, from ``mnist.npz``.

Same return value as Keras (uint8 arrays; 60000 training and 10000 test images). The archive is
looked for in ``path`` (the file itself or a folder holding it), ``$GPUACCEL_DATA/mnist.npz``
and the Keras cache ``~/.keras/datasets/mnist.npz``; if none has it, it is downloaded from
Keras's public bucket (SHA-256 checked) into the Keras cache.
"""
import os

import numpy as np

from . import _files

__all__ = ["load_data"]

_URL = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
_SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
_NAME = "mnist.npz"
_KEYS = ("x_train", "y_train", "x_test", "y_test")


def _candidates(path):
    places = []
    if path is not None:
        p = os.path.expanduser(os.fspath(path))
        # Keras reads `path` as a file name inside its cache; we also take a full path to the
        # file or a folder that holds mnist.npz.
        places.append(os.path.join(p, _NAME) if os.path.isdir(p) else p)
        if not os.path.isabs(p) and os.path.dirname(p) == "" and p != _NAME:
            places.append(os.path.join(_files.keras_cache_dir(), p))
    root = _files.data_root()
    if root:
        places.append(os.path.join(root, _NAME))
    places.append(os.path.join(_files.keras_cache_dir(), _NAME))
    return places


def _hash_matches(tmp):
    with open(tmp, "rb") as f:
        return _files.sha256_of(f.read()) == _SHA256


def _read(path):
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _files.DatasetFormatError(
            f"{path}: not a readable .npz archive ({e}); expected NumPy's zip format with the "
            f"arrays {', '.join(_KEYS)}") from None
    with archive:
        missing = [k for k in _KEYS if k not in archive.files]
        if missing:
            raise _files.DatasetFormatError(
                f"{path}: the archive lacks {', '.join(missing)}; it holds "
                f"{', '.join(archive.files) or 'nothing'}, and MNIST needs {', '.join(_KEYS)}")
        x_train, y_train, x_test, y_test = (archive[k] for k in _KEYS)
    for name, x, y in (("train", x_train, y_train), ("test", x_test, y_test)):
        if len(x) != len(y):
            raise _files.DatasetFormatError(
                f"{path}: x_{name} has {len(x)} images but y_{name} has {len(y)} labels; they "
                "must have the same count")
    return (x_train, y_train), (x_test, y_test)


def load_data(path=None):
    """Loads MNIST as ``((x_train, y_train), (x_test, y_test))`` of uint8 NumPy arrays.

    Args:
        path: optional ``mnist.npz`` file, a folder holding it, or (as in Keras) a file name
            inside the Keras cache.
    Raises:
        DatasetNotFoundError (a FileNotFoundError and gpuaccel.errors.NotFoundError) when the
        archive is found nowhere and cannot be downloaded; DatasetFormatError (a ValueError)
        when it is damaged.
    """
    places = _candidates(path)
    found = next((p for p in places if os.path.isfile(p)), None)
    download_error = None
    if found is None and _files.downloads_allowed():
        dest = os.path.join(_files.keras_cache_dir(), _NAME)
        try:
            _files.download(_URL, dest, _hash_matches)
            found = dest
        except (OSError, _files.urllib.error.URLError, _files.DatasetFormatError) as e:
            download_error = e
    if found is None:
        raise _files.not_found(
            "MNIST (mnist.npz)", [f"{p} (no such file)" for p in places],
            ["set the environment variable GPUACCEL_DATA to a folder holding mnist.npz",
             "pass the file: mnist.load_data(path='/my/folder/mnist.npz')",
             f"download {_URL} into {_files.keras_cache_dir()}"],
            download_error)
    return _read(found)
