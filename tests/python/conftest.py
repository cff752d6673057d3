"""The suite's markers (``gpu``, ``slow``) and the skipping of ``gpu`` tests without a GPU belong
to gpuaccel's pytest plugin (``gpuaccel.testing.plugin``), which pytest loads through the
package's ``pytest11`` entry point once gpuaccel is installed. A build run with
``PYTHONPATH=<build>/stage`` has no installed entry point, so the plugin is registered here
unless pytest already loaded it."""
import gpuaccel.testing.plugin as gpuaccel_plugin


def pytest_configure(config):
    if not config.pluginmanager.is_registered(gpuaccel_plugin):
        config.pluginmanager.register(gpuaccel_plugin, "gpuaccel")


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
