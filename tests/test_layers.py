"""The house follows the data flow: imports point down the stages, never back; no circles.

The layers are read from the table in ``docs/architecture.md`` (one source for the rule
and its description). Every import counts: module level, inside functions and under
``if TYPE_CHECKING:``, relative or absolute.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sheetflow"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _layers() -> dict[str, int]:
    """Package or module name under ``sheetflow`` (``"sheetflow"`` for the package's own
    ``__init__``) -> its layer, from the table rows ``| N | `a`, `b` | ... |``."""
    layers = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if match:
            for name in re.findall(r"`([\w.]+)`", match.group(2)):
                layers[name] = int(match.group(1))
    return layers


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_data" in path.parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _target(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The module ``name`` refers to: itself, or its nearest enclosing module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, is_package: bool,
             modules: dict[str, tuple[Path, bool]]) -> set[str]:
    """Every sheetflow module ``module`` imports, anywhere in its source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "sheetflow"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "sheetflow":
                prefix = node.module or ""
            else:
                continue
            # "from pkg import sub" imports the submodule when there is one
            names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules else prefix
                     for a in node.names]
        else:
            continue
        found.update(t for t in (_target(n, modules) for n in names) if t and t != module)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(m, path, is_pkg, modules) for m, (path, is_pkg) in modules.items()}


def _layer_of(module: str, layers: dict[str, int]) -> int | None:
    if module == "sheetflow":
        return layers.get("sheetflow")
    top = module.split(".")[1]
    return layers.get(top)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_table_names_the_stages_in_flow_order():
    layers = _layers()
    order = ["stats", "spec", "packs", "collect", "judges", "analysis", "plan", "report",
             "demo", "cli"]
    assert [layers[name] for name in order] == sorted(layers[name] for name in order)
    assert len({layers[n] for n in ("spec", "packs", "collect", "analysis", "report",
                                     "cli")}) == 6


def test_every_module_sits_in_a_layer():
    layers = _layers()
    missing = [m for m in _graph() if _layer_of(m, layers) is None]
    assert not missing, f"add these to the table in docs/architecture.md: {missing}"


def test_no_import_points_up_the_flow():
    layers = _layers()
    wrong = []
    for module, targets in sorted(_graph().items()):
        here = _layer_of(module, layers)
        for target in sorted(targets):
            there = _layer_of(target, layers)
            if here is not None and there is not None and there > here:
                wrong.append(f"{module} (layer {here}) imports {target} (layer {there})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles():
    assert _circles(_graph()) == []


def test_the_checks_can_fail():
    """The circle finder and the layer reader catch what they are for."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = _graph()
    assert "sheetflow.packs.manifest" in graph["sheetflow.collect.run"]  # edges are seen
    assert "sheetflow.collect.run" in graph["sheetflow.collect.reminders"]  # function level too
    layers = _layers()
    assert _layer_of("sheetflow.report.workbook", layers) > \
        _layer_of("sheetflow.analysis.context", layers)


def test_each_stage_package_exports_its_entry_points():
    """The names a stage package lists (loaded on first use) all resolve, and none is
    also the name of a submodule (importing that submodule would replace the name)."""
    import importlib

    for name in ("spec", "packs", "collect", "judges", "demo"):
        package = importlib.import_module(f"sheetflow.{name}")
        assert package.__all__, name
        submodules = {p.stem for p in (PACKAGE / name).glob("*.py")}
        assert not submodules & set(package.__all__), name
        for attr in package.__all__:
            assert callable(getattr(package, attr)), f"sheetflow.{name}.{attr}"
            assert attr in dir(package)
