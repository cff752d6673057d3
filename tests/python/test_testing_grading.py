"""Grading notebooks end to end: the notebook executor (a real Jupyter kernel; errors, the
skip-execution tag, the time budget), ``python -m gpuaccel.grade`` on the example submission in
docs/grading/ and on broken ones, the example instructor test file run by pytest with gpuaccel's
plugin, and the plugin's markers and GPU skipping."""
import importlib.metadata
import json
import pathlib
import subprocess
import sys

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError, CellTimeoutError
from nbformat.v4 import new_code_cell, new_notebook

from gpuaccel.testing import child_environment, homework171
from gpuaccel.testing.notebook import execute_notebook, write_notebook
from gpuaccel.testing.plugin import no_gpu_reason

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRADING = ROOT / "docs" / "grading"


def _notebook(*sources, budget=120, tags=None):
    cells = [new_code_cell(s) for s in sources]
    for index, cell_tags in (tags or {}).items():
        cells[index].metadata["tags"] = cell_tags
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                             "display_name": "Python 3",
                                                             "language": "python"}})
    nb.metadata["gpuaccel"] = {"time_budget_seconds": budget}
    return nb


def _run(args, cwd, **kwargs):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=child_environment(), timeout=600, **kwargs)


# ---- the executor
def test_a_cell_that_raises_fails_the_run_and_is_named(tmp_path):
    nb = _notebook("x = 1", "raise ValueError('roto')", "print('never')")
    with pytest.raises(CellExecutionError, match="roto"):
        execute_notebook(nb, tmp_path)
    result = execute_notebook(nb, tmp_path, allow_errors=True)
    assert [(e.cell_index, e.ename, e.evalue) for e in result.errors] == \
        [(1, "ValueError", "roto")]
    assert result.notebook.cells[2].outputs[0].text == "never\n"
    assert nb.cells[1].outputs == []  # the caller's notebook is not modified


def test_skip_execution_cells_and_the_kernel_environment(tmp_path):
    nb = _notebook("raise SystemExit('must not run')",
                   "import os, gpuaccel\nprint(os.getcwd(), os.environ.get('MPLBACKEND'), "
                   "os.environ['KIT_TEST'], gpuaccel.__file__)",
                   tags={0: ["skip-execution"]})
    result = execute_notebook(nb, tmp_path, env={"KIT_TEST": "yes", "MPLBACKEND": "Agg"})
    assert result.errors == [] and result.notebook.cells[0].outputs == []
    cwd, backend, variable, package = result.notebook.cells[1].outputs[0].text.split()
    import gpuaccel
    assert (cwd, variable) == (str(tmp_path), "yes")
    assert backend != "Agg"  # ipykernel's inline plots, not the caller's backend
    assert pathlib.Path(package) == pathlib.Path(gpuaccel.__file__)


def test_the_time_budget_interrupts_a_notebook(tmp_path):
    nb = _notebook("import time; time.sleep(60)", budget=3)
    with pytest.raises(CellTimeoutError):
        execute_notebook(nb, tmp_path)


