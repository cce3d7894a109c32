"""The pack's progress line and colours say what collect says of the same file.

Red and "to correct" only where collect refuses a value (an error: the file is not
used); what collect accepts with a warning is not a value to correct. A text outside its
word range (``text-word-count``) is a hint the line names after "All N answers done";
a choice typed in another case or with spaces around it (``label-normalised``) and a
scale's number typed as text with a space after it (``number-stored-as-text``) are
answers. The values are written with openpyxl, the line computed by LibreOffice, and
collect reads the very same files.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import openpyxl
import pytest
from roundtrip_helpers import fill_openpyxl, libreoffice_profile, needs_soffice, plan_answers

from sheetflow.collect.run import collect
from sheetflow.collect.values import MAX_WHOLE
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.guides import how_to_lines, legend
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.rules import LARGEST_ANSWER
from sheetflow.packs.text import progress_text
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

CSV_FILTER = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,2"
HINT = "(purple; allowed, please check)"


def _study(base: Path, template: str) -> tuple[Path, dict]:
    root = base / template
    init_study(root, template)
    generate_packs(root)
    return root, read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]


def _cells(pack: dict, dimension: str, part: str = "value") -> list[str]:
    return [a["cell"] for a in L.iter_answer_cells(pack)
            if a["dimension"] == dimension and a["part"] == part]


def _required_total(root: Path, pack: dict) -> int:
    ws = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    return int(re.search(r"of (\d+) required", ws[L.PROGRESS_CELL].value).group(1))


def _progress_lines(tmp: Path, files: list[Path]) -> list[str]:
    """The progress line of each workbook as LibreOffice computes it."""
    out = tmp / "csv"
    lines = []
    for i, path in enumerate(files):  # one folder per file: the packs share a name
        subprocess.run(["soffice", f"-env:UserInstallation={libreoffice_profile(tmp).as_uri()}",
                        "--headless", "--convert-to", CSV_FILTER, "--outdir",
                        str(out / str(i)), str(path)],
                       capture_output=True, timeout=300, check=True)
        sheet = out / str(i) / f"{path.stem}-{L.SCORING_SHEET}.csv"
        lines.append(list(csv.reader(sheet.read_text(encoding="utf-8").splitlines()))[1][2])
    return lines


def _verdict(root: Path, path: Path) -> tuple[list[str], set[str]]:
    """Collect's error codes (sorted) and warning codes of the file at ``path``."""
    issues = collect(root, [path], write=False).report.issues
    return (sorted(i.code for i in issues if i.severity == "error"),
            {i.code for i in issues if i.severity == "warning"})


def _agreed(tmp: Path, cases: list[tuple], make: Callable[..., Path],
            ) -> Iterator[tuple[str, str, list[str], str, int]]:
    """Each case (root, pack, name, changes, expected line, errors, warnings) made into
    a file by ``make`` (:func:`_variant`, :func:`_plant`) and its progress line read by
    LibreOffice: collect's errors are the case's and its warnings hold the case's; a
    case expecting refused values (expected None) has as many to correct as collect's
    errors, each filled. Each case's (name, expected, errors, line, required total),
    for the caller to check the line further."""
    files = [make(tmp, root, pack, name, changes) for root, pack, name, changes, *_ in cases]
    lines = _progress_lines(tmp, files)
    for (root, pack, name, _, expected, errors, warnings), path, line in zip(
            cases, files, lines, strict=True):
        n = _required_total(root, pack)
        got_errors, got_warnings = _verdict(root, path)
        assert got_errors == errors, (name, got_errors)
        assert warnings <= got_warnings, (name, got_warnings)
        if expected is None:  # refused values: as many to correct as collect's errors
            assert re.match(rf"{len(errors)} to correct \(red cells, first: case \d+, row "
                            rf"\d+\); {n} of {n} ", line), (name, line)
        yield name, expected, errors, line, n


