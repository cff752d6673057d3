"""TensorBoard event files (``events.out.tfevents.*``) without TF: the one event-file writer of
gpuaccel, used by ``keras.callbacks.TensorBoard`` (scalars, histograms) and by ``tf.summary``
(any summary proto, through :meth:`SummaryWriter.add_summary`).

TensorBoard's own package supplies the pieces: the ``Event``/``Summary`` protos, the
summary builders of its scalar and histogram plugins (the same tensor-based, v2 layout Keras 3
writes through ``tf.summary``), and the TFRecord framing (length, masked CRCs). We only decide
when to write.

Files we write must never be seen half-written, so the writer keeps its events in memory and
each :meth:`flush` rewrites the whole file through a temporary file and an atomic rename.
Scalar logs are small (a few hundred bytes per epoch), so rewriting costs nothing noticeable;
TensorBoard re-reads a file that was replaced.
"""
import io
import itertools
import os
import socket
import time

import numpy as np

from .._atomic_file import atomic_write_bytes

__all__ = ["SummaryWriter"]

_file_counter = itertools.count()


def _tensorboard():
    """TensorBoard's modules, with a clear error when the package is missing."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.plugins.histogram import summary_v2 as histogram_summary
        from tensorboard.plugins.scalar import summary_v2 as scalar_summary
        from tensorboard.summary.writer.record_writer import RecordWriter
    except ImportError as e:  # pragma: no cover - tensorboard is a declared dependency
        raise ImportError("writing TensorBoard logs needs the 'tensorboard' package: "
                          "pip install tensorboard") from e
    return event_pb2, summary_pb2, scalar_summary, histogram_summary, RecordWriter


class SummaryWriter:
    """Writes one event file in ``logdir``; ``scalar``/``histogram``/``add_summary`` then
    ``flush``/``close``. ``filename_suffix`` ends the file's name, as in TF."""

    def __init__(self, logdir, filename_suffix=".v2"):
        (self._event_pb2, self._summary_pb2, self._scalars, self._histograms,
         self._record_writer) = _tensorboard()
        self.logdir = os.fspath(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        # TF's naming: events.out.tfevents.<seconds>.<host>.<pid>.<counter>.v2
        self.path = os.path.join(
            self.logdir, f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                         f"{os.getpid()}.{next(_file_counter)}{filename_suffix}")
        header = self._event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
        self._records = [header.SerializeToString()]
        self._dirty = True
        self.closed = False

    def add_summary(self, summary, step):
        """Records a ``Summary`` proto (TensorBoard's ``summary_pb2.Summary``) at ``step``."""
        if self.closed:
            raise ValueError(f"this SummaryWriter ({self.path}) is closed")
        event = self._event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary)
        self._records.append(event.SerializeToString())
        self._dirty = True

    def scalar(self, tag, value, step):
        """Records ``value`` (a number) under ``tag`` at ``step``."""
        value = float(np.asarray(value, dtype=np.float64).reshape(()))
        summary = self._scalars.scalar_pb(str(tag), value)
        # Marked as a scalar series, so TensorBoard's data provider needs no plugin-specific
        # guess (TF 2.21's tf.summary.scalar leaves data_class unset and TensorBoard infers it
        # from the "scalars" plugin; gpuaccel's tf.summary does the same).
        summary.value[0].metadata.data_class = self._summary_pb2.DATA_CLASS_SCALAR
        self.add_summary(summary, step)

    def histogram(self, tag, values, step, buckets=30):
        """Records the distribution of ``values`` (any array) under ``tag`` at ``step``."""
        data = np.asarray(values, dtype=np.float64).ravel()
        self.add_summary(self._histograms.histogram_pb(str(tag), data, buckets=buckets), step)

    def flush(self):
        """Makes everything recorded so far visible on disk, atomically."""
        if not self._dirty:
            return
        buffer = io.BytesIO()
        writer = self._record_writer(buffer)
        for record in self._records:
            writer.write(record)
        atomic_write_bytes(self.path, buffer.getvalue())
        self._dirty = False

    def close(self):
        if not self.closed:
            self.flush()
            self.closed = True
