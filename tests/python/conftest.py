"""Skips tests marked ``@pytest.mark.gpu`` when gpuaccel sees no usable CUDA GPU (the marker is
declared in pyproject.toml), with gpuaccel's own reason, so the GPU tests run unchanged on Colab
and skip everywhere else."""
import pytest


def _no_gpu_reason():
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
    reason = _no_gpu_reason()
    if reason is not None:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))


# ---- hypothesis (the fuzz suites, tests/python/test_fuzz_*.py) ----
# 'ci' (the default) keeps the whole fuzz suite within a few minutes on two cores;
# `pytest --hypothesis-profile=long` runs many more examples locally. Found examples are kept
# in tests/python/hypothesis-db (committed), so every failure ever found is replayed first.
try:
    import hypothesis
except ImportError:  # the fuzz suites then fail at import, saying hypothesis is missing
    hypothesis = None

if hypothesis is not None:
    import os as _os

    from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

    class _KeepEveryExample(ExampleDatabase):
        """The committed example directory, append-only: hypothesis deletes an example once it
        stops failing, but a fixed bug's example must keep being replayed."""

        def __init__(self, path):
            super().__init__()
            self._directory = DirectoryBasedExampleDatabase(path)

        def save(self, key, value):
            self._directory.save(key, value)

        def fetch(self, key):
            return self._directory.fetch(key)

        def delete(self, key, value):
            pass

        def move(self, src, dest, value):
            self._directory.save(dest, value)

    _database = _KeepEveryExample(
        _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "hypothesis-db"))
    _common = dict(database=_database, deadline=None, print_blob=True,
                   suppress_health_check=[hypothesis.HealthCheck.too_slow,
                                          hypothesis.HealthCheck.data_too_large])
    hypothesis.settings.register_profile("ci", max_examples=100, **_common)
    hypothesis.settings.register_profile("long", max_examples=1500, **_common)
    hypothesis.settings.load_profile("ci")
