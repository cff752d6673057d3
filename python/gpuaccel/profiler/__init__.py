"""``gpuaccel.profiler``: where does a training step's time go?

TF's profiler API (``tf.profiler.experimental``) over gpuaccel's own recorder::

    gpuaccel.profiler.start("logs/run1")        # or: with gpuaccel.profiler.Profile("logs/run1"):
    model.fit(...)
    gpuaccel.profiler.stop()                    # writes logs/run1/plugins/profile/<run>/...
    report = gpuaccel.profiler.analyze("logs/run1")
    report.bottleneck                           # 'input', 'compute', 'transfer', 'sync' or
                                                # 'host-overhead', with report.suggestion

In Keras code the usual entry point is ``keras.callbacks.TensorBoard(log_dir,
profile_batch=(5, 10))``. The files open in TensorBoard's Profile tab (``tensorboard --logdir
logs``) and in Perfetto (``<host>.trace.json.gz``). See ``docs/profiling.md``.
"""
from ._analysis import analyze
from ._session import Profile, ProfilerOptions, Trace, is_active, start, stop
from . import experimental

__all__ = ["start", "stop", "is_active", "Profile", "Trace", "ProfilerOptions", "analyze",
           "experimental"]
