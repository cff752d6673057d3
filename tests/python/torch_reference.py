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
import re
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


_RUNS = {}


def run_once(snippet, **inputs):
    """``run(snippet, **inputs)``, computed once per snippet text for the whole session: a
    module-scoped fixture may be made again many times in the suite's shuffled order (see
    comparison_tests), and each run starts torch again. The snippet's text must determine its
    inputs (module constants)."""
    if snippet not in _RUNS:
        _RUNS[snippet] = run(snippet, **inputs)
    return _RUNS[snippet]


# ---- case tables: many gpuaccel-vs-PyTorch comparisons for one subprocess ----------------------
# A test module lists Case(...)s, runs them all through one PyTorch child (run_cases, in a
# module-scoped fixture: starting torch costs a second or two per run) and checks each one in its
# own parametrized test (check_case).

class Case:
    """One comparison: ``ours(**tensors)`` (gpuaccel) against the PyTorch expression ``theirs``
    evaluated with ``torch``, ``F`` (torch.nn.functional), ``np`` and the same inputs as torch
    tensors. ``ours`` may be an expression too, evaluated with gpuaccel.torch as ``torch`` and
    its functional as ``F`` (``ours=None``: the same text as ``theirs``). ``grad`` names the float inputs whose gradients of sum(out * cotangent(out)) over
    the floating outputs are compared too. ``raises``: torch raises and gpuaccel must raise this
    type (values are not compared then)."""

    def __init__(self, id, ours, theirs, inputs, grad=(), rtol=1e-5, atol=1e-6, raises=None):
        ours = theirs if ours is None else ours
        self.id, self.ours, self.theirs, self.inputs = id, ours, theirs, dict(inputs)
        self.grad, self.rtol, self.atol, self.raises = tuple(grad), rtol, atol, raises

    def __repr__(self):
        return self.id


def cotangent(shape):
    """A fixed, non-uniform output gradient: a plain sum would hide a wrong gradient of
    softmax-like ops (whose outputs sum to a constant)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.cos(np.arange(n, dtype=np.float64) * 0.7) + 0.1).reshape(shape).astype(np.float32)


_CASES_CHILD = r"""
import torch.nn.functional as F
def _cotangent(shape):
    n = int(np.prod(shape, dtype=np.int64))
    return torch.from_numpy((np.cos(np.arange(n, dtype=np.float64) * 0.7) + 0.1).reshape(
        shape).astype(np.float32))
for cid, expr, names, grads in CASES:
    try:
        t = {n: torch.from_numpy(globals()[cid + "__" + n]) for n in names}
        for n in grads:
            t[n].requires_grad_(True)
        r = eval(expr, {"torch": torch, "F": F, "np": np, **t})
        outs = list(r) if isinstance(r, (tuple, list)) else [r]
        out[cid + "__n"] = len(outs)
        for k, o in enumerate(outs):
            if isinstance(o, torch.Tensor):
                out[f"{cid}__v{k}"] = o.detach().numpy()
                out[f"{cid}__d{k}"] = str(o.dtype).replace("torch.", "")
            else:
                out[f"{cid}__v{k}"] = o
        if grads:
            loss = sum((o.float() * _cotangent(o.shape)).sum() for o in outs
                       if isinstance(o, torch.Tensor) and o.requires_grad)
            loss.backward()
            for n in grads:
                out[f"{cid}__g_{n}"] = t[n].grad.numpy()
    except Exception as e:
        out[cid + "__error"] = type(e).__name__ + ": " + str(e)
