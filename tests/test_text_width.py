"""Row heights for text in Chinese, Japanese and Korean.

Row heights are estimated from the text's width in digit widths (Excel's column
unit). A full-width character (East Asian width "W" or "F", Unicode UAX #11) is drawn
about as wide as two digits, so counting it as one gave CJK responses rows half as
tall as their text: in a locked pack the rater saw the first half of a response.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess

import openpyxl
import pytest
from render_helpers import paper_faults, print_to_pdf
from roundtrip_helpers import needs_soffice

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.text import estimate_lines
from sheetflow.spec.templates import init_study
from sheetflow.workbook.printing import text_lines, text_width

ZH = "这是一个关于患者安全的详细回答需要仔细阅读并评估其准确性与完整性"


@pytest.mark.parametrize(("text", "width"), [
    ("abc 123", 7), ("été à Paris", 11), ("中文", 4), ("한국어", 6), ("ＡＢ", 4),
    ("ｶﾀｶﾅ", 4),  # half-width katakana: one each
    ("日本語 and English", 6 + 12),
])
def test_full_width_characters_count_as_two_digits(text: str, width: int) -> None:
    assert text_width(text) == width


def test_wrapped_lines_of_cjk_text_count_its_width() -> None:
    assert text_lines("中" * 40, 20) == 5  # 80 digit widths in rows of 19
    assert text_lines("a" * 40, 20) == 3
    assert estimate_lines("中" * 40, 20) == 4 and estimate_lines("a" * 40, 20) == 2


def _response_row_height(tmp_path, text: str) -> float:
    root = tmp_path / ("zh" if not text.isascii() else "en")
    init_study(root, "paired-rubric")
    with (root / "items.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["response_baseline"] = row["response_improved"] = text
    with (root / "items.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    generate_packs(root)
    pack = sorted((root / "packs").glob("*.xlsx"))[0]
    ws = openpyxl.load_workbook(pack)["Scoring"]
    row = min(c.row for line in ws.iter_rows() for c in line if c.value == text)
    return ws.row_dimensions[row].height


def test_a_pack_gives_cjk_responses_rows_twice_as_tall(tmp_path) -> None:
    """The same number of characters, in Chinese and in Latin letters: the Chinese
    response's row is about twice as tall."""
    zh = _response_row_height(tmp_path, ZH * 30)
    en = _response_row_height(tmp_path, "abcdefghij" * (len(ZH) * 3))
    lines_zh, lines_en = (zh - 3) / 15, (en - 3) / 15  # 15 points a line, 3 of padding
    assert lines_en >= 5 and lines_zh >= 1.8 * lines_en


def _cjk_font_missing() -> str | None:
    found = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True,
                           text=True, check=False) if shutil.which("fc-list") else None
    return None if found and found.stdout.strip() else "no Chinese font (fc-list :lang=zh)"


@pytest.mark.libreoffice
@needs_soffice
def test_a_cjk_pack_prints_every_response_whole(tmp_path) -> None:
    """LibreOffice, with a Chinese font, prints a pack of Chinese responses: each
    response's text is on paper whole (a row too short cuts its last lines)."""
    why = _cjk_font_missing()
    if why:  # .ci/run installs one (fonts-wqy-microhei)
        if os.environ.get("CI"):
            pytest.fail(f"{why}; under CI this test must run")
        pytest.skip(why)
    _response_row_height(tmp_path, ZH * 30)
    pack = sorted((tmp_path / "zh" / "packs").glob("*.xlsx"))[0]
    pdf = print_to_pdf([pack], tmp_path / "pdf")[pack]
    faults = [f for f in paper_faults(pack, pdf) if "text not whole" in f]
    assert faults == []
