"""The one device call (.ci/device_check) and its kit (.ci/gpu_kit) between GPU runs: a GPU comes
rarely and unannounced, and a check that rotted in between, or that passes by skipping, would
waste it or vouch for nothing. Without a GPU (CI, and any machine with CUDA_VISIBLE_DEVICES="")
the check must name every stage, install the kit, then fail saying "no GPU"; its GoogleTest
stage must fail, not pass, when the GPU tests skip; the kit script must parse and build what the
check expects; and the GoogleTest filter must cover every GPU suite.

The kit here is a reduced one made from the build under test (no Python 3.12 wheel is built in
CI): site/ is this gpuaccel's package folder and gpuaccel_tests the build's GoogleTest binary.
"""
import ast
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import gpuaccel

REPO = pathlib.Path(__file__).resolve().parents[2]
DEVICE_CHECK = REPO / ".ci" / "device_check"
GPU_KIT = REPO / ".ci" / "gpu_kit"
# Every stage the one device call must run; removing one from the script fails this test.
STAGES = ["report", "gtest", "pytest", "bench", "profile", "notebook"]


def gtest_binary():
    """The GoogleTest binary of the build this gpuaccel comes from (build/<x>/stage/gpuaccel ->
    build/<x>/gpuaccel_tests), else one of the repository's builds (CI: build/release)."""
    package = pathlib.Path(gpuaccel.__file__).resolve().parent
    candidates = [package.parent.parent / "gpuaccel_tests", REPO / "build" / "release" / "gpuaccel_tests",
                  *sorted((REPO / "build").glob("*/gpuaccel_tests"))]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    pytest.fail(f"gpuaccel_tests was not built (looked at {[str(c) for c in candidates]}); "
                "build with -DGPUACCEL_BUILD_TESTS=ON")


@pytest.fixture
def reduced_kit(tmp_path):
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "site").symlink_to(pathlib.Path(gpuaccel.__file__).resolve().parent.parent)
    (kit / "gpuaccel_tests").symlink_to(gtest_binary())
    return kit


