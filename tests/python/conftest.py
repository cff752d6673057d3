"""The suite's markers (``gpu``, ``slow``) and the skipping of ``gpu`` tests without a GPU belong
to gpuaccel's pytest plugin (``gpuaccel.testing.plugin``), which pytest loads through the
package's ``pytest11`` entry point once gpuaccel is installed. A build run with
``PYTHONPATH=<build>/stage`` has no installed entry point, so the plugin is registered here
unless pytest already loaded it."""
import zlib

import numpy as np
import pytest

import gpuaccel.testing.plugin as gpuaccel_plugin


def pytest_configure(config):
    if not config.pluginmanager.is_registered(gpuaccel_plugin):
        config.pluginmanager.register(gpuaccel_plugin, "gpuaccel")


@pytest.fixture(autouse=True)
def _module_generators_reseeded_per_test(request):
    """The suite runs in a shuffled order (.ci/test), so a module-level NumPy generator drawn
    inside a test would hand that test inputs that depend on which tests ran before it: a
    failure seen once could not be replayed. Each module-level generator is reseeded before
    every test from the module's and the test's names (not the node id, whose path prefix
    differs between a checkout and CI), so a test's draws are a function of the test alone."""
    module = getattr(request, "module", None)
    if module is not None:
        seed = zlib.crc32(f"{module.__name__}::{request.node.name}".encode())
        for value in list(vars(module).values()):
            if isinstance(value, np.random.Generator):
                value.bit_generator.state = type(value.bit_generator)(seed).state
            elif isinstance(value, np.random.RandomState):
                value.seed(seed)
    yield


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
                   # the only function-scoped fixture every test gets is the reseeding above,
                   # which runs once per test, not per example, by design
                   suppress_health_check=[hypothesis.HealthCheck.too_slow,
                                          hypothesis.HealthCheck.data_too_large,
                                          hypothesis.HealthCheck.function_scoped_fixture])
    hypothesis.settings.register_profile("ci", max_examples=100, **_common)
    hypothesis.settings.register_profile("long", max_examples=1500, **_common)
    hypothesis.settings.load_profile("ci")
