"""Which test modules the device check's pytest stage must leave out, and whether that is safe.

The device image lacks TensorFlow and Keras (the reference implementations of the comparison
tests), so modules that import them, or `pytest.importorskip` them, at their top cannot be
collected there: pytest would count each as a skip (the stage fails on any skip) or a
collection error. Such a module is left out by name, printed, when it holds no gpu test; a
module that holds one is a FAIL, since its gpu tests would then never run on a GPU.

    python .ci/device_pytest_leave_out.py TESTS_DIR   prints --ignore=PATH ... (exit 1: a FAIL)
"""
import ast
import importlib.util
import pathlib
import sys


def top_level_modules(tree):
    """The root names a module imports or importorskips at its top."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]
        elif isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call):
            call = node.value
            name = getattr(call.func, "attr", getattr(call.func, "id", ""))
            if name == "importorskip" and call.args and isinstance(call.args[0], ast.Constant):
                yield str(call.args[0].value).split(".")[0]


def has_gpu_tests(tree):
    """Whether a test or class is decorated with pytest.mark.gpu, or the module's pytestmark
    names it (the text "mark.gpu" alone also appears in strings: a test of the marker itself)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any("mark.gpu" in ast.unparse(d) for d in node.decorator_list):
                return True
        elif isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "pytestmark" for t in node.targets):
            if "mark.gpu" in ast.unparse(node.value):
                return True
    return False


def main(tests_dir):
    tests = pathlib.Path(tests_dir)
    siblings = {p.stem for p in tests.glob("*.py")}
    ignores, failed = [], False
    for path in sorted(tests.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        missing = sorted({m for m in top_level_modules(tree)
                          if m not in siblings and importlib.util.find_spec(m) is None})
        if not missing:
            continue
        if has_gpu_tests(tree):
            print(f"FAIL: {path.name} needs {', '.join(missing)} (missing here) and holds gpu tests",
                  file=sys.stderr)
            failed = True
        else:
            print(f"left out {path.name}: needs {', '.join(missing)}, holds no gpu test",
                  file=sys.stderr)
            ignores.append(f"--ignore={path}")
    print(" ".join(ignores))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
