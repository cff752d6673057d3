"""The seed's "several GPUs but only one works" (class 171): when fit runs with no strategy
while more than one GPU is visible, say once how many sit idle and the two lines that use them.
"""
import sys

_warned = False


def idle_gpus_message(visible_gpus):
    """The message for ``visible_gpus`` GPUs and a fit without a strategy, or None when there
    is nothing to say (zero or one GPU)."""
    if not isinstance(visible_gpus, int) or visible_gpus < 0:
        raise ValueError(f"visible_gpus must be a non-negative int, got {visible_gpus!r}")
    if visible_gpus <= 1:
        return None
    idle = visible_gpus - 1
    return (f"gpuaccel: {visible_gpus} GPUs are visible but fit() trains on one; {idle} "
            f"GPU{'s are' if idle > 1 else ' is'} idle. To train on all of them, build and "
            "compile the model in a strategy's scope:\n"
            "    strategy = tf.distribute.MirroredStrategy()\n"
            "    with strategy.scope():  # model = ...; model.compile(...)\n")


def warn_idle_gpus_once(visible_gpus, stream=None):
    """Prints idle_gpus_message once per process (later fits stay quiet). Returns whether it
    printed."""
    global _warned
    message = idle_gpus_message(visible_gpus)
    if message is None or _warned:
        return False
    _warned = True
    print(message, file=stream or sys.stderr, end="")
    return True
