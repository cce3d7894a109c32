"""Fill generated rater workbooks as a rater would: through LibreOffice or openpyxl.

``plan_answers`` decides a valid answer for every answer cell of a manifest pack (from
the pack's own validation rules, varied by position) and the value collect must read
back. ``fill_openpyxl`` writes them into a copy of the pack with openpyxl;
``fill_libreoffice`` / ``fill_libreoffice_many`` have headless LibreOffice itself
enter them (through its UNO cell API, driven by ``tests/lo_fill.py`` in a Python that
has the UNO bridge) and save the workbook as xlsx.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sheetflow.packs.manifest import read_manifest
from sheetflow.workbook import layout as L

NOTE_WORDS = ("Évaluation", "naïve", "中文", "emoji🙂", "ok", "tab\tstop", "line")
LO_FILL = Path(__file__).resolve().with_name("lo_fill.py")
LO_TIMEOUT = 240.0  # seconds for one lo_fill.py run (all its files)
_WHOLE = re.compile(r"[0-9]+", re.ASCII)


def plan_answers(pack: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """Cell -> (value to enter, text collect must report) for every answer cell."""
    out: dict[str, tuple[Any, str]] = {}
    for i, a in enumerate(L.iter_answer_cells(pack)):
        rule = a["validation"]
        if rule["type"] == "list":
            choice = rule["choices"][(i * 7 + len(a["cell"])) % len(rule["choices"])]
            out[a["cell"]] = (choice, choice)
        elif rule["type"] == "whole":
            low, high = rule["min"], rule["max"] if rule["max"] is not None else rule["min"] + 9
            value = low + (i * 3) % (high - low + 1)
            out[a["cell"]] = (value, str(value))
        elif rule["type"] == "decimal":
            value = rule["min"] + 0.25 + i % 3
            out[a["cell"]] = (value, str(value))
        elif rule["type"] == "any":
            words = [NOTE_WORDS[(i + k) % len(NOTE_WORDS)] for k in range(60)]
            text = " ".join(words[:12]) + "\n" + " ".join(words[12:])
            out[a["cell"]] = (text, text)
    return out


def fill_openpyxl(src: Path, dst: Path, answers: dict[str, tuple[Any, str]],
                  sheet: str = L.SCORING_SHEET) -> None:
    """Write ``answers`` into a copy of ``src`` with openpyxl (strings stay strings)."""
    import openpyxl

    wb = openpyxl.load_workbook(src)
    ws = wb[sheet]
    for cell, (value, _) in answers.items():
        ws[cell].value = value
        if isinstance(value, str):
            ws[cell].data_type = "s"
    wb.save(dst)


def paired_study_with_filled_packs(root: Path) -> Path:
    """A paired-rubric study at ``root`` whose packs are filled and kept in ``filled/``."""
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    init_study(root, "paired-rubric")
    generate_packs(root)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    (root / "filled").mkdir()
    for pack in manifest["packs"]:
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / "filled" / pack["file"],
                      plan_answers(pack))
    return root


def libreoffice_profile(base: Path) -> Path:
    """A private LibreOffice profile folder, so tests never touch the user's profile."""
    profile = base / "lo-profile"
    profile.mkdir(parents=True, exist_ok=True)
    return profile


def find_soffice() -> str | None:
    """The LibreOffice launcher on PATH, or None."""
    return shutil.which("soffice")


