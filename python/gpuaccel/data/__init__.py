"""``gpuaccel.data``: tf.data's names (``Dataset``, ``AUTOTUNE``, ``experimental``) for input
pipelines that feed ``model.fit`` or a hand-written training loop."""
import types as _types

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from . import _transformations  # noqa: F401 - registers cache, filter, zip... with Dataset

# tf.data.experimental.AUTOTUNE and friends (older course notebooks use these spellings).
experimental = _types.SimpleNamespace(
    AUTOTUNE=AUTOTUNE,
    INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=lambda dataset: dataset.cardinality(),
)

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]



def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "tf.data", {
        "TFRecordDataset": "Dataset.from_generator over records you parse in Python",
        "TextLineDataset": "Dataset.from_generator over the file's lines",
        "Options": "the defaults (gpuaccel's pipeline has no options yet)",
        "Iterator": "iter(dataset)",
    })(name)
