"""The environment of a child Python (a Jupyter kernel, a ``python -c`` in a test) that must
import the same gpuaccel as this process, whether it is installed or found through a
PYTHONPATH (a build's ``stage`` folder, possibly given as a relative path)."""
import os

__all__ = ["child_environment"]


def child_environment(**extra):
    """``os.environ`` with this gpuaccel's folder first on PYTHONPATH, plus ``extra``."""
    import gpuaccel
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(gpuaccel.__file__)))
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, **extra)
