"""``tf.config.optimizer``: TensorFlow's switch for XLA auto-clustering of ``tf.function``
graphs, kept so course code that turns it on runs.

gpuaccel has no graphs for XLA to cluster (``tf.function`` runs eagerly, and a step's ops are
already fused where gpuaccel's kernels fuse them), so the setting is recorded and answered
with TensorFlow's values and changes nothing (docs/devices.md).
"""
__all__ = ["get_jit", "set_jit"]

_autoclustering = False


def set_jit(enabled):
    """``'autoclustering'`` (or its older alias ``True``) turns auto-clustering on; any other
    value turns it off, as in TensorFlow."""
    global _autoclustering
    # TF's own test: `in`, so 1 (== True) turns it on as well.
    _autoclustering = enabled in (True, "autoclustering")


def get_jit():
    """``'autoclustering'`` when ``set_jit`` turned it on, else ``''`` (TensorFlow's values)."""
    return "autoclustering" if _autoclustering else ""
