"""PyTorch as the reference for the torch-face tests, run in another interpreter.

PyPI's ``torch`` wheel brings ~5 GB of CUDA wheels into the test environment; Debian's
``python3-torch`` (CPU, for /usr/bin/python3; .ci/test installs it) is small. So the reference
side runs in a /usr/bin/python3 subprocess: ``run(snippet, x=array)`` executes ``snippet`` there
with ``torch``, ``np`` and the given arrays in scope, and returns what the snippet put in the dict
``out`` (NumPy arrays, numbers, strings, lists), or the exception it raised as
``{"error": (type name, message)}``. A missing torch is a test failure with the install hint,
never a skip.
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

TORCH_PYTHON = os.environ.get("GPUACCEL_TORCH_PYTHON", "/usr/bin/python3")

_CHILD = r"""
import json, sys, traceback
import numpy as np
import torch
folder = sys.argv[1]
scope = {"torch": torch, "np": np, "out": {}}
scope.update(dict(np.load(folder + "/inputs.npz")))
try:
    exec(open(folder + "/snippet.py").read(), scope)
    arrays = {k: v for k, v in scope["out"].items() if isinstance(v, np.ndarray)}
    values = {k: v for k, v in scope["out"].items() if not isinstance(v, np.ndarray)}
    np.savez(folder + "/arrays.npz", **arrays)
    json.dump({"values": values}, open(folder + "/result.json", "w"))
except Exception as e:
    json.dump({"error": [type(e).__name__, str(e)]}, open(folder + "/result.json", "w"))
"""


def run(snippet, **inputs):
    """What ``snippet`` computed with PyTorch (see the module doc)."""
    with tempfile.TemporaryDirectory() as folder:
        np.savez(os.path.join(folder, "inputs.npz"), **inputs)
        with open(os.path.join(folder, "snippet.py"), "w") as f:
            f.write(snippet)
        done = subprocess.run([TORCH_PYTHON, "-c", _CHILD, folder], capture_output=True,
                              text=True, timeout=300)
        if "No module named 'torch'" in done.stderr or done.returncode == 127:
            pytest.fail(f"the PyTorch reference needs torch for {TORCH_PYTHON}: "
                        "apt-get install python3-torch (Debian's CPU build; .ci/test installs "
                        "it), or point GPUACCEL_TORCH_PYTHON at a Python that has torch")
        if done.returncode != 0:
            pytest.fail(f"the PyTorch reference run failed:\n{done.stderr[-3000:]}")
        with open(os.path.join(folder, "result.json")) as f:
            result = json.load(f)
        if "error" in result:
            return {"error": tuple(result["error"])}
        out = dict(result["values"])
        with np.load(os.path.join(folder, "arrays.npz")) as arrays:
            out.update({k: arrays[k] for k in arrays.files})
        return out