@functools.cache
def find_uno_python() -> str | None:
    """A Python interpreter that can ``import uno`` (not necessarily this one), or None.

    ``SHEETFLOW_UNO_PYTHON`` wins when set; otherwise the system ``/usr/bin/python3``
    (Debian's ``python3-uno``), then ``python3`` on PATH.
    """
    candidates = [os.environ.get("SHEETFLOW_UNO_PYTHON"), "/usr/bin/python3",
                  shutil.which("python3")]
    for python in dict.fromkeys(c for c in candidates if c):
        if not Path(python).exists():
            continue
        try:
            probe = subprocess.run([python, "-c", "import uno"], capture_output=True,
                                   timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return python
    return None


def libreoffice_missing() -> str | None:
    """Why LibreOffice cannot fill workbooks here, or None when it can."""
    if find_soffice() is None:
        return "LibreOffice (soffice) is not installed"
    if find_uno_python() is None:
        return "no Python interpreter with LibreOffice's UNO bridge (python3-uno)"
    return None


needs_soffice = pytest.mark.skipif(
    shutil.which("soffice") is None and not os.environ.get("CI"),
    reason="LibreOffice (soffice) not on PATH; under CI (CI set) the test runs and fails")
"""For tests that only convert with ``soffice``: skipped outside CI when it is missing,
never under CI, where ``.ci/run`` installs it."""


def require_libreoffice() -> None:
    """Skip the calling test when LibreOffice cannot fill workbooks here, but fail it
    under CI (``CI`` set), where ``.ci/run`` installs LibreOffice: a skip there would
    let a run pass without a real spreadsheet application ever reading the packs."""
    why = libreoffice_missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{why}; under CI these tests must run (.ci/run installs it)")
    pytest.skip(why)


def entered_as_number(value: Any) -> bool:
    """Whether a rater's entry of ``value`` in LibreOffice makes a number.

    True for numbers and for list choices that are whole numbers (picking or typing
    a Likert ``5`` gives the number 5); other choices and notes stay text.
    """
    return isinstance(value, (int, float)) or (isinstance(value, str)
                                               and bool(_WHOLE.fullmatch(value)))


def _lo_cell(cell: str, value: Any) -> list[Any]:
    """One lo_fill.py cell: ``value`` (setValue) or ``string`` (setString)."""
    if entered_as_number(value):
        return [cell, "value", value if isinstance(value, float) else int(value)]
    return [cell, "string", value]


def fill_libreoffice_many(jobs: list[tuple[Path, Path, dict[str, tuple[Any, str]]]],
                          profile: Path, sheet: str = L.SCORING_SHEET,
                          timeout: float = LO_TIMEOUT) -> dict[str, Any]:
    """Have one headless LibreOffice enter answers into each ``(src, dst, answers)``.

    Runs ``tests/lo_fill.py`` with a Python that has UNO (a separate process: the
    bridge belongs to the system Python, not to the project's environment).
    LibreOffice loads each pack, enters every answer through its cell API on the
    protected Scoring sheet, reads it back, and saves with its own "Calc MS Excel
    2007 XML" filter, so what collect reads is LibreOffice's xlsx. Returns
    lo_fill.py's report; raises RuntimeError when anything failed. The soffice
    process lo_fill.py started is killed afterwards whatever happened.
    """
    python, soffice = find_uno_python(), find_soffice()
    if python is None or soffice is None:
        raise RuntimeError(libreoffice_missing())
    work = Path(tempfile.mkdtemp(prefix="lo-fill-", dir=profile.parent))
    pid_file = work / "soffice.pid"
    spec = {"soffice": soffice, "profile": str(profile), "timeout": timeout,
            "pid_file": str(pid_file),
            "jobs": [{"src": str(src), "dst": str(dst), "sheet": sheet,
                      "cells": [_lo_cell(c, v) for c, (v, _) in answers.items()]}
                     for src, dst, answers in jobs]}
    spec_file = work / "jobs.json"
    spec_file.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    clean = False
    try:
        done = subprocess.run([python, str(LO_FILL), str(spec_file)], capture_output=True,
                              timeout=timeout + 30, check=False, cwd=work)
        clean = done.returncode in (0, 1)  # lo_fill.py ended soffice itself
    finally:
        if not clean:
            _kill_started_soffice(pid_file)
    stdout = done.stdout.decode("utf-8", "replace").strip()
    try:
        report = json.loads(stdout.splitlines()[-1])
    except (IndexError, ValueError):
        report = {"ok": False, "error": "no report"}
    if done.returncode != 0 or not report.get("ok"):
        stderr = done.stderr.decode("utf-8", "replace")[-2000:]
        raise RuntimeError(f"lo_fill.py failed (status {done.returncode}): "
                           f"{report.get('error')}\n{stderr}")
    shutil.rmtree(work, ignore_errors=True)
    return report


def fill_libreoffice(src: Path, dst: Path, answers: dict[str, tuple[Any, str]],
                     profile: Path, sheet: str = L.SCORING_SHEET) -> None:
    """Have headless LibreOffice enter ``answers`` into ``src`` and save xlsx at ``dst``."""
    fill_libreoffice_many([(src, dst, answers)], profile, sheet)


def _kill_started_soffice(pid_file: Path) -> None:
    """Backstop when lo_fill.py did not end normally: end the group it started.

    lo_fill.py starts soffice as the leader of a new process group and records its
    pid; only that group is signalled, never LibreOffice processes found by name.
    """
    try:
        pgid = int(pid_file.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        for _ in range(30):
            time.sleep(0.1)
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return


def copy_pack(study: Path, pack: dict[str, Any], dst: Path) -> Path:
    """Copy a generated pack unchanged."""
    shutil.copyfile(study / L.PACKS_DIR / pack["file"], dst)
    return dst


def fail_at_pack(monkeypatch: pytest.MonkeyPatch, n: int, message: str) -> None:
    """Make ``generate`` fail when it writes its ``n``-th pack (as a full disk would)."""
    from sheetflow.errors import SheetflowError
    from sheetflow.packs import generate as G

    real, calls = G.write_pack, []

    def failing(path: Path, spec: Any, texts: Any) -> Any:
        calls.append(path)
        if len(calls) == n:
            raise SheetflowError(message)
        return real(path, spec, texts)
    monkeypatch.setattr(G, "write_pack", failing)


def return_every_pack(root: Path) -> list[dict[str, Any]]:
    """Fill every pack of the study with :func:`plan_answers` into ``returns/`` (as if
    every rater returned a complete, valid workbook); the manifest's packs."""
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for pack in packs:
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      plan_answers(pack))
    return packs


def paired_study_every_pack_returned(root: Path) -> Path:
    """A paired-rubric study made at ``root``, generated, and every pack returned
    filled in by :func:`return_every_pack` (openpyxl); ``root``."""
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    init_study(root, "paired-rubric")
    generate_packs(root)
    return_every_pack(root)
    return root


def first_return_changed(study: Path, tmp_path: Path, change: Callable[[Any], None],
                         ) -> tuple[Path, Path]:
    """A copy of ``study`` in ``tmp_path / "s"`` whose first return (by name) was opened
    with openpyxl, changed by ``change(workbook)`` and saved; the copy and that return."""
    import openpyxl

    root = Path(shutil.copytree(study, tmp_path / "s"))
    path = sorted((root / L.RETURNS_DIR).glob("*.xlsx"))[0]
    wb = openpyxl.load_workbook(path)
    change(wb)
    wb.save(path)
    return root, path


def generate_every_template(base: Path, **options: Any) -> dict[str, Path]:
    """Template name -> a study made from it under ``base`` and generated."""
    from sheetflow.packs import generate_packs
    from sheetflow.spec import init_study, list_templates

    out = {}
    for template in sorted(list_templates()):
        root = init_study(base / template, template)
        generate_packs(root, **options)
        out[template] = root
    return out


def paired_study_with_a_copy(tmp_path: Path, name: str,
                             ) -> tuple[Path, list[dict[str, Any]], Path]:
    """A paired-rubric study generated in ``tmp_path / "study"``, its ``returns/`` made;
    the manifest entries of its first two packs; a copy of the first pack at
    ``tmp_path / name``, for a test to change as a rater would."""
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][:2]
    copy = tmp_path / name
    shutil.copyfile(root / L.PACKS_DIR / packs[0]["file"], copy)
    return root, packs, copy


def return_both_from_libreoffice(root: Path, packs: list[dict[str, Any]], changed: Path,
                                 tmp_path: Path) -> None:
    """``changed`` returned as the first of ``packs`` and the second as generated, each
    with every answer (:func:`plan_answers`) entered and saved by LibreOffice itself."""
    jobs = [(changed, root / L.RETURNS_DIR / packs[0]["file"], plan_answers(packs[0])),
            (root / L.PACKS_DIR / packs[1]["file"], root / L.RETURNS_DIR / packs[1]["file"],
             plan_answers(packs[1]))]
    fill_libreoffice_many(jobs, libreoffice_profile(tmp_path))


def claim_identity(wb: Any, identity: dict[str, str]) -> None:
    """Write ``identity`` into all three identity stores of the openpyxl workbook ``wb``
    (custom property, defined name, hidden sheet), as a rater forging it would: they
    agree with each other, so only what they claim can give it away."""
    for key, value in identity.items():
        for prop in wb.custom_doc_props.props:
            if prop.name == L.identity_property(key):
                prop.value = value
        wb.defined_names[L.identity_name(key)].attr_text = f'"{value}"'
        wb[L.IDENTITY_SHEET].cell(L.IDENTITY_KEYS.index(key) + 1, 2).value = value
