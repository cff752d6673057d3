"""torch.utils.data of the PyTorch face against PyTorch 1.13 (one torch_reference subprocess for
the module): the same DataLoader configurations give the same number of batches and, unshuffled,
the same batches; default_collate builds the same structures, dtypes and values; random_split's
fractional lengths are PyTorch's. Shuffling is checked by rule (a new permutation each pass,
repeatable after torch.manual_seed): the bits of PyTorch's generator are not the face's."""
import collections

import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch
from gpuaccel.torch.utils.data import (DataLoader, Dataset, IterableDataset, Subset,
                                       TensorDataset, default_collate, random_split)

FEATURES = np.arange(14, dtype=np.float32).reshape(7, 2)
LABELS = np.arange(7, dtype=np.int64) * 10

LOADERS = ["dict(batch_size=3)", "dict(batch_size=3, drop_last=True)", "dict(batch_size=7)",
           "dict(batch_size=4, drop_last=True)", "dict(batch_size=None)"]

# Samples: each a text both sides evaluate (np is NumPy, torch the side's torch).
SAMPLES = {
    "tuple": "[(np.float32([i, i + 1]), i, i * 0.5) for i in range(3)]",
    "dict": "[{'x': torch.ones(2) * i, 'label': i, 'name': 'n%d' % i} for i in range(3)]",
    "list": "[[i, np.int32(i)] for i in range(4)]",
    "nested": "[{'pair': (i, np.ones((2, 2), dtype=np.float32) * i)} for i in range(2)]",
}

_REFERENCE = f"""
from torch.utils.data import DataLoader, TensorDataset, random_split, default_collate
dataset = TensorDataset(torch.from_numpy(features), torch.from_numpy(labels))
for k, options in enumerate({LOADERS!r}):
    batches = list(DataLoader(dataset, **eval(options)))
    out[f"len{{k}}"] = len(DataLoader(dataset, **eval(options)))
    out[f"count{{k}}"] = len(batches)
    out[f"first_x{{k}}"] = batches[0][0].numpy()
    out[f"last_y{{k}}"] = batches[-1][1].numpy()

def flat(value, key):
    if isinstance(value, torch.Tensor):
        out[key] = value.numpy()
        out[key + ":dtype"] = str(value.dtype).replace("torch.", "")
    elif isinstance(value, dict):
        out[key + ":keys"] = list(value)
        for name, item in value.items():
            flat(item, key + "." + name)
    elif isinstance(value, (list, tuple)) and value and not isinstance(value[0], str):
        out[key + ":type"] = type(value).__name__
        for i, item in enumerate(value):
            flat(item, key + "." + str(i))
    else:
        out[key] = value
for name, text in {SAMPLES!r}.items():
    flat(default_collate(eval(text)), name)
for k, lengths in enumerate([[0.5, 0.5], [0.3, 0.3, 0.4], [0.1, 0.9], [2, 5]]):
    out[f"split{{k}}"] = [len(s) for s in random_split(range(7), lengths)]
"""


@pytest.fixture(scope="module")
def reference():
    result = torch_reference.run_once(_REFERENCE, features=FEATURES, labels=LABELS)
    assert "error" not in result, result
    return result


def _dataset():
    return TensorDataset(torch.tensor(FEATURES), torch.tensor(LABELS))


@pytest.mark.parametrize("index", range(len(LOADERS)), ids=LOADERS)
def test_unshuffled_batches_match_pytorch(index, reference):
    options = eval(LOADERS[index])
    batches = list(DataLoader(_dataset(), **options))
    assert len(DataLoader(_dataset(), **options)) == reference[f"len{index}"]
    assert len(batches) == reference[f"count{index}"]
    np.testing.assert_array_equal(batches[0][0].numpy(), reference[f"first_x{index}"])
    np.testing.assert_array_equal(batches[-1][1].numpy(), reference[f"last_y{index}"])
    assert batches[-1][1].dtype == torch.int64


def _compare(ours, reference, key):
    if isinstance(ours, torch.Tensor):
        np.testing.assert_array_equal(ours.numpy(), reference[key], err_msg=key)
        theirs = reference[key + ":dtype"]
        assert ours._dtype_name == ("float32" if theirs == "float64" else theirs), key
    elif isinstance(ours, dict):
        assert list(ours) == reference[key + ":keys"]
        for name, item in ours.items():
            _compare(item, reference, key + "." + name)
    elif isinstance(ours, (list, tuple)) and ours and not isinstance(ours[0], str):
        assert type(ours).__name__ == reference[key + ":type"], key
        for i, item in enumerate(ours):
            _compare(item, reference, f"{key}.{i}")
    else:
        assert ours == reference[key], key


@pytest.mark.parametrize("name", SAMPLES)
def test_default_collate_matches_pytorch(name, reference):
    # One documented difference: a batch of Python floats is float32 here (no float64).
    _compare(default_collate(eval(SAMPLES[name])), reference, name)


def test_random_split_lengths_match_pytorch_and_are_disjoint(reference):
    torch.manual_seed(0)
    for k, lengths in enumerate([[0.5, 0.5], [0.3, 0.3, 0.4], [0.1, 0.9], [2, 5]]):
        parts = random_split(range(7), lengths)
        assert [len(p) for p in parts] == reference[f"split{k}"]
        assert sorted(i for p in parts for i in p) == list(range(7))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(7), [3, 3])


def test_shuffle_is_a_new_permutation_each_pass_and_repeatable_after_manual_seed():
    dataset = TensorDataset(torch.arange(20))
    loader = DataLoader(dataset, batch_size=6, shuffle=True)

    def two_passes():
        return [[int(v) for batch in loader for v in batch[0].numpy()] for _ in range(2)]
    torch.manual_seed(5)
    first, second = two_passes()
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second and first != list(range(20))
    torch.manual_seed(5)
    assert two_passes() == [first, second]


class _Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, index):
        return {"x": np.float32([index, index * index])}


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(range(5))


def test_custom_datasets_subset_stream_and_errors():
    batches = list(DataLoader(Subset(_Squares(), [4, 2]), batch_size=2))
    np.testing.assert_array_equal(batches[0]["x"].numpy(), [[4, 16], [2, 4]])
    assert [b.numpy().tolist() for b in DataLoader(_Stream(), batch_size=2)] == [[0, 1], [2, 3],
                                                                                 [4]]
    Point = collections.namedtuple("Point", "x y")
    point = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(point) is Point and point.x.numpy().tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object()])
    with pytest.raises(TypeError, match="'generator' must be torch.Generator, not object"):
        DataLoader(_Squares(), shuffle=True, generator=object())
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):  # PyTorch asserts
        TensorDataset(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(_Squares(), shuffle=True, sampler=[0, 1])
