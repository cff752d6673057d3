"""``torch.device`` and ``Tensor.device`` on the PyTorch face against PyTorch: a CPU tensor's
device is ``device(type='cpu')`` with no index, so it equals ``torch.device('cpu')`` (the test
`if x.device == torch.device('cpu')` in tutorials), hashes with it, and prints as 'cpu'."""
import gpuaccel.torch as torch
import torch_reference

DEVICES = """
x = torch.zeros(2)
d = x.device
out["repr"] = repr(d)
out["str"] = str(d)
out["type"] = d.type
out["index"] = d.index
out["equals_cpu"] = d == torch.device("cpu")
out["equals_cpu0"] = d == torch.device("cpu:0")
out["in_set"] = torch.device("cpu") in {d}
out["is_cpu"] = x.is_cpu
out["moved_to_own_device"] = str(x.to(d).device)
out["cuda1"] = [repr(torch.device("cuda:1")), str(torch.device("cuda", 1)),
                torch.device("cuda:1").index, torch.device("cuda") == torch.device("cuda:0")]
"""


def test_tensor_and_torch_device_match_pytorch():
    ours, theirs = torch_reference.run_script_both(DEVICES, torch)
    assert ours == theirs
    assert ours["equals_cpu"] and ours["index"] is None
