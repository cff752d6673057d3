"""The course notebooks run for real: each notebook in notebooks/ is executed top to bottom by a
Jupyter kernel (nbclient + ipykernel), on the CPU, within the time budget its metadata declares,
and a cell that raises fails the test with the cell and its traceback. The committed files
carry the outputs of such a run (notebooks/regenerate.py writes them), so a student browsing
the repository sees results."""
import pathlib
import re

import pytest

from gpuaccel.testing.notebook import SKIP_TAG, execute_notebook, read_notebook

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, f"{NOTEBOOK_DIR} has no .ipynb files"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_a_kernel(path, tmp_path):
    result = execute_notebook(path, tmp_path)  # raises CellExecutionError / CellTimeoutError
    assert result.errors == []
    print(f"{path.name}: {result.seconds:.1f} s")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_carries_its_outputs(path):
    notebook = read_notebook(path)
    assert "time_budget_seconds" in notebook.metadata.get("gpuaccel", {}), (
        f"{path.name}: declare metadata.gpuaccel.time_budget_seconds (CI's limit for the run)")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        if SKIP_TAG in cell.metadata.get("tags", []):
            assert not cell.outputs, f"{path.name} cell {index} is never run but has outputs"
            continue
        assert cell.execution_count is not None, (
            f"{path.name} cell {index} has not been run: python notebooks/regenerate.py "
            f"{path.name} (and commit the result)")
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{path.name} cell {index} was committed with an error: " \
                           f"{errors[0].ename}: {errors[0].evalue}"


def test_every_notebook_installs_with_the_same_cell():
    """One install mechanism (notebooks/install_colab.sh), one variable for the repository's URL,
    and the README's Colab section names that variable, so a student changes it in one place."""
    sources = {}
    for path in NOTEBOOKS:
        cells = [c for c in read_notebook(path).cells
                 if c.cell_type == "code" and "install_colab.sh" in c.source]
        assert len(cells) == 1, f"{path.name}: expected one install cell, found {len(cells)}"
        assert SKIP_TAG in cells[0].metadata.get("tags", []), f"{path.name}: tag it {SKIP_TAG}"
        sources[path.name] = cells[0].source
    assert len(set(sources.values())) == 1, "install cells differ between notebooks"
    source = next(iter(sources.values()))
    assert re.search(r'^REPO_URL = "[^"]+"$', source, re.M), source
    assert (NOTEBOOK_DIR / "install_colab.sh").is_file()
    readme = (NOTEBOOK_DIR.parent / "README.md").read_text()
    colab = readme.split("## On Colab", 1)[1].split("\n## ", 1)[0]
    assert "REPO_URL" in colab and "00_colab_gpu.ipynb" in colab
