"""The course notebooks run top to bottom: every code cell of every notebook in notebooks/ is
executed in order, in a fresh process, against the installed package. Lines starting with '!'
or '%' (shell/magic, e.g. Colab's install cell) are skipped."""
import json
import pathlib
import subprocess
import sys

import pytest

from runtime_fixtures import package_environment

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def notebook_script(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    chunks = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        lines = [l for l in "".join(cell["source"]).splitlines()
                 if not l.lstrip().startswith(("!", "%"))]
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks)


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no .ipynb files"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    script = tmp_path / "notebook.py"
    script.write_text(notebook_script(path), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=package_environment(MPLBACKEND="Agg"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
