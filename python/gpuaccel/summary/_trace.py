"""``tf.summary.trace_on`` / ``trace_export`` / ``trace_off`` on gpuaccel's profiler.

TF's trace collects two things: the graphs its functions ran (``graph=True``) and, with
``profiler=True``, a profile written to ``profiler_outdir``. gpuaccel runs eagerly and has no
graphs, so the honest half is the profile: ``trace_on(profiler=True, profiler_outdir=d)`` is
``gpuaccel.profiler.start(d)`` and ``trace_export`` / ``trace_off`` stop it, leaving the run
under ``d/plugins/profile`` where TensorBoard's Profile tab (and ``gpuaccel.profiler.analyze``)
read it. TF's ``trace_export`` also writes the run metadata as a summary; there is none here, so
it writes no summary. A trace asked for graphs alone is refused, saying what to use.
"""
import logging
import threading

from .. import profiler as _profiler  # trace_on's argument `profiler` would hide the name

__all__ = ["trace_on", "trace_export", "trace_off"]

_log = logging.getLogger("gpuaccel")
_lock = threading.Lock()
_tracing = False  # True between trace_on and trace_export/trace_off


def trace_on(graph=True, profiler=False, profiler_outdir=None):
    """Starts gpuaccel's profiler into ``profiler_outdir`` (``profiler=True`` is needed: there
    are no graphs to collect)."""
    global _tracing
    if not profiler:
        raise NotImplementedError(
            "tf.summary.trace_on(graph=True) collects TensorFlow graphs, and gpuaccel runs "
            "eagerly without graphs; use tf.summary.trace_on(profiler=True, "
            "profiler_outdir=logdir) (or gpuaccel.profiler.start(logdir)) to record a profile "
            "TensorBoard shows, and model.summary() or keras.utils.plot_model for the model's "
            "structure")
    with _lock:
        if _tracing:
            _log.warning("Trace already enabled")
            return
        if profiler_outdir is None:
            _log.warning("No `profiler_outdir` passed to trace_on(). Profiler won't be enabled.")
            return
        _profiler.start(profiler_outdir)
        _tracing = True


def trace_export(name, step=None, profiler_outdir=None):
    """Stops the trace and writes its profile (to the ``profiler_outdir`` given to
    ``trace_on``). No summary is written: TF's is the run metadata of its graphs."""
    from ._writers import step_value
    if step is not None:
        step_value(step)
    if not _tracing:
        raise ValueError("Must enable trace before export through tf.summary.trace_on.")
    if profiler_outdir:
        _log.warning("Ignoring `profiler_outdir` passed to trace_export(). Please pass it to "
                     "trace_on() instead.")
    trace_off()


def trace_off():
    """Stops the trace (its profile is written, as TF's trace_off stops its profiler)."""
    global _tracing
    with _lock:
        if not _tracing:
            return
        _tracing = False
    try:
        _profiler.stop()
    except Exception as e:  # TF logs a profiler that fails to stop and goes on
        _log.warning("Error while stopping profiler: %s", e)
