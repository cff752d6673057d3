"""Property-based fuzzing of the torch face's class-index and statistics functions, added after
the first fuzz suites: ``F.one_hot``, ``F.nll_loss``, ``F.cross_entropy`` with labels inside
and outside ``[0, num_classes)``, and ``var``/``std`` with every ``correction``, against NumPy
statements of PyTorch's rules. An out-of-range class is an error (PyTorch's), never a row of
zeros or a loss computed without it; no degrees of freedom left is inf or NaN, as in PyTorch.

Every example runs in an isolated worker (crash_isolation.py) with a fixed seed.
"""
import numpy as np
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

TYPED_ERRORS = ("ValueError", "TypeError", "IndexError", "OpError")
FUZZ_SEED = 20261124


def _assert_typed(error):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in TYPED_ERRORS), f"untyped {type(error).__name__}: {error}"


def check_class_functions(labels, classes, name):
    import gpuaccel
    import gpuaccel.nn.functional as F
    target = gpuaccel.tensor(np.array(labels, np.int64))
    logits = np.linspace(-2, 2, len(labels) * classes, dtype=np.float32).reshape(len(labels),
                                                                                   classes)
    in_range = all(0 <= v < classes for v in labels)
    try:
        if name == "one_hot":
            out = F.one_hot(target, classes).numpy()
        elif name == "nll_loss":
            out = F.nll_loss(gpuaccel.tensor(logits), target, reduction="none").numpy()
        else:
            out = F.cross_entropy(gpuaccel.tensor(logits), target, reduction="none").numpy()
    except Exception as error:  # noqa: BLE001
        _assert_typed(error)
        assert not in_range or classes == 0, f"{name} refused {labels} of {classes}: {error}"
        return "rejected"
    assert in_range, f"{name} accepted {labels} with {classes} classes: {out}"
    rows = np.arange(len(labels))
    if name == "one_hot":
        expected = np.zeros((len(labels), classes), np.int64)
        expected[rows, labels] = 1
        np.testing.assert_array_equal(out, expected)
    elif name == "nll_loss":
        np.testing.assert_allclose(out, -logits[rows, labels], rtol=1e-6)
    else:
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        np.testing.assert_allclose(out, -log_probs[rows, labels], rtol=1e-5, atol=1e-5)
    return "ok"


@settings()  # the profile's budget (conftest.py)
@seed(FUZZ_SEED)
@given(st.lists(st.integers(-3, 6), min_size=1, max_size=5), st.integers(1, 5),
       st.sampled_from(["one_hot", "nll_loss", "cross_entropy"]))
# Regressions: one_hot gave a row of zeros for class 5 of 3 (TF's rule, not PyTorch's) and
# nll_loss a loss of -0.5 for a target of 9 with 3 classes.
@example([0, 5], 3, "one_hot")
@example([0, 9], 3, "nll_loss")
def test_class_indices_out_of_range_are_errors(isolated, labels, classes, name):
    isolated.call("test_fuzz_torch", "check_class_functions", labels, classes, name)


def check_variance(shape, dim, correction):
    import gpuaccel
    x = (np.arange(int(np.prod(shape))) % 5).astype(np.float32).reshape(shape)
    count = x.size if dim is None else x.shape[dim]
    with np.errstate(divide="ignore", invalid="ignore"):
        # PyTorch's rule: divide by max(0, N - correction)
        squares = ((x - x.mean(axis=dim, keepdims=True)) ** 2).sum(axis=dim) if x.size else \
            np.float64(np.nan)
        expected = np.asarray(squares / max(0, count - correction), np.float64)
    got = gpuaccel.tensor(x).var(dim=dim, correction=correction).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True)
    return "ok"


@settings()
@seed(FUZZ_SEED)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), st.booleans(),
       st.integers(0, 6))
# Regression: with no degree of freedom left var returned the population variance (0 for one
# element) where PyTorch gives NaN or inf.
@example((1,), False, 1)
@example((2,), False, 5)
def test_variance_with_any_correction_matches_pytorch(isolated, shape, along_first, correction):
    isolated.call("test_fuzz_torch", "check_variance", shape, 0 if along_first else None,
                  correction)


def test_paddings_that_are_not_int64_integers_are_refused(isolated):
    # 2**70 (an object array) and 1.5 reached the tensor_full binding as its argument text.
    for call in ["gpuaccel.nn.functional.pad(gpuaccel.ones(2, 2), (2**70, 0))",
                 "gpuaccel.nn.functional.conv2d(gpuaccel.ones(1, 1, 4, 4),\n"
                 "                              gpuaccel.ones(2, 1, 3, 3), padding=2**70)",
                 "gpuaccel.pad(gpuaccel.ones(2, 2), [[0, 0], [1.5, 0]])"]:
        outcome = isolated.run(f"import gpuaccel\nimport gpuaccel.nn.functional\n{call}")
        assert outcome.error_type == "InvalidArgumentError", outcome
        assert "integers that fit in int64" in outcome.message, outcome