def test_write_notebook_replaces_the_file_whole(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text("old", encoding="utf-8")
    nb = _notebook("1 + 1")
    write_notebook(nb, path)
    assert nbformat.read(str(path), as_version=4).cells[0].source == "1 + 1"
    assert [p.name for p in tmp_path.iterdir()] == ["n.ipynb"]


# ---- python -m gpuaccel.grade
def test_the_example_submission_passes_the_grader(tmp_path):
    proc = _run(["-m", "gpuaccel.grade", str(GRADING / "ejemplo_tarea171.ipynb"),
                 "--workdir", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6/6 criterios / criteria: APROBADA / PASSED" in proc.stdout
    assert (tmp_path / "informe171.json").is_file()


def _graded(tmp_path, *sources):
    path = tmp_path / "entrega.ipynb"
    write_notebook(_notebook(*sources), path)
    return _run(["-m", "gpuaccel.grade", str(path)], cwd=tmp_path)


def test_a_notebook_without_a_report_fails_every_criterion(tmp_path):
    proc = _graded(tmp_path, "print('hola')")
    assert proc.returncode == 1
    assert proc.stdout.count("[FALLA]") == 5 and "[OK   ] 0." in proc.stdout
    assert "The notebook created no report" in proc.stdout


def test_a_failing_cell_is_reported_and_what_was_recorded_is_graded(tmp_path):
    proc = _graded(tmp_path,
                   "from gpuaccel.testing import homework171\n"
                   "informe = homework171.Report()\n"
                   "informe.add_run('baseline', 3.0)",
                   "1 / 0")
    assert proc.returncode == 1
    assert "[FALLA] 0." in proc.stdout and "ZeroDivisionError" in proc.stdout
    assert "[OK   ] 1. Línea base" in proc.stdout
    assert "[FALLA] 2. Precisión mixta" in proc.stdout


def test_a_saved_report_is_graded_without_running_anything(tmp_path):
    report = homework171.Report()
    report.add_run("baseline", 3.0)
    path = report.save(tmp_path / "informe.json")
    proc = _run(["-m", "gpuaccel.grade", path], cwd=tmp_path)
    assert proc.returncode == 1
    assert "1/5 criterios" in proc.stdout


def test_the_grader_refuses_what_it_cannot_grade(tmp_path):
    proc = _run(["-m", "gpuaccel.grade", str(tmp_path / "nada.ipynb")], cwd=tmp_path)
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    (tmp_path / "x.json").write_text(json.dumps({"format": "other"}), encoding="utf-8")
    proc = _run(["-m", "gpuaccel.grade", str(tmp_path / "x.json")], cwd=tmp_path)
    assert proc.returncode == 2 and "not a homework 171 report" in proc.stderr


# ---- the pytest plugin and the instructor's example tests
def _plugin_installed():
    return any(ep.value == "gpuaccel.testing.plugin"
               for ep in importlib.metadata.entry_points(group="pytest11"))


def _pytest(args, cwd, **env):
    load = [] if _plugin_installed() else ["-p", "gpuaccel.testing.plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *load,
                           *args], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env=child_environment(**env))


def test_the_instructor_tests_explain_what_a_submission_lacks(tmp_path):
    proc = _pytest([str(GRADING / "test_homework171.py"), "-m", "not slow", "-q",
                    "--submission", str(_bad_report(tmp_path))], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "4 failed, 3 passed" in proc.stdout
    assert "Falta la ejecución con precisión mixta" in proc.stdout


def _bad_report(tmp_path):
    report = homework171.Report()
    report.add_run("baseline", 3.0)
    return report.save(tmp_path / "mal.json")


def test_instructor_tests_need_a_submission(tmp_path):
    proc = _pytest([f"{GRADING / 'test_homework171.py'}::test_homework171", "-q"],
                   cwd=tmp_path, GPUACCEL_SUBMISSION="")
    assert proc.returncode == 1
    assert "no submission to grade: run pytest with --submission PATH" in proc.stdout


def test_the_plugin_declares_the_markers_and_skips_gpu_tests_without_one(tmp_path):
    (tmp_path / "test_marked.py").write_text(
        "import pytest\n\n@pytest.mark.gpu\ndef test_on_gpu():\n    pass\n\n"
        "@pytest.mark.slow\ndef test_long():\n    pass\n", encoding="utf-8")
    markers = _pytest(["--markers"], cwd=tmp_path)
    assert "@pytest.mark.gpu: needs an NVIDIA GPU" in markers.stdout
    assert "@pytest.mark.slow: trains on a real data set" in markers.stdout
    proc = _pytest(["-rs", "-W", "error::pytest.PytestUnknownMarkWarning", "test_marked.py"],
                   cwd=tmp_path)
    reason = no_gpu_reason()
    if reason is None:
        assert "2 passed" in proc.stdout, proc.stdout
    else:
        assert "1 passed, 1 skipped" in proc.stdout, proc.stdout
        assert "needs a CUDA GPU" in proc.stdout
