"""``gpuaccel.torch.utils.data`` against PyTorch 1.13's torch.utils.data (torch_reference): one
script builds datasets and DataLoaders with the real torch and with ``import gpuaccel.torch as
torch``; the batches (values, dtypes, shapes), lengths, split sizes and error texts must agree.
Shuffled orders come from each library's own generator, so for them only the properties are
compared (every sample once, repeatable after manual_seed)."""
import numpy as np
import pytest

import gpuaccel.torch as torch
import torch_reference

# Runs in both interpreters: `torch` is the real one or gpuaccel's face, `np` NumPy, `out` the
# results, x/y the seeded data.
SCRIPT = """
data = torch.utils.data


def record(name, batches):
    out[name + "_count"] = len(batches)
    for i, batch in enumerate(batches):
        fields = batch if isinstance(batch, (list, tuple)) else [batch]
        for j, field in enumerate(fields):
            if isinstance(field, dict):
                for key in sorted(field):
                    out[f"{name}_{i}_{j}_{key}"] = field[key].numpy()
            elif isinstance(field, list):
                out[f"{name}_{i}_{j}_list"] = repr(field)
            else:
                out[f"{name}_{i}_{j}"] = field.numpy()


class Squares(data.Dataset):
    def __getitem__(self, index):
        return {"square": np.full((2,), index * index, np.float32), "index": index}

    def __len__(self):
        return 5


class Mixed(data.Dataset):
    def __getitem__(self, index):
        return (x[index], index, index > 2, "name%d" % index)

    def __len__(self):
        return 4


class Counting(data.IterableDataset):
    def __iter__(self):
        return iter(range(7))


pairs = data.TensorDataset(torch.tensor(x), torch.tensor(y))
out["pairs_len"] = len(pairs)
record("batches", list(data.DataLoader(pairs, batch_size=3)))
out["batches_len"] = len(data.DataLoader(pairs, batch_size=3))
out["dropped_len"] = len(data.DataLoader(pairs, batch_size=3, drop_last=True))
record("dropped", list(data.DataLoader(pairs, batch_size=3, drop_last=True, num_workers=2)))
record("dicts", list(data.DataLoader(Squares(), batch_size=2)))
record("mixed", [batch[:3] for batch in data.DataLoader(Mixed(), batch_size=3)])
out["mixed_names"] = [batch[3] for batch in data.DataLoader(Mixed(), batch_size=3)]
record("unbatched", list(data.DataLoader(pairs, batch_size=None))[:2])
record("sampled", list(data.DataLoader(pairs, batch_size=2, sampler=[4, 0, 2])))
record("batch_sampled", list(data.DataLoader(pairs, batch_sampler=[[0, 1], [5, 3, 2]])))
out["batch_sampled_len"] = len(data.DataLoader(pairs, batch_sampler=[[0, 1], [5, 3, 2]]))
record("iterable", list(data.DataLoader(Counting(), batch_size=3)))
joined = pairs + data.Subset(pairs, [6, 1])
out["joined_len"] = len(joined)
record("joined", [joined[8], joined[-1], joined[3]])
record("concat", list(data.DataLoader(data.ConcatDataset([Squares(), Squares()]),
                                      batch_size=4))[2:])
out["split_sizes"] = [len(s) for s in data.random_split(pairs, [0.5, 0.3, 0.2])]
out["split_sizes_ints"] = [len(s) for s in data.random_split(pairs, [3, 5, 0])]

ERRORS = [
    "data.DataLoader(pairs, sampler=[0], shuffle=True)",
    "data.DataLoader(pairs, batch_sampler=[[0]], batch_size=2)",
    "data.DataLoader(pairs, batch_sampler=[[0]], drop_last=True)",
    "data.DataLoader(pairs, batch_size=None, drop_last=True)",
    "data.DataLoader(pairs, num_workers=-1)",
    "data.DataLoader(Counting(), shuffle=True)",
    "data.TensorDataset(torch.tensor(x), torch.tensor(y[:3]))",
    "data.random_split(pairs, [3, 3])",
    "data.random_split(pairs, [1.5, -0.5])",
    "data.ConcatDataset([])",
    "data.ConcatDataset([Counting()])",
    "data.default_collate([object(), object()])",
    "data.default_collate([[1, 2], [3]])",
    "len(data.DataLoader(Counting(), batch_size=2))",
    "joined[-20]",
]
record_errors(ERRORS, globals())
"""


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(3)
    inputs = {"x": rng.normal(size=(8, 3)).astype(np.float32),
              "y": rng.integers(0, 5, size=(8,)).astype(np.int64)}
    return torch_reference.run_script_both(SCRIPT, torch, **inputs)


def test_batches_and_lengths_match_torch(runs):
    ours, reference = runs
    keys = sorted(k for k in reference if not k.startswith("error_"))
    assert len(keys) > 60
    assert sorted(ours) == sorted(reference)
    for key in keys:
        theirs = reference[key]
        if isinstance(theirs, np.ndarray):
            # Python floats collate to float64 in torch, float32 here (no float64 in gpuaccel)
            dtype = np.float32 if theirs.dtype == np.float64 else theirs.dtype
            assert ours[key].dtype == dtype, key
            np.testing.assert_allclose(ours[key], theirs, rtol=1e-6, err_msg=key)
        else:
            assert ours[key] == theirs, key


def test_bad_arguments_raise_torchs_errors(runs):
    ours, reference = runs
    torch_reference.assert_same_errors(ours, reference, 15)


def test_shuffled_epochs_hold_every_sample_once_and_repeat_after_manual_seed():
    data = np.arange(10, dtype=np.float32)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(data)),
                                         batch_size=4, shuffle=True)
    torch.manual_seed(5)
    first = np.concatenate([batch[0].numpy() for batch in loader])
    second = np.concatenate([batch[0].numpy() for batch in loader])
    torch.manual_seed(5)
    again = np.concatenate([batch[0].numpy() for batch in loader])
    assert sorted(first) == sorted(second) == list(data)
    assert not np.array_equal(first, data) and not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again)
    splits = torch.utils.data.random_split(list(range(10)), [3, 7])
    assert sorted(splits[0].indices + splits[1].indices) == list(range(10))


def test_a_generator_argument_that_is_not_a_generator_is_a_type_error():
    with pytest.raises(TypeError, match="must be torch.Generator, not object"):
        torch.utils.data.DataLoader([1, 2], generator=object())
