"""``tf.summary``: TensorBoard logs from a custom training loop, with TensorFlow's names::

    writer = tf.summary.create_file_writer("logs/run1")
    with writer.as_default(step=epoch):
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("weights", model.layers[0].kernel)
        tf.summary.image("inputs", x[:4])          # PNG; needs PIL (pip install pillow)
        tf.summary.text("note", "lr halved")

The files are TF 2.21's (tensor summaries of the "scalars", "histograms", "images" and "text"
plugins), written by gpuaccel's one event-file writer, so TensorBoard reads them as it reads
TF's. ``trace_on(profiler=True, profiler_outdir=...)`` records a gpuaccel profile; graphs,
audio and the TF1 names are refused with what to use instead (docs/profiling.md).
"""
from .. import _unsupported
from . import experimental
from ._kinds import histogram, image, scalar, text, write
from ._trace import trace_export, trace_off, trace_on
from ._writers import (SummaryWriter, create_file_writer, create_noop_writer, flush, record_if,
                       should_record_summaries)

__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "flush", "record_if",
           "should_record_summaries", "scalar", "histogram", "image", "text", "write",
           "trace_on", "trace_export", "trace_off", "experimental"]

__getattr__ = _unsupported.module_getattr(__name__, "tf.summary", {
    "graph": "model.summary() or keras.utils.plot_model (gpuaccel runs eagerly: there is no "
             "graph to log)",
    "audio": "tf.summary.scalar/histogram of the waveform's statistics (no audio summaries)",
    "FileWriter": "tf.summary.create_file_writer (TF1's FileWriter is graph-mode only)",
    "merge_all": "calling the tf.summary functions inside writer.as_default() (TF1's merged "
                 "summaries are graph-mode only)",
})