"""


def run_cases(cases):
    """{case id: what PyTorch computed} for ``cases``, in one child: ``n`` outputs, ``values``,
    ``dtypes`` (torch's names without "torch."), ``grads`` {input: array}, or ``error``."""
    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    spec = [(c.id, c.theirs, sorted(c.inputs), list(c.grad)) for c in cases]
    inputs = {f"{c.id}__{n}": np.asarray(a) for c in cases for n, a in c.inputs.items()}
    raw = run(f"CASES = {spec!r}\n" + _CASES_CHILD, **inputs)
    assert "error" not in raw, raw
    results = {}
    for c in cases:
        if c.id + "__error" in raw:
            results[c.id] = {"error": raw[c.id + "__error"]}
            continue
        n = raw[c.id + "__n"]
        results[c.id] = {"values": [raw[f"{c.id}__v{k}"] for k in range(n)],
                         "dtypes": [raw.get(f"{c.id}__d{k}") for k in range(n)],
                         "grads": {g: raw[f"{c.id}__g_{g}"] for g in c.grad}}
    return results


def _call_ours(case, tensors, ours_torch):
    if isinstance(case.ours, str):
        return eval(case.ours, {"torch": ours_torch, "F": ours_torch.nn.functional, "np": np,
                                **tensors})
    return case.ours(**tensors)


def check_case(case, ref):
    """Asserts that gpuaccel's ``case.ours`` matches PyTorch's result ``ref`` (from run_cases):
    the number of outputs, each output's dtype, shape and values, and the gradients."""
    import gpuaccel  # here, so that this module stays importable without gpuaccel built
    import gpuaccel.torch as ours_torch
    tensors = {n: gpuaccel.tensor(a, requires_grad=n in case.grad)
               for n, a in case.inputs.items()}
    if case.raises is not None:
        assert "error" in ref, f"PyTorch does not raise for {case.theirs}: {ref}"
        with pytest.raises(case.raises):
            _call_ours(case, tensors, ours_torch)
        return
    assert "error" not in ref, f"PyTorch failed on {case.theirs}: {ref['error']}"
    result = _call_ours(case, tensors, ours_torch)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    assert len(outs) == len(ref["values"]), (len(outs), len(ref["values"]))
    for ours, theirs, dtype in zip(outs, ref["values"], ref["dtypes"]):
        if dtype is None:  # a Python number, bool, string or list
            assert not isinstance(ours, gpuaccel.Tensor), f"torch gives {theirs!r}, not a tensor"
            if isinstance(theirs, (str, bool)) or theirs is None:
                assert ours == theirs and type(ours) is type(theirs), (ours, theirs)
            else:
                assert ours == pytest.approx(theirs, rel=case.rtol, abs=case.atol)
            continue
        assert isinstance(ours, gpuaccel.Tensor), f"torch gives a {dtype} tensor, not {ours!r}"
        assert ours._dtype_name == dtype, f"dtype {ours._dtype_name}, torch's is {dtype}"
        assert tuple(ours.shape) == theirs.shape, f"shape {tuple(ours.shape)}, torch's is " \
                                                  f"{theirs.shape}"
        np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=case.rtol, atol=case.atol)
    if case.grad:
        loss = None
        for o in outs:
            if isinstance(o, gpuaccel.Tensor) and o.requires_grad:
                term = (o.float() * gpuaccel.tensor(cotangent(tuple(o.shape)))).sum()
                loss = term if loss is None else loss + term
        loss.backward()
        for name in case.grad:
            grad = tensors[name].grad
            assert grad is not None, f"no gradient reached {name}"
            np.testing.assert_allclose(grad.numpy(), ref["grads"][name], rtol=case.rtol * 10,
                                       atol=case.atol * 10, err_msg=f"gradient of {name}")


def cases(prefix, expressions, inputs, rtol=1e-5, atol=1e-5):
    """Same-text Cases from (expression, "comma-separated inputs to differentiate") pairs;
    ``inputs``: a dict, or a function of the expression giving the dict it needs."""
    made = []
    for k, (expr, grad) in enumerate(expressions):
        made.append(Case(f"{prefix}{k}_" + re.sub(r"\W+", "_", expr)[:40], None, expr,
                         inputs(expr) if callable(inputs) else inputs,
                         grad=tuple(g for g in grad.split(",") if g), rtol=rtol, atol=atol))
    return made


def comparison_tests(all_cases):
    """(module-scoped fixture, parametrized test) for a test module's ``all_cases``: assign them
    to ``torch_results, test_matches_pytorch`` there. One torch subprocess runs every case."""
    # Computed once per module even where pytest makes the module-scoped fixture again: in the
    # whole suite's shuffled order (pytest-random-order) it did so for many tests, each run
    # starting torch again (10+ minutes for three modules instead of seconds).
    computed = []

    @pytest.fixture(scope="module")
    def torch_results():
        if not computed:
            computed.append(run_cases(all_cases))
        return computed[0]

    @pytest.mark.parametrize("case", all_cases, ids=lambda c: c.theirs)
    def test_matches_pytorch(case, torch_results):
        check_case(case, torch_results[case.id])
    return torch_results, test_matches_pytorch


# ---- one script, both torches ------------------------------------------------------------------
# For stateful APIs (optimizers, data loaders) a test writes one script that runs unchanged with
# the real torch and with gpuaccel's face as ``torch`` and compares what each put in ``out``.

_SCRIPT_HELPERS = r"""
def record_errors(expressions, scope):
    for index, expression in enumerate(expressions):
        try:
            eval(expression, scope)
            out[f"error_{index}"] = "no error"
        except Exception as error:
            out[f"error_{index}"] = type(error).__name__ + ": " + str(error)
"""


def run_script_both(script, face, **inputs):
    """(gpuaccel's ``out``, PyTorch's ``out``) of ``script`` run with ``face`` (gpuaccel.torch)
    and with PyTorch as ``torch``, ``np`` and ``inputs`` in scope. The script may call
    ``record_errors([expression, ...], globals())``: ``out["error_<i>"]`` is then "no error" or
    "TypeName: message" for each expression."""
    reference = run(_SCRIPT_HELPERS + script, **inputs)
    assert "error" not in reference, reference
    ours = {"torch": face, "np": np, "out": {}, **inputs}
    exec(_SCRIPT_HELPERS + script, ours)  # noqa: S102 - the same script the reference ran
    return ours["out"], reference


def assert_same_errors(ours, reference, count):
    """Each of the ``count`` expressions given to ``record_errors`` raised in PyTorch, and
    gpuaccel raised the same type with the same message."""
    errors = sorted(key for key in reference if key.startswith("error_"))
    assert len(errors) == count
    for key in errors:
        assert reference[key] != "no error", key
        assert ours[key] == reference[key], key
