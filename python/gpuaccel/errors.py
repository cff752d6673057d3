"""Exceptions with TensorFlow's names (``tf.errors``).

The C++ core throws typed errors; the bindings raise them as these classes (or as plain
``ValueError`` / ``RuntimeError`` where TensorFlow does). ``InvalidArgumentError`` is also a
``ValueError`` so ``except ValueError`` catches bad arguments whichever layer found them.
"""


class OpError(Exception):
    """Base of the errors raised by operations; carries the name of the op that failed."""

    error_code = None

    def __init__(self, message, op_name=None):
        super().__init__(message)
        self.message = message
        self.op_name = op_name or None


class InvalidArgumentError(OpError, ValueError):
    """An argument had a bad value, shape or dtype."""
    error_code = 3


class NotFoundError(OpError):
    """Something that was asked for (a device, a file) does not exist."""
    error_code = 5


class AlreadyExistsError(OpError):
    """Something that was to be created (a file by ``gfile.copy``/``rename``) already exists."""
    error_code = 6


class PermissionDeniedError(OpError):
    """The caller may not do this (write to a file opened for reading, a file the OS refuses)."""
    error_code = 7


class FailedPreconditionError(OpError):
    """The system is not in a state where the operation can run (e.g. no CUDA driver)."""
    error_code = 9


class ResourceExhaustedError(OpError):
    """Out of memory on a device, or over a configured memory_limit."""
    error_code = 8


class OutOfRangeError(OpError):
    """An index past the end of a sequence (a TensorArray read or write, an iterator)."""
    error_code = 11


class UnimplementedError(OpError):
    """The operation is not implemented for these arguments or this device."""
    error_code = 12


class DataLossError(OpError, OSError):
    """A file gpuaccel reads back is truncated or corrupted (its checksum does not match).
    Also an ``OSError``, which is what reading a damaged file raises in Keras (h5py)."""
    error_code = 15

    def __init__(self, message, op_name=None, filename=None):
        super().__init__(message, op_name)
        self.filename = filename  # OSError's attribute: the damaged file

    def __str__(self):
        # OSError would print "[Errno None] None: '<filename>'" once filename is set.
        return self.message


class UnavailableError(OpError):
    """A peer worker died, never arrived, or did not answer within the collective timeout."""
    error_code = 14


class InternalError(OpError):
    """A bug or an unexpected failure inside gpuaccel or a library it calls."""
    error_code = 13


__all__ = [
    "OpError", "InvalidArgumentError", "NotFoundError", "FailedPreconditionError",
    "ResourceExhaustedError", "UnimplementedError", "InternalError", "DataLossError",
    "UnavailableError", "AlreadyExistsError", "PermissionDeniedError",
]