def _variant(tmp: Path, root: Path, pack: dict, name: str,
             changes: dict[str, object]) -> Path:
    """A copy of the pack with every cell answered (``plan_answers``) but ``changes``."""
    answers = {**plan_answers(pack), **{c: (v, "") for c, v in changes.items()}}
    dst = tmp / name / pack["file"]
    dst.parent.mkdir(parents=True)
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, answers)
    return dst


def test_the_progress_text_says_where_the_first_red_and_blank_cells_are():
    assert progress_text(0, 9, first_blank="case 1, row 9") == \
        "0 of 9 required answers filled (first blank: case 1, row 9)"
    assert progress_text(8, 9, 1, first_bad="case 2, row 40", first_blank="case 3, row 60") \
        == ("1 to correct (red cells, first: case 2, row 40); 8 of 9 required answers "
            "filled (first blank: case 3, row 60)")
    assert progress_text(9, 9, first_blank="case 1, row 9") == "All 9 answers done"


def test_the_progress_text_names_texts_outside_their_word_range_as_a_hint():
    assert progress_text(9, 9, off_range=1) == \
        f"All 9 answers done; 1 text outside its word range {HINT}"
    assert progress_text(8, 9, 1, off_range=2) == (
        f"1 to correct (red cells); 8 of 9 required answers filled; 2 texts outside their "
        f"word range {HINT}")


def test_the_legend_and_instructions_call_a_word_range_a_hint(tmp_path):
    """Only where a text has a word range; red stays "not allowed"."""
    ranged = load_study(init_study(tmp_path / "jl", "judge-likert"))
    plain = load_study(init_study(tmp_path / "ar", "answer-review"))
    assert legend(ranged.rubric.dimensions).endswith(
        "Purple: a text outside its word range (allowed; please check).")
    assert "Purple" not in legend(plain.rubric.dimensions)
    spec = SimpleNamespace(dimensions=ranged.rubric.dimensions, batch_size=0, totals=(),
                           include_study_answers=False)
    essential, _ = how_to_lines(spec, paired=False)
    assert any(line.startswith("Purple: a text shorter or longer than its suggested word "
                               "range. It is allowed") for line in essential)


def test_a_count_without_a_maximum_is_red_where_collect_finds_it_too_large():
    assert LARGEST_ANSWER == MAX_WHOLE


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_the_line_says_what_collect_says_of_the_same_file(tmp_path):
    likert_root, likert = _study(tmp_path, "judge-likert")
    review_root, review = _study(tmp_path, "answer-review")
    paired_root, paired = _study(tmp_path, "paired-rubric")
    rationale = _cells(likert, "rationale")[0]
    verdict, scale = _cells(likert, "overall_verdict")[0], _cells(likert, "accuracy")[0]
    flag, note = _cells(review, "gold_dispute")[0], _cells(review, "rater_note")[0]
    count, confidence = _cells(paired, "depth")[0], _cells(paired, "depth", "confidence")[0]
    preference = _cells(paired, "direction")[0]
    refusal = _cells(review, "refusal_appropriateness")[0]
    long_note = " ".join(["word"] * 300)  # methodology_notes takes 200-400 words
    cases = [  # root, pack, name, changes, line after the counts, errors, warnings
        (likert_root, likert, "long", {rationale: " ".join(["word"] * 90)},
         f"; 1 text outside its word range {HINT}", [], {"text-word-count"}),
        (likert_root, likert, "loose", {verdict: " pass_strong ", scale: "4 "},
         "", [], {"label-normalised", "number-stored-as-text"}),
        (likert_root, likert, "refused", {verdict: "PASS", scale: " 4"},
         None, ["number-after-space", "value-out-of-domain"], set()),
        (review_root, review, "flag", {flag: " Y ", note: "The gold answer is wrong."},
         "", [], {"label-normalised"}),
        (review_root, review, "flag-tab", {flag: "y\t", note: None},
         "; 1 note to write (orange)", ["flag-note-missing"], {"label-normalised"}),
        (paired_root, paired, "paired", {confidence: " high", preference: "a>b ",
                                          **dict.fromkeys(_cells(paired, "methodology_notes"),
                                                          long_note)},
         "", [], {"label-normalised"}),
        (paired_root, paired, "typed-variants", {preference: "A > B", **dict.fromkeys(
            _cells(paired, "methodology_notes"), long_note)},
         "", [], {"label-normalised"}),
        (review_root, review, "yes-and-hyphen", {flag: "yes", note: "Gold is wrong.",
                                                 refusal: "Over refusal"},
         "", [], {"label-normalised"}),
        (paired_root, paired, "too-large", {count: 2 * 10**9, **dict.fromkeys(
            _cells(paired, "methodology_notes"), "Too short.")},
         None, ["value-too-large"], {"text-word-count"}),
    ]
    for name, tail, errors, line, n in _agreed(tmp_path, cases, _variant):
        if name == "too-large":
            assert line.endswith(f"; 1 text outside its word range {HINT}"), line
        if tail is None:  # checked by _agreed
            continue
        if errors:  # the note collect misses is the line's note to write
            assert line == f"{n} of {n} required answers filled{tail}", (name, line)
        else:
            assert line == f"All {n} answers done{tail}", (name, line)


