"""Fill generated rater workbooks as a rater would: through LibreOffice or openpyxl.

``plan_answers`` decides a valid answer for every answer cell of a manifest pack (from
the pack's own validation rules, varied by position) and the value collect must read
back. ``fill_openpyxl`` and ``fill_libreoffice`` write them into a copy of the pack.
LibreOffice is driven by a Basic macro in a private profile, so no Python UNO bridge
is needed.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

from sheetflow.workbook import layout as L

NOTE_WORDS = ("Évaluation", "naïve", "中文", "emoji🙂", "ok", "tab\tstop", "line")

MACRO = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1"
 script:language="StarBasic">
Sub Fill(inUrl As String, cmdUrl As String, outUrl As String)
  Dim args(0) As New com.sun.star.beans.PropertyValue
  args(0).Name = &quot;Hidden&quot;
  args(0).Value = True
  doc = StarDesktop.loadComponentFromURL(inUrl, &quot;_blank&quot;, 0, args())
  sfa = createUnoService(&quot;com.sun.star.ucb.SimpleFileAccess&quot;)
  stream = createUnoService(&quot;com.sun.star.io.TextInputStream&quot;)
  stream.setInputStream(sfa.openFileRead(cmdUrl))
  stream.setEncoding(&quot;UTF-8&quot;)
  Do While Not stream.isEOF()
    line = stream.readLine()
    If Len(line) &gt; 0 Then
      parts = Split(line, Chr(1))
      cell = doc.Sheets.getByName(parts(1)).getCellRangeByName(parts(2))
      If parts(0) = &quot;num&quot; Then
        cell.setValue(CDbl(parts(3)))
      ElseIf parts(0) = &quot;formula&quot; Then
        cell.setFormula(parts(3))
      Else
        cell.setString(Replace(parts(3), &quot;\\n&quot;, Chr(10)))
      End If
    End If
  Loop
  stream.closeInput()
  Dim sargs(0) As New com.sun.star.beans.PropertyValue
  sargs(0).Name = &quot;FilterName&quot;
  sargs(0).Value = &quot;Calc MS Excel 2007 XML&quot;
  doc.storeToURL(outUrl, sargs())
  doc.close(True)
End Sub
</script:module>
"""


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
    """A private LibreOffice profile holding the fill macro (made once per folder)."""
    profile = base / "lo-profile"
    module = profile / "user" / "basic" / "Standard" / "Module1.xba"
    if not module.exists():
        subprocess.run(["soffice", "--headless", f"-env:UserInstallation={profile.as_uri()}",
                        "--terminate_after_init"], check=True, timeout=120,
                       capture_output=True)
        module.write_text(MACRO, encoding="utf-8")
    return profile


def fill_libreoffice(src: Path, dst: Path, answers: dict[str, tuple[Any, str]],
                     profile: Path, raw_ops: list[tuple[str, str, str, str]] = (),
                     sheet: str = L.SCORING_SHEET) -> None:
    """Open ``src`` in headless LibreOffice, enter ``answers``, save as xlsx at ``dst``.

    ``raw_ops`` are extra (op, sheet, cell, text) edits with op ``num``, ``str`` or
    ``formula``.
    """
    lines = []
    for cell, (value, _) in answers.items():
        op = "num" if isinstance(value, int | float) else "str"
        lines.append((op, sheet, cell, str(value).replace("\n", "\\n")))
    lines += list(raw_ops)
    commands = dst.with_suffix(".commands.txt")
    commands.write_text("\n".join("\x01".join(x) for x in lines) + "\n", encoding="utf-8")
    macro = (f'macro:///Standard.Module1.Fill("{src.resolve().as_uri()}",'
             f'"{commands.resolve().as_uri()}","{dst.resolve().as_uri()}")')
    subprocess.run(["soffice", "--headless", f"-env:UserInstallation={profile.as_uri()}",
                    macro], check=True, timeout=180, capture_output=True)
    commands.unlink()
    if not dst.exists() or not zipfile.is_zipfile(dst):
        raise RuntimeError(f"LibreOffice did not save {dst.name}")


def copy_pack(study: Path, pack: dict[str, Any], dst: Path) -> Path:
    """Copy a generated pack unchanged."""
    shutil.copyfile(study / L.PACKS_DIR / pack["file"], dst)
    return dst
