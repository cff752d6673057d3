"""docs/api_coverage.md is generated from the real namespaces by tools/api_coverage.py (issue 30,
part 1); this fails when the committed table no longer matches a fresh walk (a name implemented,
refused or tested since, or another framework version), so CI keeps the table honest."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_api_coverage_table_is_up_to_date():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "api_coverage.py"), "--check"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout[-2000:]
    assert "is up to date" in done.stdout
