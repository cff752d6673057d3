"""TFRecord files: TensorFlow's container of byte records (``tf.io.TFRecordWriter``,
``tf.io.TFRecordOptions``, ``tf.compat.v1.io.tf_record_iterator``; ``tf.data.TFRecordDataset``
reads through :func:`read_records`).

Why it exists: course data sets and tutorials store ``tf.train.Example`` messages in TFRecord
files, written by one program and read by another, so the format must be TensorFlow's exactly.
Each record is framed as::

    uint64 length (little endian) | uint32 masked CRC32C of the length bytes
    data[length]                  | uint32 masked CRC32C of data

and a compressed file (GZIP or ZLIB) is that same byte stream through one deflate stream, which
Python's ``zlib`` reads and writes. Reading follows TensorFlow's record reader, errors included:
a wrong CRC is a ``DataLossError`` "corrupted record at <offset>", a record cut short is
"truncated record at <offset>", and a file that ends inside a record's 12-byte header ends the
file silently (TF reads such a tail as the end of the file).

The framing is this module's own: profiler/_summary_writer.py writes event files through
TensorBoard's ``RecordWriter``, which writes uncompressed records only and has no reader that
reports corruption the way TF does. The CRC32C comes from ``google_crc32c`` when installed (a C
extension) and from TensorBoard's pure-Python one otherwise.
"""
import os
import struct
import zlib

from . import errors

__all__ = ["TFRecordOptions", "TFRecordCompressionType", "TFRecordWriter", "tf_record_iterator",
           "read_records", "read_decompressed", "compression_type_string", "masked_crc32c"]

try:  # a C implementation when the package is there (it usually is, via google-cloud-storage)
    import google_crc32c as _google_crc32c

    def _crc32c(data):
        return _google_crc32c.value(bytes(data))
except ImportError:  # pragma: no cover - depends on the environment
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import crc32c as _tb_crc32c

    def _crc32c(data):
        return _tb_crc32c(bytes(data)) & 0xFFFFFFFF

_MASK_DELTA = 0xA282EAD8
_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")


def masked_crc32c(data):
    """TFRecord's checksum: CRC32C of ``data``, rotated right by 15 bits plus a constant (so a
    CRC of bytes that hold CRCs is not itself trivially a CRC)."""
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record):
    """The bytes of one record in a TFRecord file."""
    length = struct.pack("<Q", len(record))
    return (length + struct.pack("<I", masked_crc32c(length)) + record
            + _FOOTER.pack(masked_crc32c(record)))


class TFRecordCompressionType:
    """``tf.compat.v1.io.TFRecordCompressionType``: NONE, ZLIB, GZIP."""
    NONE = 0
    ZLIB = 1
    GZIP = 2


_COMPRESSION_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
                      TFRecordCompressionType.GZIP: "GZIP"}


def compression_type_string(options):
    """"", "ZLIB" or "GZIP" for None, a compression name, a TFRecordCompressionType value or a
    TFRecordOptions (TF's ``TFRecordOptions.get_compression_type_string``)."""
    if options is None or (isinstance(options, str) and options == ""):
        return ""
    if isinstance(options, TFRecordOptions):
        return compression_type_string(options.compression_type)
    if isinstance(options, int) and not isinstance(options, bool) and \
            options in _COMPRESSION_NAMES:
        return _COMPRESSION_NAMES[options]
    if isinstance(options, str) and options in ("ZLIB", "GZIP"):
        return options
    raise ValueError(f'Not a valid compression_type: "{options}" (valid: None or "", "ZLIB", '
                     '"GZIP")')


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: the compression of a TFRecord file and zlib's settings for
    writing it (the buffer sizes and flush mode are accepted and have no effect here)."""

    compression_type_map = dict(_COMPRESSION_NAMES)

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        compression_type_string(compression_type)  # validates
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        return compression_type_string(options)

    def __repr__(self):
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _window_bits(compression, window_bits=None):
    """zlib's wbits for a stream: 16 + bits selects the gzip wrapper."""
    bits = zlib.MAX_WBITS if window_bits is None else int(window_bits)
    return bits + 16 if compression == "GZIP" else bits


def _as_options(options):
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(compression_type=options)


def _path(path, what):
    try:
        return os.fspath(path.decode() if isinstance(path, bytes) else path)
    except TypeError:
        raise TypeError(f"{what} must be a path (str, bytes or os.PathLike), got "
                        f"{type(path).__name__}") from None


def _record_bytes(record):
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    raise TypeError(f"TFRecordWriter.write: a record is bytes (or a str, written as UTF-8), got "
                    f"{type(record).__name__}; serialize messages first "
                    "(example.SerializeToString())")