def test_a_choice_cell_is_read_once_and_a_wildcard_label_is_compared_whole():
    """Each label compared with its own copy of the cell's reading made the packs'
    formulas 2.4x longer (generate's time doubled in xlsxwriter's formula preparation):
    the labels are looked up at once with MATCH, except a label holding * ? or ~, which
    MATCH would read as a wildcard."""
    from sheetflow.packs.rules import invalid_formula

    plain = invalid_formula({"type": "list", "choices": ["Low", "Medium", "High"]}, "D17")
    assert plain.count("CHAR(9)") == 1 and 'MATCH(' in plain and \
        '{"low","medium","high"}' in plain
    odd = invalid_formula({"type": "list", "choices": ["Yes", "Not sure?"]}, "D17")
    assert "MATCH(" not in odd and odd.count("CHAR(9)") == 2 and '="notsure?"' in odd


def test_a_word_range_reads_the_cell_three_times_not_five():
    """The reading of the cell is most of the formula; the range is tested as the
    distance from its middle, so the count is written once (LET is too new)."""
    from sheetflow.packs.rules import word_range_formula
    from sheetflow.spec.rubric import Dimension

    both = word_range_formula("C12", Dimension("n", "N", "text", min_words=200,
                                               max_words=400))
    assert both.count("TRIM(") == 3 and "ABS(2*" in both and ">200" in both
    top = word_range_formula("C12", Dimension("n", "N", "text", max_words=80))
    assert top.count("TRIM(") == 3 and top.endswith(">80)")