def run_device_check(tmp_path, kit, *args, **extra_env):
    env = dict(os.environ, GPUACCEL_KIT=str(kit), OUT=str(tmp_path / "out"),
               GPUACCEL_KIT_WORK=str(tmp_path / "work"), PYTHON=sys.executable,
               CUDA_VISIBLE_DEVICES="", **extra_env)  # no GPU, also on a machine with one
    return subprocess.run(["bash", str(DEVICE_CHECK), *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)


def summary_lines(stdout):
    tail = stdout.split("== device check summary", 1)[1]
    return {line.split()[0]: line for line in tail.splitlines()[1:] if line.split()
            and line.split()[0] in STAGES}


def test_without_a_gpu_it_names_every_stage_then_fails_saying_no_gpu(tmp_path, reduced_kit):
    r = run_device_check(tmp_path, reduced_kit)
    out = r.stdout
    assert r.returncode != 0, out
    plan = re.findall(r"^stage: (\w+) (\d+) s", out, re.M)
    assert [name for name, _ in plan] == STAGES, out
    # The budgets fit one 560 s call with room for the install.
    assert sum(int(seconds) for _, seconds in plan) <= 520, plan
    assert "installed" in out or "using the installed gpuaccel" in out, out
    assert re.search(r"^FAIL: no GPU: \S", out, re.M), out
    summary = summary_lines(out)
    assert list(summary) == STAGES, out
    for stage, line in summary.items():
        assert "NOT RUN" in line and "no GPU" in line, line
    assert out.rstrip().endswith("== device check: FAIL"), out
    assert (tmp_path / "out" / "device_check.txt").read_text() == out


def test_a_targeted_rerun_runs_only_the_stage_named(tmp_path, reduced_kit):
    r = run_device_check(tmp_path, reduced_kit, "gtest")
    assert r.returncode != 0, r.stdout
    assert list(summary_lines(r.stdout)) == ["gtest"], r.stdout
    bad = run_device_check(tmp_path, reduced_kit, "no_such_stage")
    assert bad.returncode == 2 and "stages: " + " ".join(STAGES) in bad.stderr, bad.stderr


def test_the_gtest_stage_fails_when_the_gpu_tests_skip(tmp_path, reduced_kit):
    # Past the gate without a GPU: every GPU GoogleTest skips, which must be a FAIL.
    r = run_device_check(tmp_path, reduced_kit, "gtest", GPUACCEL_DEVICE_CHECK_NO_GATE="1")
    assert r.returncode != 0, r.stdout
    line = summary_lines(r.stdout)["gtest"]
    if gpuaccel.version.cuda:  # built with the CUDA backend: the GPU suites exist and skip
        assert re.search(r"FAIL +\d+ s +FAIL: \d+ GPU test\(s\) skipped", line), r.stdout
    else:
        assert "FAIL: no GPU test ran" in line, r.stdout
    assert (tmp_path / "out" / "gtest.txt").is_file()


def test_the_kit_script_parses_and_builds_what_the_check_expects():
    for script in (GPU_KIT, DEVICE_CHECK, REPO / ".ci" / "repair_wheel"):
        subprocess.run(["bash", "-n", str(script)], check=True)
    kit_plan = subprocess.run(["bash", str(GPU_KIT), "--print-plan"], capture_output=True,
                              text=True, check=True).stdout
    check_plan = subprocess.run(["bash", str(DEVICE_CHECK), "--print-plan"], capture_output=True,
                                text=True, check=True).stdout

    def kit_items(plan):
        return [" ".join(line.split()[1:3]) for line in plan.splitlines() if line.startswith("kit: ")]

    assert kit_items(kit_plan) == kit_items(check_plan) != [], (kit_plan, check_plan)
    assert "GPUACCEL_CUDA_ARCHITECTURES=90" in kit_plan and "GPUACCEL_BUILD_TESTS=ON" in kit_plan
    assert "cp312" in kit_plan
    # The kit builds without build isolation: its tools must include every build requirement of
    # pyproject.toml, pinned alike (a oneDNN bump there must reach the kit).
    pyproject = (REPO / "pyproject.toml").read_text()
    requires = re.search(r"^\[build-system\]\s*(?:#.*\n)*requires = \[([^\]]*)\]", pyproject, re.M)
    assert requires, "no [build-system] requires in pyproject.toml"
    tools = kit_plan.split("python ", 1)[1].splitlines()[0]
    for requirement in re.findall(r'"([^"]+)"', requires.group(1)):
        assert requirement in tools.split(), (requirement, tools)


def test_the_gtest_filter_covers_every_gpu_suite():
    plan = subprocess.run(["bash", str(DEVICE_CHECK), "--print-plan"], capture_output=True,
                          text=True, check=True).stdout
    gtest_filter = re.search(r"^gtest filter: (\S+)", plan, re.M).group(1)
    # a parameterized suite is named with its instantiation's prefix: */Suite.*
    in_filter = {pattern.split(".")[0].split("/")[-1]
                 for pattern in gtest_filter.split("-")[0].split(":")}
    cpp = REPO / "tests" / "cpp"
    sources = "\n".join(p.read_text() for p in [*cpp.glob("*_test.cc"), cpp / "cuda_test_device.h"])
    # Fixtures whose SetUp skips without a CUDA device, the fixtures built on them, the suites
    # using either, and TEST()s that skip saying they need a CUDA GPU.
    fixtures = set(re.findall(r"class (\w+) : public [\w:]+ \{\n(?:.*\n){0,8}?.*GTEST_SKIP\(\) << \"no CUDA device",
                              sources))
    fixtures |= set(re.findall(r"class (\w+) : public (?:%s)\b" % "|".join(fixtures), sources))
    gpu_suites = set(re.findall(r"TEST_[FP]\((\w+),", sources)) & fixtures
    gpu_suites |= set(re.findall(r"TEST\((\w+), \w+\) \{\n(?:.*\n){0,6}?.*GTEST_SKIP\(\) << \"needs a CUDA GPU",
                                 sources))
    assert {"CudaOps", "OptimCuda", "CudaLibraryOnGpu", "NcclOnGpu", "ProfilerGpu",
            "CudaBatchUploader"} <= gpu_suites, gpu_suites
    assert gpu_suites <= in_filter, f"GPU suites missing from the device check: {gpu_suites - in_filter}"


def test_notebook_cells_leave_out_and_require(tmp_path):
    notebook = tmp_path / "n.ipynb"
    cells = [{"cell_type": "code", "metadata": {}, "source": ["FLAG = False\n"]},
             {"cell_type": "code", "metadata": {}, "source": ["raise RuntimeError('the pytest cell ran')\n"]}]
    notebook.write_text(json.dumps({"cells": cells}))
    script = str(REPO / ".ci" / "notebook_cells.py")

    def run(*args):
        return subprocess.run([sys.executable, script, *args, str(notebook)], capture_output=True,
                              text=True, timeout=60)

    r = run("--leave-out-containing", "pytest cell")
    assert r.returncode == 0 and "cell 1: left out" in r.stdout, r.stdout + r.stderr
    r = run()
    assert r.returncode != 0 and "the pytest cell ran" in r.stderr, r.stderr
    r = run("--leave-out-containing", "pytest cell", "--leave-out-containing", "no cell has this")
    assert r.returncode != 0 and "no code cell contains ['no cell has this']" in r.stderr, r.stderr
    r = run("--leave-out-containing", "pytest cell", "--require-true", "FLAG")
    assert r.returncode != 0 and "FLAG is False" in r.stderr, r.stderr


def test_pytest_stage_leaves_out_only_uncollectable_modules_without_gpu_tests(tmp_path):
    script = str(REPO / ".ci" / "device_pytest_leave_out.py")
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "test_plain.py").write_text("import helpers\nimport pytest\n\ndef test_a():\n    pass\n")
    (tmp_path / "test_needs_tf.py").write_text(
        "import pytest\ntf = pytest.importorskip('no_such_module_xyz')\n\n"
        "def test_b():\n    assert 'pytest.mark.gpu' in 'a string is no mark'\n")
    r = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [f"--ignore={tmp_path / 'test_needs_tf.py'}"], r.stdout
    (tmp_path / "test_gpu_needs_tf.py").write_text(
        "import pytest\nfrom no_such_module_xyz import thing\n\n"
        "@pytest.mark.gpu\ndef test_c():\n    pass\n")
    r = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1, r.stdout
    assert "FAIL: test_gpu_needs_tf.py needs no_such_module_xyz" in r.stderr, r.stderr


