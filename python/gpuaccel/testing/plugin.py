"""gpuaccel's pytest plugin, loaded by pytest through the ``pytest11`` entry point ``gpuaccel``.

It owns the test markers every gpuaccel test suite uses, the project's and an instructor's:

- ``gpu``: the test needs a usable NVIDIA GPU; without one it is skipped with gpuaccel's own
  reason (no driver, built without CUDA, ...), so the same file runs on Colab and skips
  elsewhere;
- ``slow``: the test trains for minutes; deselect with ``-m "not slow"``.

And the fixture an instructor grades with: ``homework171_submission``, the student's
submission named by ``--submission PATH`` (or the ``GPUACCEL_SUBMISSION`` variable): a notebook,
executed once per session, or a saved report (``.json``). See ``docs/grading/``.

Importing this module imports no gpuaccel code: pytest loads it in every session of an
environment where gpuaccel is installed.
"""
import os

import pytest

MARKERS = {
    "gpu": "needs an NVIDIA GPU; skipped with gpuaccel's reason when none is usable "
           "(run them on Colab, see README)",
    "slow": "trains on a real data set for minutes (run in CI; deselect with -m 'not slow')",
}
SUBMISSION_VARIABLE = "GPUACCEL_SUBMISSION"


def pytest_addoption(parser):
    group = parser.getgroup("gpuaccel", "gpuaccel homework grading")
    group.addoption("--submission", default=None, metavar="PATH",
                    help="a student's notebook (.ipynb) or saved homework report (.json) for "
                         f"the homework fixtures (default: ${SUBMISSION_VARIABLE})")


def pytest_configure(config):
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def no_gpu_reason():
    """Why ``gpu`` tests cannot run here, or None when a real CUDA GPU is usable."""
    try:
        from gpuaccel import _C, cuda
        if cuda.is_available() and _C.gpu_provider_kind() == "cuda":
            return None
        return "needs a CUDA GPU: " + (_C.gpu_unavailable_reason() or "none is visible")
    except Exception as e:  # noqa: BLE001 -- an import problem shows up in the tests themselves
        return f"needs a CUDA GPU; gpuaccel could not tell ({type(e).__name__}: {e})"


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = no_gpu_reason()
    if reason is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))


def _submission_path(config):
    try:
        path = config.getoption("--submission")
    except ValueError:  # the plugin was registered after the command line was parsed
        path = None
    path = path or os.environ.get(SUBMISSION_VARIABLE)
    if not path:
        pytest.fail(f"no submission to grade: run pytest with --submission PATH (a notebook "
                    f"or a saved report) or set {SUBMISSION_VARIABLE}", pytrace=False)
    if not os.path.isfile(path):
        pytest.fail(f"submission {path!r} does not exist", pytrace=False)
    return path


@pytest.fixture(scope="session")
def homework171_submission(request, tmp_path_factory):
    """The rubric of the class 171 submission given with ``--submission``: a
    :class:`gpuaccel.testing._rubric.Rubric`, one result per criterion (look one up with
    ``rubric['speedup']``). A notebook is executed in a temporary folder (once per session)."""
    from . import homework171
    path = _submission_path(request.config)
    if path.endswith(".ipynb"):
        return homework171.grade_notebook(path, workdir=tmp_path_factory.mktemp("submission"))
    return homework171.check(path)
