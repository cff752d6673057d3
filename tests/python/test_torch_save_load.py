"""torch.save / torch.load of the PyTorch face, in PyTorch's zip format, checked both ways with
PyTorch 1.13 (one torch_reference subprocess for the module): PyTorch loads the files written
here with the same keys, dtypes, shapes and values, and the files PyTorch writes (a state_dict,
optimizer state, a view into a bigger tensor) load here. Plus the round trip, atomic
replacement and the errors for files it cannot read."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import torch_reference

import gpuaccel.torch as torch
from gpuaccel.torch import nn

_RNG = np.random.default_rng(5)
MATRIX = _RNG.standard_normal((3, 4)).astype(np.float32)


def _checkpoint():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm2d(3))
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor(MATRIX))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model[0](torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3,
            "name": "mlp", "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
            "half": torch.tensor([1.5, -2.0], dtype=torch.float16),
            "flags": torch.tensor([True, False]),
            "bytes": torch.tensor([7, 255], dtype=torch.uint8),
            "int32": torch.tensor([-4, 9], dtype=torch.int32), "param": model[0].weight,
            "pair": (torch.tensor([1, 2]), [0.5, "x"])}


_EXCHANGED = []  # made once per session (see torch_reference.run_once)


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    if not _EXCHANGED:
        _EXCHANGED.append(_exchange(tmp_path_factory.mktemp("exchange")))
    return _EXCHANGED[0]


def _exchange(folder):
    ours = folder / "ours.pth"
    torch.save(_checkpoint(), ours)
    theirs = folder / "theirs.pth"
    result = torch_reference.run(f"""
import collections
loaded = torch.load({str(ours)!r})
out["model_keys"] = list(loaded["model"].keys())
for k, v in loaded["model"].items():
    out["model." + k] = v.numpy()
    out["dtype.model." + k] = str(v.dtype)
for k in ("scalar", "empty", "half", "flags", "bytes", "int32"):
    out[k] = loaded[k].float().numpy() if k == "half" else loaded[k].numpy()
    out["dtype." + k] = str(loaded[k].dtype)
    out["shape." + k] = list(loaded[k].shape)
out["momentum"] = loaded["optimizer"]["state"][0]["momentum_buffer"].numpy()
out["groups"] = repr(loaded["optimizer"]["param_groups"])
out["epoch"], out["name"] = loaded["epoch"], loaded["name"]
out["param_type"] = type(loaded["param"]).__name__
out["pair"] = repr(loaded["pair"])
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm2d(3))
model.load_state_dict(loaded["model"])
opt = torch.optim.Adam(model.parameters(), lr=0.01)
model[0](torch.ones(2, 4)).sum().backward()
opt.step()
big = torch.arange(12.).reshape(3, 4)
torch.save({{"model": model.state_dict(), "optimizer": opt.state_dict(), "column": big[:, 1],
            "count": torch.tensor(7)}}, {str(theirs)!r})
out["theirs.weight"] = model[0].weight.detach().numpy()
out["theirs.exp_avg"] = opt.state_dict()["state"][0]["exp_avg"].numpy()
""")
    assert "error" not in result, result
    return ours, theirs, result


def test_pytorch_loads_our_file(exchange):
    _, _, ref = exchange
    expected = _checkpoint()
    assert ref["model_keys"] == list(expected["model"])
    for key, value in expected["model"].items():
        np.testing.assert_array_equal(ref["model." + key], value.numpy(), err_msg=key)
    assert ref["dtype.model.1.num_batches_tracked"] == "torch.int64"
    for key, dtype in [("scalar", "float32"), ("half", "float16"), ("flags", "bool"),
                       ("bytes", "uint8"), ("int32", "int32"), ("empty", "float32")]:
        assert ref["dtype." + key] == "torch." + dtype
        assert ref["shape." + key] == list(expected[key].shape)
        np.testing.assert_array_equal(ref[key], expected[key].float().numpy()
                                      if key == "half" else expected[key].numpy())
    np.testing.assert_array_equal(ref["momentum"],
                                  expected["optimizer"]["state"][0]["momentum_buffer"].numpy())
    assert "'lr': 0.1" in ref["groups"] and "'params': [0, 1, 2, 3]" in ref["groups"]
    assert (ref["epoch"], ref["name"], ref["param_type"]) == (3, "mlp", "Parameter")
    assert ref["pair"] == "(tensor([1, 2]), [0.5, 'x'])"


def test_we_load_pytorchs_file_into_a_model_and_optimizer(exchange):
    _, theirs, ref = exchange
    loaded = torch.load(theirs)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm2d(3))
    model.load_state_dict(loaded["model"])
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), ref["theirs.weight"])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5)
    optimizer.load_state_dict(loaded["optimizer"])
    assert optimizer.param_groups[0]["lr"] == 0.01
    np.testing.assert_array_equal(optimizer.state[model[0].weight]["exp_avg"].numpy(),
                                  ref["theirs.exp_avg"])
    np.testing.assert_array_equal(loaded["column"].numpy(), [1.0, 5.0, 9.0])  # a strided view
    assert tuple(loaded["count"].shape) == () and loaded["count"].dtype == torch.int64


def test_round_trip_keeps_structure_dtypes_and_parameters(tmp_path):
    saved = _checkpoint()
    path = tmp_path / "model.pth"
    torch.save(saved, str(path))
    loaded = torch.load(str(path))
    assert isinstance(loaded["model"], collections.OrderedDict)
    assert list(loaded["model"]) == list(saved["model"])
    for key in ("scalar", "empty", "half", "flags", "bytes", "int32"):
        assert loaded[key].dtype == saved[key].dtype and loaded[key].shape == saved[key].shape
        np.testing.assert_array_equal(loaded[key].numpy(), saved[key].numpy())
    assert isinstance(loaded["param"], nn.Parameter) and loaded["param"].requires_grad
    assert loaded["pair"][1] == [0.5, "x"] and isinstance(loaded["pair"], tuple)
    buffer = io.BytesIO()
    torch.save(saved["model"], buffer)
    buffer.seek(0)
    assert list(torch.load(buffer, map_location="cpu")) == list(saved["model"])
    assert [name for name in os.listdir(tmp_path)] == ["model.pth"]  # no temporary left


def test_files_it_cannot_read_get_a_clear_error(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint")
    with pytest.raises(pickle.UnpicklingError, match="not a file torch.save writes"):
        torch.load(text)
    foreign = tmp_path / "model.pth"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02cos\nsystem\nq\x00.")
        archive.writestr("archive/version", "3\n")
    with pytest.raises(pickle.UnpicklingError, match="needs os.system"):
        torch.load(foreign)