def test_every_gpu_test_lives_in_a_module_the_device_image_can_import():
    """The device image has only the modules .ci/device_check lists in IMAGE_MODULES (plus
    gpuaccel from the kit and the standard library): a gpu test in a module that imports
    TensorFlow, Keras or PyTorch at its top would be left out there, never run on a GPU."""
    import importlib.util
    sys.path.insert(0, str(REPO / ".ci"))
    try:
        leave_out = importlib.import_module("device_pytest_leave_out")
    finally:
        sys.path.pop(0)
    listed = re.search(r'IMAGE_MODULES="([^"]*)"', (REPO / ".ci" / "device_check").read_text())
    image = {name.split(".")[0] for name in listed.group(1).split()} | {"gpuaccel"}
    tests = REPO / "tests" / "python"
    siblings = {p.stem for p in tests.glob("*.py")}
    unavailable = {}
    for path in sorted(tests.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not leave_out.has_gpu_tests(tree):
            continue
        missing = {m for m in leave_out.top_level_modules(tree)
                   if m not in image and m not in siblings and m not in sys.stdlib_module_names}
        # a sibling helper module counts by what it imports in turn
        for helper in {m for m in leave_out.top_level_modules(tree) if m in siblings}:
            helper_tree = ast.parse((tests / f"{helper}.py").read_text(encoding="utf-8"))
            missing |= {m for m in leave_out.top_level_modules(helper_tree)
                        if m not in image and m not in siblings
                        and m not in sys.stdlib_module_names}
        if missing:
            unavailable[path.name] = sorted(missing)
    assert not unavailable, f"gpu tests the device image cannot collect: {unavailable}"