class TFRecordWriter:
    """``tf.io.TFRecordWriter(path, options=None)``: writes records to a TFRecord file
    (``options``: a TFRecordOptions or a compression name, "GZIP"/"ZLIB"). A context manager;
    ``flush()`` makes what was written so far readable, ``close()`` finishes the file."""

    def __init__(self, path, options=None):
        self._path = _path(path, "TFRecordWriter: path")
        options = _as_options(options)
        compression = compression_type_string(options)
        self._compressor = None
        if compression:
            level = -1 if options.compression_level is None else int(options.compression_level)
            self._compressor = zlib.compressobj(
                level, zlib.DEFLATED, _window_bits(compression, options.window_bits),
                8 if options.mem_level is None else int(options.mem_level),
                0 if options.compression_strategy is None else int(options.compression_strategy))
        try:
            self._file = open(self._path, "wb")
        except FileNotFoundError:
            raise errors.NotFoundError(f"{self._path}; No such file or directory") from None

    def _put(self, data):
        if self._compressor is not None:
            data = self._compressor.compress(data)
        self._file.write(data)

    def write(self, record):
        """Appends one record (bytes; a str is written as UTF-8, as TF writes it)."""
        if self._file is None:
            raise errors.FailedPreconditionError("Writer is closed.")
        self._put(frame(_record_bytes(record)))

    def flush(self):
        if self._file is None:
            raise errors.FailedPreconditionError("Writer is closed.")
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self):
        if self._file is None:
            return
        try:
            if self._compressor is not None:
                self._file.write(self._compressor.flush(zlib.Z_FINISH))
        finally:
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        # TF's writer finishes its file when it is destroyed; a GZIP file without its trailer
        # would read as truncated.
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at garbage collection
            pass


_CHUNK = 1 << 16


class _InflatingReader:
    """``read(n)`` over the decompressed bytes of a GZIP or ZLIB file (concatenated streams
    read one after another; a stream cut short ends where its data ends, as in TF)."""

    def __init__(self, file, compression, path):
        self._file, self._compression, self._path = file, compression, path
        self._inflater = zlib.decompressobj(_window_bits(compression))
        self._buffer = bytearray()
        self._done = False

    def _fill(self, n):
        while len(self._buffer) < n and not self._done:
            chunk = self._inflater.unused_data if self._inflater.eof else b""
            if self._inflater.eof:
                self._inflater = zlib.decompressobj(_window_bits(self._compression))
            if not chunk:
                chunk = self._file.read(_CHUNK)
            if not chunk:
                self._done = True
                self._buffer += self._inflater.flush()
                return
            try:
                self._buffer += self._inflater.decompress(chunk)
            except zlib.error as e:
                raise errors.DataLossError(
                    f"{self._path}: not a valid {self._compression} stream ({e}); read it with "
                    "the compression_type it was written with", filename=self._path) from None

    def read(self, n):
        self._fill(n)
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out


def _open(path):
    try:
        file = open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(f"{path}; Is a directory") from None
    return file


def read_records(path, compression_type=None):
    """The records of one TFRecord file, in order (a generator: the file is read as it goes)."""
    path = _path(path, "a TFRecord file name")
    compression = compression_type_string(compression_type)
    file = _open(path)
    with file:
        stream = _InflatingReader(file, compression, path) if compression else file
        offset = 0
        while True:
            header = stream.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return  # TF reads a partial header as the end of the file
            length, length_crc = _HEADER.unpack(header)
            if masked_crc32c(header[:8]) != length_crc:
                hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
                raise errors.DataLossError(f"corrupted record at {offset}{hint}", filename=path)
            body = stream.read(length + _FOOTER.size)
            if len(body) < length + _FOOTER.size:
                raise errors.DataLossError(
                    f"truncated record at {offset}' failed with Read less bytes than requested",
                    filename=path)
            data = body[:length]
            if masked_crc32c(data) != _FOOTER.unpack(body[length:])[0]:
                raise errors.DataLossError(f"corrupted record at {offset + _HEADER.size}",
                                           filename=path)
            yield data
            offset += _HEADER.size + length + _FOOTER.size


def read_decompressed(path, compression_type=None):
    """The whole content of a file that TF reads with ``compression_type`` (CsvDataset's text
    files share TFRecord's GZIP/ZLIB handling)."""
    path = _path(path, "a file name")
    compression = compression_type_string(compression_type)
    with _open(path) as file:
        if not compression:
            return file.read()
        reader, chunks = _InflatingReader(file, compression, path), []
        while True:
            chunk = reader.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def tf_record_iterator(path, options=None):
    """``tf.compat.v1.io.tf_record_iterator(path, options=None)``: the records of a TFRecord file
    as bytes (``options``: a TFRecordOptions or a compression name)."""
    return read_records(path, compression_type_string(options))