def _words(n: int) -> str:
    return "\n".join(" ".join(["word"] * 10) for _ in range(n // 10)) + \
        (" " + " ".join(["word"] * (n % 10)) if n % 10 else "")


def test_collect_counts_words_between_the_gaps_the_packs_hint_counts():
    """The pack's word-range formula turns tabs, line breaks and non-breaking spaces
    into spaces and counts the spaces; collect counts the same words, so an em or
    ideographic space (read as a gap by Python's split) joins words as in the pack: 60
    words so joined were "in range" to collect and outside it in the pack."""
    from sheetflow.collect.content_checks import check_word_count

    assert check_word_count("\u2003".join(["word"] * 60), 50, 100) == (1, "50 to 100 words")
    assert check_word_count("\u3000".join(["word"] * 60), 50, 100) == (1, "50 to 100 words")
    spaced = " \t".join(["word"] * 25) + "\r\n" + "\u00a0 ".join(["word"] * 25) + "  "
    assert check_word_count(spaced, 50, 100) is None
    assert check_word_count(spaced + " x", 50, 50) == (51, "50 to 50 words")


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_the_word_range_hint_is_collects_warning_at_its_bounds(tmp_path):
    """Each side of each bound (50-100, 200-400, at most 80 words): the line names as
    many texts outside their range as collect warns of (``text-word-count``)."""
    likert_root, likert = _study(tmp_path, "judge-likert")
    paired_root, paired = _study(tmp_path, "paired-rubric")
    note, notes = _cells(paired, "methodology_note")[0], _cells(paired, "methodology_notes")[0]
    rationale = _cells(likert, "rationale")
    cases = [
        (paired_root, paired, "49-400", {note: _words(49), notes: _words(400)}, 1),
        (paired_root, paired, "50-401", {note: _words(50), notes: _words(401)}, 1),
        (paired_root, paired, "100-200", {note: _words(100), notes: _words(200)}, 0),
        (paired_root, paired, "101-199", {note: _words(101), notes: _words(199)}, 2),
        (likert_root, likert, "80-81", {rationale[0]: _words(80), rationale[1]: _words(81),
                                        rationale[2]: "one\ttwo\r\nthree"}, 1),
        # words apart only by em or ideographic spaces are one word to the pack's hint
        (paired_root, paired, "em-spaces", {note: "\u2003".join(["word"] * 60),
                                            notes: "\u3000".join(["word"] * 300)}, 2),
    ]
    files = [_variant(tmp_path, root, pack, name, changes)
             for root, pack, name, changes, _ in cases]
    for (root, _, name, _, outside), path, line in zip(
            cases, files, _progress_lines(tmp_path, files), strict=True):
        issues = collect(root, [path], write=False).report.issues
        warned = sum(i.code == "text-word-count" for i in issues)
        assert warned == outside, (name, warned)
        named = re.search(r"; (\d+) texts? outside", line)
        assert (int(named.group(1)) if named else 0) == outside, (name, line)


class _Planted(str):
    """A cell written as what it is, not as text: an error value or a formula."""

    kind = "s"


class _Error(_Planted):
    kind = "e"


class _Formula(_Planted):
    kind = "f"


def _plant(tmp: Path, root: Path, pack: dict, name: str, changes: dict[str, object]) -> Path:
    """:func:`_variant` with error values and formulas as such, and every batch time
    filled (a day per batch) unless ``changes`` names it."""
    times = {}
    for i, batch in enumerate(pack.get("batches", [])):
        times[batch["start"]["cell"]] = dt.datetime(2026, 11, 2 + i, 9, 0)
        times[batch["end"]["cell"]] = dt.datetime(2026, 11, 2 + i, 10, 30)
    planted = {c: v for c, v in changes.items() if isinstance(v, _Planted)}
    path = _variant(tmp, root, pack, name, {**times, **changes, **dict.fromkeys(planted)})
    wb = openpyxl.load_workbook(path)
    ws = wb[L.SCORING_SHEET]
    for cell, value in planted.items():
        ws[cell].value = str(value)
        ws[cell].data_type = value.kind
    wb.save(path)
    return path


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_red_and_done_are_collects_refusals_and_acceptances(tmp_path):
    """What collect accepts is not red (numbers as text, with a tab or line break after
    them too, non-breaking spaces, batch times it only warns of, cells of spaces, tabs,
    line breaks, ideographic or zero-width spaces or control characters, which it reads
    as blank: orange, not counted filled; full-width digits, which it reads as numbers);
    what it refuses is
    red (error values and formulas, in text answers too, and text it does not read as a
    number), and the line never says "#N/A"."""
    likert_root, likert = _study(tmp_path, "judge-likert")
    paired_root, paired = _study(tmp_path, "paired-rubric")
    keep_root, keep = _study(tmp_path, "keep-known")
    scale, verdict = _cells(likert, "accuracy"), _cells(likert, "overall_verdict")
    rationale, count = _cells(likert, "rationale"), _cells(paired, "depth")
    confidence, hours = _cells(paired, "depth", "confidence"), _cells(paired, "hours_worked")
    marks = [a["cell"] for a in L.iter_answer_cells(keep) if a["dimension"] == "keep"]
    starts = [b["start"]["cell"] for b in keep["batches"]]
    notes = dict.fromkeys(_cells(paired, "methodology_notes"), " ".join(["word"] * 300))
    nbsp = "\u00a0"
    time_hint = "batch time that is not a date and time (purple; allowed, please check)"
    cases = [  # root, pack, name, changes, line ({n}: required answers), errors, warnings
        (likert_root, likert, "likert-as-text",
         {scale[0]: "3", scale[1]: f"3{nbsp}", scale[2]: "+3", scale[3]: "3.0",
          verdict[0]: f"pass_strong{nbsp}"},
         "All {n} answers done", [], {"number-stored-as-text", "label-normalised"}),
        (paired_root, paired, "paired-as-text",
         {count[0]: "3", count[1]: "3 ", count[2]: "3.", confidence[0]: f"High{nbsp}",
          count[3]: 3.0000000000000004, hours[0]: "12.25", **notes},  # 17 digits, 3 shown
         "All {n} answers done", [], {"number-stored-as-text", "label-normalised"}),
        (likert_root, likert, "pasted-with-a-break",  # a number copied with its cell's end
         {scale[0]: "4\t", scale[1]: "4\n", scale[2]: "4\r\n", scale[3]: f"4 {nbsp}\t"},
         "All {n} answers done", [], {"number-stored-as-text"}),
        (paired_root, paired, "count-with-a-break",
         {count[0]: "3\t", count[1]: "3\r\n", hours[0]: "12.25\n", **notes},
         "All {n} answers done", [], {"number-stored-as-text"}),
        (likert_root, likert, "breaks-only",  # blank to collect: orange, not red, not filled
         {verdict[0]: "\t", scale[0]: "\n", scale[1]: f" {nbsp}\r\n"},
         "{m3} of {n} required answers filled", ["answer-missing"] * 3, set()),
        (likert_root, likert, "wide-spaces-only",  # an input method's space, a web page's
         {rationale[0]: "\u3000", verdict[1]: "\u200b\u3000 "},
         "{m2} of {n} required answers filled", ["answer-missing"] * 2, set()),
        # a pasted bell, a unit separator, DEL, a C1 control (the first three escaped as
        # the file stores them): blank
        (likert_root, likert, "controls-only",
         {rationale[0]: "_x0007_\x7f", verdict[1]: "\t_x0001__x001B_\x9f"},
         "{m2} of {n} required answers filled", ["answer-missing"] * 2, set()),
        (likert_root, likert, "full-width-scale",  # an input method's digits are numbers
         {scale[0]: "\uff13", scale[1]: "\uff14\uff0e\uff10", scale[2]: "\uff0b\uff12",
          verdict[0]: "\uff30\uff21\uff33\uff33\uff3f\uff33\uff34\uff32\uff2f\uff2e\uff27"},
         "All {n} answers done", [], {"number-stored-as-text", "label-normalised"}),
        (paired_root, paired, "full-width-count",
         {count[0]: "\uff13", hours[0]: "\uff11\uff12.\uff15",
          confidence[0]: "\uff28\uff49\uff47\uff48", **notes},  # Ｈｉｇｈ
         "All {n} answers done", [], {"number-stored-as-text", "label-normalised"}),
        (keep_root, keep, "times-to-check", {starts[0]: "after lunch", starts[1]: 0.5},
         "All {n} answers done; 2 " + time_hint.replace("time that is", "times that are")
         + "; 120 of 120 marks set (a blank mark means No)",
         [], {"batch-time-invalid", "batch-time-no-date"}),
        (keep_root, keep, "time-as-text", {starts[0]: "2026-11-02 09:00"},
         "All {n} answers done; 120 of 120 marks set (a blank mark means No)", [], set()),
        (keep_root, keep, "keep-spaces", {marks[0]: "   ", starts[2]: "  "},
         "{m} of {n} required answers filled; 119 of 120 marks set (a blank mark means No)",
         [], {"batch-time-missing"}),
        (paired_root, paired, "confidence-blank", {confidence[1]: None, **notes},
         "{m} of {n} required answers filled", ["answer-missing"], set()),
        (likert_root, likert, "likert-spaces", {verdict[0]: "   "},
         "{m} of {n} required answers filled", ["answer-missing"], set()),
        (likert_root, likert, "not-answers",
         {scale[0]: _Error("#N/A"), scale[1]: _Formula("=1+2"), rationale[0]: _Error("#N/A"),
          rationale[1]: _Formula('="A reason."')},
         None, ["error-value", "error-value", "formula-in-answer", "formula-in-answer"],
         set()),
        (paired_root, paired, "not-numbers",
         {count[0]: _Error("#DIV/0!"), count[1]: _Formula("=2"), count[2]: "1e1",
          count[3]: "3.5", count[4]: " 3", count[5]: "\t3", count[6]: "3\t3",
          hours[0]: 12.2500000001, **notes},  # more than 2 decimals at 15 digits
         None, ["error-value", "formula-in-answer", "number-after-space",
                "number-after-space", "too-many-decimals", "value-not-a-number",
                "value-not-a-number", "value-not-whole"], set()),
        (keep_root, keep, "mark-error", {marks[0]: _Error("#N/A")},
         None, ["error-value"], set()),
    ]
    blank = {"keep-spaces": starts[2], "likert-spaces": verdict[0],
             "confidence-blank": confidence[1],  # the first (only) blank required cell
             "breaks-only": min(verdict[0], scale[0], scale[1], key=_row_of),
             "wide-spaces-only": min(rationale[0], verdict[1], key=_row_of),
             "controls-only": min(rationale[0], verdict[1], key=_row_of)}
    for name, expected, _, line, n in _agreed(tmp_path, cases, _plant):
        if expected is None:  # checked by _agreed
            continue
        line, at = _without_first_blank(line)
        assert at == _row_of(blank.get(name)), (name, at)
        assert line == expected.format(n=n, m=n - 1, m2=n - 2, m3=n - 3), (name, line)


def _without_first_blank(line: str) -> tuple[str, int | None]:
    """``line`` without its " (first blank: case 2, row 40)", and that row (or None)."""
    found = re.search(r" \(first blank: (?:case \d+|the Submission area), row (\d+)\)", line)
    if found is None:
        return line, None
    return line.replace(found.group(0), ""), int(found.group(1))


def _row_of(cell: str | None) -> int | None:
    return None if cell is None else int(re.sub(r"[A-Z]+", "", cell))


def test_the_line_legend_and_instructions_call_a_batch_time_without_date_a_hint(tmp_path):
    """collect uses a file whose batch time is not a date and time, and warns
    (``batch-time-invalid``, ``batch-time-no-date``): purple, named after "done"."""
    assert progress_text(9, 9, times=1) == (
        "All 9 answers done; 1 batch time that is not a date and time (purple; allowed, "
        "please check)")
    assert progress_text(9, 9, off_range=1, times=2).endswith(
        f"1 text outside its word range {HINT}; 2 batch times that are not a date and "
        f"time {HINT}")
    keep = load_study(init_study(tmp_path / "kk", "keep-known"))
    assert legend(keep.rubric.dimensions, timed=True).endswith(
        "Purple: a batch time that is not a date and time (allowed; please check).")
    assert "Purple" not in legend(keep.rubric.dimensions)
    spec = SimpleNamespace(dimensions=keep.rubric.dimensions, batch_size=20, totals=(),
                           include_study_answers=False)
    essential, _ = how_to_lines(spec, paired=False)
    assert any("A time that is not a date and time (a time of day alone, words) turns "
               "purple: it is allowed" in line for line in essential)


def test_a_number_cell_reads_text_as_collect_does_and_refuses_what_is_not_an_answer():
    """An error value or a formula is refused in every answer cell, a text answer too;
    a number's text is read (no more red "3"), a batch time is never refused."""
    from sheetflow.packs.rules import invalid_formula

    count = invalid_formula({"type": "whole", "min": 0, "max": None}, "C12")
    assert count.startswith("IF(ISERROR(C12),TRUE,OR(IFERROR(_xlfn.ISFORMULA(C12),FALSE),")
    assert "VALUE(" in count and "MID(1/2,2,1)" in count
    assert invalid_formula({"type": "any"}, "C12") == \
        "IF(ISERROR(C12),TRUE,IFERROR(_xlfn.ISFORMULA(C12),FALSE))"
    assert invalid_formula({"type": "datetime"}, "C5") is None


def test_a_blank_confidence_is_a_blank_answer_the_reply_names(tmp_path):
    """The pack counts a confidence as required and turns it orange while blank; collect
    only warned of it (``confidence-missing``, and not at all beside a blank score), so
    the reply asked for fewer blanks than the pack showed and the line never said
    "done". Each required cell left blank is now one ``answer-missing``, named in the
    reply: as many as the pack's line finds unfilled."""
    from sheetflow.collect.replies import feedback_subject

    root, pack = _study(tmp_path, "paired-rubric")
    confidence = _cells(pack, "depth", "confidence")
    blank_case = [a["cell"] for a in _case_cells(pack, 2)]
    path = _variant(tmp_path, root, pack, "blank-confidence",
                    {confidence[0]: None, **dict.fromkeys(blank_case)})
    result = collect(root, [path], write=False).report
    blanks = [i for i in result.issues if i.severity == "error"]
    assert {i.code for i in blanks} == {"answer-missing"}
    (status,) = result.files
    assert len(blanks) == status.required - status.answered
    assert confidence[0] in {i.cell for i in blanks}
    named = next(i for i in blanks if i.cell == confidence[0])
    assert named.message.startswith("Confidence for ") and "'Low', 'Medium', 'High'" in \
        named.message
    assert sum("Confidence" in i.message for i in blanks) > 1  # case 2's, beside its scores
    assert feedback_subject("S", result.issues).endswith(
        f"{len(blanks)} answers still blank in your workbook")


def _case_cells(pack: dict, card: int) -> list[dict]:
    """The answer cells of the pack's ``card``-th card (its rows and case answers)."""
    (entry,) = [c for c in pack["cards"] if c["card"] == card]
    cells = [a for row in entry["rows"] for a in row["answers"].values()]
    cells += list(entry["case_answers"].values())
    out = []
    for a in cells:
        out += a.get("questions", [a])
        if "confidence" in a:
            out.append(a["confidence"])
    return out


def _shown(tmp: Path, files: list[Path], cells: list[str]) -> list[list[str]]:
    """What LibreOffice shows in ``cells`` of each workbook's Scoring sheet."""
    out = tmp / "shown"
    shown = []
    for i, path in enumerate(files):
        subprocess.run(["soffice", f"-env:UserInstallation={libreoffice_profile(tmp).as_uri()}",
                        "--headless", "--convert-to", CSV_FILTER, "--outdir",
                        str(out / str(i)), str(path)],
                       capture_output=True, timeout=300, check=True)
        rows = list(csv.reader((out / str(i) / f"{path.stem}-{L.SCORING_SHEET}.csv")
                               .read_text(encoding="utf-8").splitlines()))
        picked = []
        for cell in cells:
            col, row = re.fullmatch(r"([A-Z]+)(\d+)", cell).groups()
            line = rows[int(row) - 1] if int(row) <= len(rows) else []
            index = ord(col) - ord("A")
            picked.append(line[index] if index < len(line) else "")
        shown.append(picked)
    return shown


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_a_total_is_shown_only_once_all_its_parts_are_answered(tmp_path):
    """Case 1's B total read 13 with Depth blank: a sum that is not one, for the
    self-check the protocol asks of the rater. It stays blank until every part is
    filled, then is the sum."""
    root, pack = _study(tmp_path, "paired-rubric")
    (first,) = [c for c in pack["cards"] if c["card"] == 1]
    a_row, b_row = first["rows"]
    depth = b_row["answers"]["depth"]["cell"]
    totals = [a_row["derived"]["total"]["cell"], b_row["derived"]["total"]["cell"]]
    files = [_variant(tmp_path, root, pack, "all", {}),
             _variant(tmp_path, root, pack, "depth-blank", {depth: None})]
    (full_a, full_b), (part_a, part_b) = _shown(tmp_path, files, totals)
    assert full_a and full_b and part_a == full_a, (full_a, full_b, part_a)
    assert part_b == "", part_b


# odd characters a paste or an input method brings, each as a scale's number, a choice
# and a cell's blankness ("_x000B_": a vertical tab as the file stores it)
_ODD = ["\uff13", "\uff0b\uff12", "\u2462", "\u00b3", "\U0001d7d1", "\u2082", "3\u3000",
        "3\u2003", "3\u2028", "3_x000B_", "3\u200b", "3\t", "\u3000", "\u2028", "\u2029",
        "\u2003", "\u00ad", "_x000B_", "\u0085", "High\u3000", "High\u2028",
        "\uff28\uff49\uff47\uff48", "\u200b\u3000 "]


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_odd_characters_are_red_or_blank_as_collect_reads_them(tmp_path):
    """The pack's own formulas, computed by LibreOffice, beside collect's reading of
    the same text: red for a scale and for a choice exactly where collect refuses it,
    filled exactly where collect does not read it as blank."""
    from sheetflow.collect.values import parse_value
    from sheetflow.packs.rules import filled_test, invalid_formula
    from sheetflow.spec.rubric import Dimension

    scale = Dimension("s", "S", "scale", minimum=1, maximum=5)
    choice = Dimension("c", "C", "categorical", choices=("Low", "Medium", "High"))
    wb = openpyxl.Workbook()
    ws = wb.active
    for row, text in enumerate(_ODD, start=1):
        ws.cell(row, 1).value = text
        ws.cell(row, 1).data_type = "s"
        ws.cell(row, 2).value = "=" + invalid_formula({"type": "whole", "min": 1, "max": 5},
                                                      f"A{row}")
        ws.cell(row, 3).value = "=" + invalid_formula(
            {"type": "list", "choices": list(choice.choices)}, f"A{row}")
        ws.cell(row, 4).value = "=" + filled_test(f"A{row}")
    wb.save(tmp_path / "odd.xlsx")
    subprocess.run(["soffice", f"-env:UserInstallation={libreoffice_profile(tmp_path).as_uri()}",
                    "--headless", "--convert-to", CSV_FILTER.rsplit(",", 1)[0] + ",1",
                    "--outdir", str(tmp_path / "csv"),
                    str(tmp_path / "odd.xlsx")], capture_output=True, timeout=300, check=True)
    with open(tmp_path / "csv" / "odd-Sheet.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))  # not splitlines: a line separator is in a cell
    accepted = (None, "number-stored-as-text", "label-normalised")
    for text, (_, scale_red, choice_red, filled) in zip(_ODD, rows, strict=True):
        raw = re.sub(r"_x([0-9A-F]{4})_", lambda m: chr(int(m.group(1), 16)), text)
        read_scale, read_choice = parse_value(scale, raw), parse_value(choice, raw)
        assert (filled == "TRUE") is not read_scale.blank, (text, "blank")
        if not read_scale.blank:
            assert (scale_red == "TRUE") is (read_scale.code not in accepted), (text, "scale")
            assert (choice_red == "TRUE") is (read_choice.code not in accepted), (text, "choice")
