"""Runs a Jupyter notebook top to bottom in a real kernel, as a student's Jupyter or Colab would.

One executor serves three callers: CI's notebook test, the script that regenerates the committed
outputs of ``notebooks/`` and the homework grader (``python -m gpuaccel.grade``). A real kernel
(nbclient + ipykernel) matters: ``!shell`` and ``%magic`` lines, inline plots and the display of
a cell's last value behave as they do for a student, which pasting cells into a script does not.

Conventions the notebooks follow:

- A cell tagged ``skip-execution`` is not run (nbclient's own tag): the Colab install cell and
  ``%tensorboard``, which starts a server.
- ``metadata.gpuaccel.time_budget_seconds`` bounds the whole notebook's wall-clock time (default
  :data:`DEFAULT_BUDGET_SECONDS`); a notebook past its budget is interrupted and fails.
- The kernel imports the same gpuaccel as the caller (its folder goes first on PYTHONPATH) and
  draws plots inline (a caller's ``MPLBACKEND`` is not passed on).

Needs the optional packages ``nbclient``, ``nbformat`` and ``ipykernel``
(``pip install gpuaccel[notebooks]``).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from ._child_env import child_environment

__all__ = ["DEFAULT_BUDGET_SECONDS", "SKIP_TAG", "CellError", "ExecutionResult",
           "time_budget_seconds", "read_notebook", "execute_notebook",
           "write_notebook"]

#: Wall-clock seconds a notebook may take when its metadata names no budget.
DEFAULT_BUDGET_SECONDS = 300
#: Cells with this tag are kept in the notebook but never executed.
SKIP_TAG = "skip-execution"


def _require(module):
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError(
            f"running notebooks needs the package {module!r}: pip install \"gpuaccel[notebooks]\" "
            "(nbclient, nbformat, ipykernel, matplotlib)") from e


@dataclass
class CellError:
    """A code cell that raised: its index among all cells, the exception's name and text."""

    cell_index: int
    ename: str
    evalue: str

    def __str__(self):
        return f"cell {self.cell_index}: {self.ename}: {self.evalue}"


@dataclass
class ExecutionResult:
    """The executed notebook (outputs filled in), how long it took and the cells that raised."""

    notebook: object
    seconds: float
    errors: list[CellError] = field(default_factory=list)


def read_notebook(path):
    """The notebook at ``path`` (nbformat v4), validated."""
    nbformat = _require("nbformat")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"notebook {path!r} does not exist")
    try:
        return nbformat.read(path, as_version=4)
    except (nbformat.ValidationError, TypeError, AttributeError, KeyError) as e:
        # JSON that is no notebook fails in nbformat's schema check or its version conversion
        raise ValueError(f"{path!r} is not a valid Jupyter notebook: {e}") from None


def time_budget_seconds(notebook):
    """The notebook's ``metadata.gpuaccel.time_budget_seconds``, else the default."""
    settings = notebook.metadata.get("gpuaccel", {})
    if not isinstance(settings, dict):
        raise ValueError(f"metadata.gpuaccel must be an object such as "
                         f'{{"time_budget_seconds": 300}}, got {settings!r}')
    budget = settings.get("time_budget_seconds", DEFAULT_BUDGET_SECONDS)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
        raise ValueError("metadata.gpuaccel.time_budget_seconds must be a positive number of "
                         f"seconds, got {budget!r}")
    return budget


def _cell_errors(notebook):
    errors = []
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "error":
                errors.append(CellError(index, output.get("ename", "?"), output.get("evalue", "")))
    return errors


def execute_notebook(notebook, workdir, *, budget_seconds=None, allow_errors=False, env=None):
    """Executes ``notebook`` (a path or an nbformat node, which is not modified) with the
    kernel ``workdir`` as its current folder; returns an :class:`ExecutionResult`.

    ``budget_seconds`` (default: the notebook's own budget) bounds the whole run: each cell may
    use what the earlier ones left, and a cell past the deadline raises nbclient's
    ``CellTimeoutError``. A cell that raises stops the run with nbclient's
    ``CellExecutionError`` unless ``allow_errors``; then the run goes on and the result lists
    every cell that raised. ``env`` adds variables to the kernel's environment.
    """
    import copy
    nbclient = _require("nbclient")
    _require("ipykernel")
    if not isinstance(notebook, dict):
        notebook = read_notebook(notebook)
    notebook = copy.deepcopy(notebook)
    if budget_seconds is None:
        budget_seconds = time_budget_seconds(notebook)
    workdir = os.fspath(workdir)
    if not os.path.isdir(workdir):
        raise FileNotFoundError(f"workdir {workdir!r} is not a folder")
    kernel_env = child_environment(**(env or {}))
    kernel_env.pop("MPLBACKEND", None)  # inline plots, as in Jupyter

    start = time.monotonic()
    deadline = start + budget_seconds
    client = nbclient.NotebookClient(
        notebook,
        timeout_func=lambda cell: max(1, int(deadline - time.monotonic())),
        allow_errors=allow_errors,
        record_timing=False,  # no timestamps in committed files
        skip_cells_with_tag=SKIP_TAG,
        kernel_name=notebook.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": workdir}},
    )
    client.execute(env=kernel_env)
    return ExecutionResult(notebook=notebook, seconds=time.monotonic() - start,
                           errors=_cell_errors(notebook))


def write_notebook(notebook, path):
    """Writes ``notebook`` to ``path`` atomically (a reader never sees half a file)."""
    nbformat = _require("nbformat")
    from .._atomic_file import atomic_write_bytes
    nbformat.validate(notebook)
    text = nbformat.writes(notebook) + "\n"
    return atomic_write_bytes(path, text.encode("utf-8"))
