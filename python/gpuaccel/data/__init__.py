"""``gpuaccel.data``: tf.data's names (``Dataset``, ``AUTOTUNE``, ``experimental``) for input
pipelines that feed ``model.fit`` or a hand-written training loop."""
import types as _types

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from . import _transformations  # noqa: F401 - registers cache, filter, zip... with Dataset
from . import _windows, _sampling  # noqa: F401 - register window, rebatch, random... likewise
from ._options import AutoShardPolicy, Options
from ._file_datasets import TextLineDataset, TFRecordDataset
from ._csv_dataset import CsvDataset, make_csv_dataset

# tf.data.experimental.AUTOTUNE and friends (older course notebooks use these spellings).
experimental = _types.SimpleNamespace(
    AUTOTUNE=AUTOTUNE,
    INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    AutoShardPolicy=AutoShardPolicy,
    cardinality=lambda dataset: dataset.cardinality(),
    sample_from_datasets=Dataset.sample_from_datasets,
    choose_from_datasets=Dataset.choose_from_datasets,
    CsvDataset=CsvDataset,
    make_csv_dataset=make_csv_dataset,
)

__all__ = ["Dataset", "TFRecordDataset", "TextLineDataset", "Options", "AUTOTUNE",
           "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]



def __getattr__(name):
    from .. import _unsupported
    return _unsupported.module_getattr(__name__, "tf.data", {
        "Iterator": "iter(dataset)",
    })(name)
