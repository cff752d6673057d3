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
    assert re.search(r'^WHEEL_SOURCE = "[^"]*"$', source, re.M), source
    assert (NOTEBOOK_DIR / "install_colab.sh").is_file()
    readme = (NOTEBOOK_DIR.parent / "README.md").read_text()
    colab = readme.split("## On Colab", 1)[1].split("\n## ", 1)[0]
    assert "REPO_URL" in colab and "WHEEL_SOURCE" in colab and "00_colab_gpu.ipynb" in colab


def _install_cell_source():
    cell = next(c for c in read_notebook(NOTEBOOKS[0]).cells
                if c.cell_type == "code" and "install_colab.sh" in c.source)
    return cell.source


def _run_install_cell(wheel_source, pip_fails=False, *, monkeypatch, tmp_path):
    """Runs the install cell (skip-execution in CI: it would install) as IPython would, with
    WHEEL_SOURCE set as an instructor sets it, pip and the shell replaced by recorders. The
    source route's shell call "succeeds" by creating the cell's marker file. Returns the pip
    command lines, the shell command lines and what the cell printed."""
    import io
    import subprocess
    import sys
    import tempfile
    from contextlib import redirect_stdout

    from IPython.core.inputtransformer2 import TransformerManager

    source = _install_cell_source()
    assert source.count('WHEEL_SOURCE = ""\n') == 1, "the cell sets WHEEL_SOURCE once, empty"
    source = source.replace('WHEEL_SOURCE = ""\n', f"WHEEL_SOURCE = {wheel_source!r}\n")
    code = TransformerManager().transform_cell(source)
    pip_calls, shell_calls = [], []

    def fake_run(args, **kwargs):
        pip_calls.append(list(args))
        return subprocess.CompletedProcess(args, 1 if pip_fails else 0, "", "ERROR: 404 Not Found")

    class FakeShell:
        def system(self, command):
            # IPython expands {name} from the cell's namespace before running the command.
            command = command.format_map(sys._getframe(1).f_globals)
            shell_calls.append(command)
            if "install_colab.sh" in command:
                (tmp_path / "gpuaccel_instalado").touch()

    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    printed = io.StringIO()
    with redirect_stdout(printed):
        exec(compile(code, "install cell", "exec"), {"get_ipython": FakeShell})
    return pip_calls, shell_calls, printed.getvalue()


def test_install_cell_takes_a_published_wheel_url_without_compiling(monkeypatch, tmp_path):
    url = "https://example.org/gpuaccel-0.1.0-cp312-cp312-manylinux_2_35_x86_64.whl"
    pip_calls, shell_calls, printed = _run_install_cell(url, monkeypatch=monkeypatch, tmp_path=tmp_path)
    assert pip_calls[0][-1] == url and "--no-deps" in pip_calls[0]
    assert pip_calls[1][-1] == "gpuaccel[notebooks]"
    assert not any("install_colab.sh" in c or "git " in c for c in shell_calls), shell_calls
    assert any("gpuaccel.info" in c for c in shell_calls)
    assert "desde la rueda publicada" in printed and re.search(r"en \d+ s\.", printed), printed


def test_install_cell_takes_a_find_links_folder_from_it_only(monkeypatch, tmp_path):
    pip_calls, _, printed = _run_install_cell("/content/ruedas", monkeypatch=monkeypatch,
                                              tmp_path=tmp_path)
    first = pip_calls[0]
    assert first[-4:] == ["--no-index", "--find-links", "/content/ruedas", "gpuaccel"], first
    assert "desde la rueda publicada (/content/ruedas)" in printed, printed


def test_install_cell_builds_from_source_without_a_wheel_or_when_the_wheel_fails(monkeypatch, tmp_path):
    pip_calls, shell_calls, printed = _run_install_cell("", monkeypatch=monkeypatch, tmp_path=tmp_path)
    assert pip_calls == []
    assert any("git clone" in c and "install_colab.sh" in c for c in shell_calls), shell_calls
    assert "desde el código de https://github.com/" in printed, printed

    pip_calls, shell_calls, printed = _run_install_cell(
        "https://example.org/missing.whl", pip_fails=True, monkeypatch=monkeypatch, tmp_path=tmp_path)
    assert len(pip_calls) == 1
    assert any("install_colab.sh" in c for c in shell_calls), shell_calls
    assert "No se pudo instalar la rueda" in printed and "404" in printed
    assert "desde el código" in printed, printed
