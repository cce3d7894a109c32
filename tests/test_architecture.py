"""Import rules: each third-party library lives in one place; the library never prints.

The CLI is thin (click only in ``sheetflow/cli``); statistics libraries only in
``sheetflow/stats``; the workbook libraries only where workbooks are written or read.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "sheetflow"

# library -> the modules (paths relative to sheetflow/) allowed to import it
ALLOWED = {
    "click": ("cli/",),
    "krippendorff": ("stats/",),
    "scipy": ("stats/",),
    "xlsxwriter": ("packs/writer.py", "packs/book.py", "report/", "collect/coordinator.py",
                   "collect/validate.py", "plan/workbook.py", "workbook/app_props.py"),
    "openpyxl": ("packs/writer.py", "collect/reader.py", "collect/safety.py",
                 "spec/tables.py", "demo/simulate.py", "judges/importer.py"),
    "python_calamine": ("collect/reader.py", "collect/safety.py"),
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_data" not in p.parts)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _allowed(rel: str, prefixes: tuple[str, ...]) -> bool:
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in prefixes)


def test_third_party_libraries_stay_in_their_modules():
    wrong = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        for name in _imports(path):
            if name in ALLOWED and not _allowed(rel, ALLOWED[name]):
                wrong.append(f"{rel} imports {name}")
    assert not wrong, wrong


def test_library_never_prints_or_exits():
    wrong = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("cli/") or rel == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else (
                    f"{getattr(func.value, 'id', '')}.{func.attr}"
                    if isinstance(func, ast.Attribute) else "")
                if name in ("print", "exit", "sys.exit", "quit"):
                    wrong.append(f"{rel}:{node.lineno} calls {name}")
    assert not wrong, wrong


def test_rules_name_real_modules():
    """A rule that names no existing file would guard nothing."""
    rels = {p.relative_to(PACKAGE).as_posix() for p in _modules()}
    for name, prefixes in ALLOWED.items():
        assert any(any(_allowed(r, (p,)) for r in rels) for p in prefixes), name


def _package_of(rel: str) -> str:
    """The subpackage a module path (relative to sheetflow/) belongs to ("" at the top)."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else ""


def _imported_package(rel: str, node: ast.ImportFrom) -> str | None:
    """The subpackage an ``import from`` reads from; None for another library."""
    if node.level == 0:
        parts = (node.module or "").split(".")
        return parts[1] if parts[0] == "sheetflow" and len(parts) > 1 else None
    here = rel.split("/")[:-1]  # the importing module's package, as a path
    base = here[:len(here) - (node.level - 1)]
    target = base + (node.module.split(".") if node.module else [])
    return target[0] if target else ""


def test_no_module_imports_a_private_name_of_another_package():
    """A helper one package shares with another is public and documented there; a
    private name may change without notice to anyone outside its package."""
    wrong = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported_package(rel, node)
            if source is None or source == _package_of(rel):
                continue
            wrong += [f"{rel}:{node.lineno} imports {a.name} from {source}"
                      for a in node.names if a.name.startswith("_")
                      and not a.name.startswith("__")]
    assert not wrong, wrong
