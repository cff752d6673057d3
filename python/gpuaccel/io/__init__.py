"""``tf.io``: reading and writing whole files, the local-filesystem ``gfile`` API, and the image
codecs (the same functions as ``tf.image.decode_*``/``encode_*``).

gpuaccel has no string tensors: ``read_file`` returns the contents as a ``HostString``, a
``bytes`` subclass whose ``.numpy()`` is the plain ``bytes`` (what TF's scalar string tensor
answers), so ``decode_jpeg(read_file(path))`` and ``read_file(path).numpy()`` both work as in TF.
"""
import os

from .. import errors
from .._host_strings import HostString, string_leaf, to_bytes, to_path
from .._image_codecs import (decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png,
                             encode_jpeg, encode_png, extract_jpeg_shape, is_jpeg)
from . import gfile
from .gfile import matching_files as _matching_files
# TFRecord files, tf.train.Example parsing, CSV and raw bytes (gpuaccel._io_records)
from .._io_records import (FixedLenFeature, FixedLenSequenceFeature, RaggedFeature,  # noqa: F401
                           SparseFeature, TFRecordCompressionType, TFRecordOptions,
                           TFRecordWriter, VarLenFeature, decode_csv, decode_raw, parse_example,
                           parse_single_example, parse_tensor, serialize_tensor,
                           tf_record_iterator)
from .._io_records import __all__ as _record_names

__all__ = ["read_file", "write_file", "gfile", "matching_files", "decode_bmp", "decode_gif",
           "decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png",
           "extract_jpeg_shape", "is_jpeg"] + list(_record_names)


def read_file(filename, name=None):
    """The contents of ``filename`` as a HostString (bytes); NotFoundError for a missing file,
    FailedPreconditionError for a directory."""
    path = to_path(filename, "read_file: filename")
    if os.path.isdir(path):
        raise errors.FailedPreconditionError(f"{path}; Is a directory", "ReadFile")
    with gfile.tf_errors(path, "ReadFile"):
        with open(path, "rb") as file:
            return HostString(file.read())


def write_file(filename, contents, name=None):
    """Writes ``contents`` (bytes, or str as UTF-8) to ``filename``, creating its missing parent
    directories (as TF does)."""
    path = to_path(filename, "write_file: filename")
    data = to_bytes(contents, "write_file: contents")
    parent = os.path.dirname(path)
    with gfile.tf_errors(path, "WriteFile"):
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as file:
            file.write(data)


def matching_files(pattern, name=None):
    """``tf.io.matching_files``: the sorted paths matching ``pattern`` (a HostStrings array)."""
    return string_leaf(_matching_files(pattern))
