"""The suite's markers (``gpu``, ``slow``) and the skipping of ``gpu`` tests without a GPU belong
to gpuaccel's pytest plugin (``gpuaccel.testing.plugin``), which pytest loads through the
package's ``pytest11`` entry point once gpuaccel is installed. A build run with
``PYTHONPATH=<build>/stage`` has no installed entry point, so the plugin is registered here
unless pytest already loaded it."""
import gpuaccel.testing.plugin as gpuaccel_plugin


def pytest_configure(config):
    if not config.pluginmanager.is_registered(gpuaccel_plugin):
        config.pluginmanager.register(gpuaccel_plugin, "gpuaccel")
