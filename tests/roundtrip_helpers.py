"""Fill generated rater workbooks as a rater would: through LibreOffice or openpyxl.

``plan_answers`` decides a valid answer for every answer cell of a manifest pack (from
the pack's own validation rules, varied by position) and the value collect must read
back. ``fill_openpyxl`` writes them into a copy of the pack; ``fill_libreoffice``
then has headless LibreOffice (private profile, timeout) load and re-save it as xlsx.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

from sheetflow.workbook import layout as L

NOTE_WORDS = ("Évaluation", "naïve", "中文", "emoji🙂", "ok", "tab\tstop", "line")



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


def libreoffice_profile(base: Path) -> Path:
    """A private LibreOffice profile folder, so tests never touch the user's profile."""
    profile = base / "lo-profile"
    profile.mkdir(parents=True, exist_ok=True)
    return profile


def fill_libreoffice(src: Path, dst: Path, answers: dict[str, tuple[Any, str]],
                     profile: Path, sheet: str = L.SCORING_SHEET) -> None:
    """Enter ``answers``, then have headless LibreOffice load and save the file as xlsx.

    The values are typed with openpyxl; LibreOffice then opens that workbook and
    saves it with its own "Calc MS Excel 2007 XML" filter, so what collect reads is
    LibreOffice's xlsx (its identity stores, floats, string tables and formulas).
    """
    work = dst.parent / ".lo-work"
    work.mkdir(exist_ok=True)
    typed = work / src.name
    fill_openpyxl(src, typed, answers, sheet)
    saved = work / "saved"
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation={profile.as_uri()}",
                    "--convert-to", "xlsx:Calc MS Excel 2007 XML", "--outdir", str(saved),
                    str(typed)], check=True, timeout=180, capture_output=True)
    out = saved / typed.name
    if not out.exists() or not zipfile.is_zipfile(out):
        raise RuntimeError(f"LibreOffice did not save {dst.name}")
    shutil.move(out, dst)
    shutil.rmtree(work)


def copy_pack(study: Path, pack: dict[str, Any], dst: Path) -> Path:
    """Copy a generated pack unchanged."""
    shutil.copyfile(study / L.PACKS_DIR / pack["file"], dst)
    return dst
