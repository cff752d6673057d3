"""``tf.debugging`` names for observing where ops run."""
from . import _C


def set_log_device_placement(enabled):
    """Print ``Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0``
    (to stderr, as TensorFlow does) for every op executed."""
    _C.set_log_device_placement(bool(enabled))


def get_log_device_placement():
    return _C.log_device_placement()
