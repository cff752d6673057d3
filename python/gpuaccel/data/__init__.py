"""``gpuaccel.data``: tf.data's names (``Dataset``, ``AUTOTUNE``, ``experimental``) for input
pipelines that feed ``model.fit`` or a hand-written training loop."""
import types as _types

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

# tf.data.experimental.AUTOTUNE and friends (older course notebooks use these spellings).
experimental = _types.SimpleNamespace(
    AUTOTUNE=AUTOTUNE,
    INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=lambda dataset: dataset.cardinality(),
)

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]
