"""The issue-code tables in docs/issue-codes.md and README.md match the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

from sheetflow.collect.validate import CATALOGUE

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|\s*(error|warning)\s*\|(.*)\|\s*$")


def _table(text: str) -> dict[str, tuple[str, str]]:
    return {m.group(1): (m.group(2), m.group(3).strip())
            for m in map(ROW.match, text.splitlines()) if m}


def _catalogue() -> dict[str, tuple[str, str]]:
    return {t.code: (t.severity, t.meaning) for t in CATALOGUE.values()}


def test_docs_table_matches_catalogue_both_ways():
    table = _table((ROOT / "docs" / "issue-codes.md").read_text(encoding="utf-8"))
    assert table == _catalogue()


def test_readme_table_matches_catalogue():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Issue codes" in text
    section = text.split("## Issue codes", 1)[1].split("\n## ", 1)[0]
    assert _table(section) == _catalogue()


def test_codes_are_kebab_case_with_messages():
    for code, kind in CATALOGUE.items():
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", code)
        assert kind.severity in ("error", "warning")
        assert kind.template and kind.meaning


def test_guarantees_name_tests_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What sheetflow guarantees", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", section)
    assert len(named) >= 10
    for file, test in named:
        source = (ROOT / file).read_text(encoding="utf-8")
        assert re.search(rf"^def {test}\(", source, re.M), f"{file}::{test}"


def test_every_test_the_docs_name_exists():
    """A promise in README.md or docs/ names the tests behind it: each must exist."""
    import ast
    import re

    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {(m[1], m[2]) for path in texts
             for m in re.finditer(r"`?(tests/[\w/]+\.py)(?:::(\w+))?", path.read_text(
                 encoding="utf-8"))}
    assert len(named) > 20
    missing = []
    for file, test in sorted(named, key=str):
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
            continue
        if test:
            functions = {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                         if isinstance(n, ast.FunctionDef)}
            if test not in functions:
                missing.append(f"{file}::{test}")
    assert not missing, missing
