"""``tf.summary.experimental``: the default step, ``summary_scope`` and ``write_raw_pb``."""
from ._kinds import summary_scope, write_raw_pb
from ._writers import get_step, set_step

__all__ = ["get_step", "set_step", "summary_scope", "write_raw_pb"]
