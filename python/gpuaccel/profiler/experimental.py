"""``gpuaccel.profiler.experimental``: the same API under TF's path, so
``tf.profiler.experimental.start(logdir)`` runs with only the import changed."""
from ._session import Profile, ProfilerOptions, Trace, start, stop

__all__ = ["start", "stop", "Profile", "Trace", "ProfilerOptions"]
