"""``torch.nn.Module.to`` keeps its Parameter objects, as PyTorch's does: an optimizer made before
``model.to(device)`` or ``model.half()`` still updates the parameters the model computes with.
The device move runs on the fake CUDA library (two fake GPUs the CPU computes); the dtype change
on the CPU is compared with PyTorch."""
import gpuaccel.torch as torch
import torch_reference
from test_library_backend import run_with_fake

MOVE_AFTER_OPTIMIZER = r"""
import json
import numpy as np
import gpuaccel.torch as torch
# On a machine with a GPU new tensors go to it (TensorFlow's placement): start on the CPU.
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).to('cpu')
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
before = [p for p in model.parameters()]
x = torch.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, device='cpu')
model(x).sum().backward()   # a gradient on the CPU, moved with its parameter
start = sorted({str(p.device) for p in model.parameters()})
model.to('cuda')
out = {'start': start, 'same_objects': all(a is b for a, b in zip(before, model.parameters())),
       'devices': sorted({str(p.device) for p in model.parameters()}),
       'grad_devices': sorted({str(p.grad.device) for p in model.parameters()}),
       'buffer_device': str(model[1].running_mean.device),
       'leaf': all(p.is_leaf and p.requires_grad for p in model.parameters())}
weight = model[0].weight.detach().cpu().numpy()
optimizer.zero_grad()
loss = model(x.to('cuda')).pow(2).sum()
loss.backward()
grad = model[0].weight.grad.cpu().numpy()
optimizer.step()
out['stepped'] = bool(np.allclose(model[0].weight.detach().cpu().numpy(), weight - 0.5 * grad,
                                  rtol=1e-6, atol=1e-7))
out['grad_nonzero'] = bool(np.abs(grad).sum() > 0)
print(json.dumps(out))
"""


def test_an_optimizer_made_before_moving_to_the_gpu_steps_the_moved_parameters():
    r = run_with_fake(MOVE_AFTER_OPTIMIZER)
    assert r["start"] == ["cpu"] and r["same_objects"] and r["leaf"]
    assert r["devices"] == ["cuda:0"] and r["grad_devices"] == ["cuda:0"]
    assert r["buffer_device"] == "cuda:0"
    assert r["grad_nonzero"] and r["stepped"]


HALF_AFTER_OPTIMIZER = """
model = torch.nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
weight = model.weight
model.weight.grad = torch.ones(2, 3)
model.half()
out["same_object"] = model.weight is weight
out["in_optimizer"] = optimizer.param_groups[0]["params"][0] is model.weight
out["half"] = model.weight.dtype == torch.float16
out["grad_half"] = model.weight.grad.dtype == torch.float16
out["leaf"] = model.weight.is_leaf and model.weight.requires_grad
"""


def test_half_keeps_the_parameter_objects_as_pytorch():
    ours, theirs = torch_reference.run_script_both(HALF_AFTER_OPTIMIZER, torch)
    assert ours == theirs
    assert ours["same_object"] and ours["in_optimizer"] and ours["half"] and ours["grad_half"]
