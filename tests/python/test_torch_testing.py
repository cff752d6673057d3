"""``gpuaccel.torch.testing.assert_close`` against PyTorch 1.13's (torch_reference): one script
calls it on the same pairs with the real torch and with ``import gpuaccel.torch as torch``; each
call must pass in both or fail in both with the same error type and the same message (Python
types named in a TypeError's text aside)."""
import numpy as np

import gpuaccel.torch as torch
import torch_reference

SCRIPT = """
a = torch.tensor(x)
CALLS = [
    "torch.testing.assert_close(a, a + 1e-7)",
    "torch.testing.assert_close(a, torch.tensor(y))",
    "torch.testing.assert_close(a, torch.tensor(y), rtol=0.3, atol=0.0)",
    "torch.testing.assert_close(a, torch.tensor(y), rtol=0.01, atol=0.0)",
    "torch.testing.assert_close(a, torch.tensor(y), rtol=0.0, atol=0.6)",
    "torch.testing.assert_close(a, a[:2])",
    "torch.testing.assert_close(a, a.int())",
    "torch.testing.assert_close(a, a.int(), check_dtype=False)",
    "torch.testing.assert_close(torch.tensor([1, 2, 7]), torch.tensor([1, 3, 4]))",
    "torch.testing.assert_close(torch.tensor([float('nan'), 1.0]), torch.tensor([float('nan'), 1.0]))",
    "torch.testing.assert_close(torch.tensor([float('nan'), 1.0]), torch.tensor([float('nan'), 1.0]), equal_nan=True)",
    "torch.testing.assert_close([a, a], [a, torch.tensor(y)])",
    "torch.testing.assert_close({'w': a, 'b': [a]}, {'w': a, 'b': [torch.tensor(y)]})",
    "torch.testing.assert_close([a], [a, a])",
    "torch.testing.assert_close(1.0, 1.0 + 1e-9)",
    "torch.testing.assert_close(1, 2)",
    "torch.testing.assert_close(2.0, 2.5)",
    "torch.testing.assert_close(a, torch.tensor(y), msg='custom text')",
    "torch.testing.assert_close(a, torch.tensor(y), rtol=0.1)",
    "torch.testing.assert_close(a, torch.tensor(y), atol=0.1)",
    "torch.testing.assert_close(torch.ones(2, 3), torch.tensor(z))",
    "torch.testing.assert_close(torch.tensor(x[0]), torch.tensor(x[0]) + 0.5)",
    "torch.testing.assert_close(a.half(), (a + 0.0004).half())",
    "torch.testing.assert_close(a, [1.0, 2.0])",
    "torch.testing.assert_close(torch.tensor([True, False]), torch.tensor([True, True]))",
]
record_errors(CALLS, globals())
"""


def test_assert_close_passes_and_fails_as_torchs():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(6,)).astype(np.float32)
    y = x.copy()
    y[[1, 4]] += np.float32(0.5)
    z = np.ones((2, 3), np.float32)
    z[1, 2] = 3.0
    ours, reference = torch_reference.run_script_both(SCRIPT, torch, x=x, y=y, z=z)
    keys = sorted(reference, key=lambda k: int(k.split("_")[1]))
    assert len(keys) == 25
    assert sum(reference[k] == "no error" for k in keys) == 4  # both outcomes are exercised
    for key in keys:
        if reference[key].startswith("TypeError: No comparison pair"):
            assert ours[key].startswith("TypeError: No comparison pair"), key
        else:
            assert ours[key] == reference[key], key
