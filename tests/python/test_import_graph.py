"""Guards the Python package against import circles (issue #27).

A circle between modules (a imports b, b imports a, directly or through others) makes the import
order matter: which module finishes loading first depends on which one a user imports first, and
a name read at module level can be missing half-way through. Hiding one arrow of the circle in a
function body only defers the problem to the first call, so this test counts every ``import`` and
``from ... import`` statement anywhere in a file, at module level or inside a function, class or
``if TYPE_CHECKING`` block.

The graph is read from the sources (python/gpuaccel), not from an imported package, so it needs
no build. Nodes are modules; a package's ``__init__`` is the module named after the package and
is an ordinary node, both as a source and as a target. An arrow goes from the importing module to:

* ``import a.b.c``: the module ``a.b.c``;
* ``from a.b import c``: ``a.b.c`` when that is a module (or package) of gpuaccel, else ``a.b``;
* relative imports are resolved against the importing module's package first.

Only arrows between two gpuaccel modules count.
"""
import ast
import pathlib

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[2] / "python" / "gpuaccel"
# Modules built from C++ rather than read from a .py file: ``from gpuaccel import _C`` imports
# the extension module, not the package, so it is a leaf node (it imports no Python module).
EXTENSION_MODULES = ("gpuaccel._C",)


def module_names(package_root):
    """Maps each module name under ``package_root`` to (path, is_package)."""
    modules = {}
    base = package_root.parent
    for path in sorted(package_root.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def known_modules(package_root=PACKAGE_ROOT):
    """Every module name an import may reach: the .py sources and the extension modules."""
    return set(module_names(package_root)) | set(EXTENSION_MODULES)


def _resolve_relative(module, is_package, level, target):
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        package = package[:len(package) - (level - 1)]
    return ".".join(package + ([target] if target else []))


def imports_of(module, path, is_package, every_module):
    """The gpuaccel modules that ``module`` (its source at ``path``) imports, anywhere in the file."""
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(module, is_package, node.level, node.module)
            else:
                base = node.module
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                targets.add(candidate if candidate in every_module else base)
    resolved = set()
    for target in targets:
        # ``import a.b.c`` where ``a.b`` is a gpuaccel module but ``a.b.c`` is not one (a name
        # that cannot be imported) still points at ``a.b``, its longest known prefix.
        parts = target.split(".")
        while parts and ".".join(parts) not in every_module:
            parts.pop()
        if parts:
            resolved.add(".".join(parts))
    resolved.discard(module)
    return resolved


def import_graph(package_root=PACKAGE_ROOT):
    modules = module_names(package_root)
    every_module = known_modules(package_root)
    graph = {name: imports_of(name, path, is_package, every_module)
             for name, (path, is_package) in modules.items()}
    graph.update({name: set() for name in EXTENSION_MODULES})
    return graph


def strongly_connected_components(graph):
    """Tarjan's algorithm, iterative; returns the components with more than one module."""
    index_of, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index_of:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index_of[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index_of:
                    index_of[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index_of[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def a_cycle_through(graph, component):
    """One concrete circle inside ``component`` (a list of modules that starts and ends with
    its first module): the shortest way back to it, by breadth-first search."""
    start = component[0]
    members = set(component)
    came_from = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [start]
                    while node is not None:
                        path.append(node)
                        node = came_from[node]
                    return path[::-1]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle found in component {component}")


def describe_circles(graph):
    return [" -> ".join(a_cycle_through(graph, component))
            + (f"  (component of {len(component)}: {', '.join(component)})"
               if len(component) > 2 else "")
            for component in strongly_connected_components(graph)]


def test_the_sources_are_where_the_test_reads_them():
    graph = import_graph()
    assert "gpuaccel.keras.models" in graph and "gpuaccel._C" in graph, sorted(graph)[:10]
    assert "gpuaccel.keras" in graph["gpuaccel"], graph["gpuaccel"]
    assert "gpuaccel._C" in graph["gpuaccel.keras.models"], graph["gpuaccel.keras.models"]


def _write_package(root, files):
    for relative, text in files.items():
        path = root / "gpuaccel" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "gpuaccel"


def test_a_lazy_import_closes_a_circle(tmp_path):
    """The detector on a small package: a function-level ``from ..a import f`` back to the
    module that imports this one is a circle, reported by name; the relative forms resolve."""
    package = _write_package(tmp_path, {
        "__init__.py": "from . import a\nfrom . import _C\n",
        "a.py": "from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "import numpy\n\ndef g():\n    from ..a import f\n    return f\n",
    })
    graph = import_graph(package)
    assert graph["gpuaccel"] == {"gpuaccel.a", "gpuaccel._C"}
    assert graph["gpuaccel.a"] == {"gpuaccel.sub.b"}
    assert graph["gpuaccel.sub.b"] == {"gpuaccel.a"}
    assert describe_circles(graph) == ["gpuaccel.a -> gpuaccel.sub.b -> gpuaccel.a"]

    (package / "sub" / "b.py").write_text("def g():\n    return 1\n", encoding="utf-8")
    assert describe_circles(import_graph(package)) == []


def test_a_longer_circle_is_named_with_every_module_in_it(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "import gpuaccel.b\n",
        "b.py": "from gpuaccel import c\n",
        "c.py": "from gpuaccel.a import name_in_a\n",
    })
    assert describe_circles(import_graph(package)) == [
        "gpuaccel.a -> gpuaccel.b -> gpuaccel.c -> gpuaccel.a  "
        "(component of 3: gpuaccel.a, gpuaccel.b, gpuaccel.c)"]


def test_gpuaccel_has_no_import_circle():
    circles = describe_circles(import_graph())
    assert not circles, "import circles in python/gpuaccel:\n  " + "\n  ".join(circles)
