"""The writer <-> reader contract: where everything lives in a rater workbook.

The writer (:mod:`sheetflow.packs.writer`) lays workbooks out as described here, and
the blinded manifest (``packs/manifest.json``) records the exact cell of every answer,
so a reader never has to guess. **The manifest is the authority for cell positions**;
the rules below explain how it was laid out.

Sheets (in this order)
----------------------
``Instructions``  what a rater needs before scoring: how to fill the workbook, what is
                  scored on each case, the study's own text when it is short
                  (:mod:`sheetflow.packs.instructions`). Locked, protected.
``Scoring``       the cards (locked content + answer cells) and, after the last card, the
                  Submission area (study-scope questions). Protected; only answer cells
                  are unlocked.
``More instructions``  the study's own text verbatim when it is long, the rubric in
                  detail, more about the workbook. Locked, protected. Nothing is read
                  from it or from Instructions.
``_lists``        *only when needed*: hidden sheet holding dropdown sources longer than
                  255 characters (one list per column from row 1).
``_sheetflow``    very hidden (LibreOffice saves it as plain hidden): identity and the
                  row table (see below).

Identity (text only, all three agree in a fresh pack)
------------------------------------------------------
Keys: ``schema_version``, ``study_id``, ``spec_mark``, ``rater_id``, ``sitting``
(``"1"``, or ``"2"`` for a repeats workbook), ``pack_id`` (``<rater_id>-s<sitting>``).
``spec_mark`` is HMAC-SHA256 of the spec hash under the study secret
(:func:`sheetflow.packs.secret.spec_mark`), never the spec hash itself, which a rater
could match by trying every assignment of the arms. Packs of earlier versions carry
``spec_hash`` (the spec hash) in its place, and so do the packs of such a study
regenerated in place (they are in the raters' hands already): :data:`READ_IDENTITY_KEYS`
reads both.

1. custom document properties named ``sheetflow_<key>`` (type text);
2. workbook defined names ``sf_<key>`` whose value is a string constant ``="..."``;
3. the ``_sheetflow`` sheet: column A the key, column B the value, rows 1..6 in the order
   of :data:`IDENTITY_KEYS`. Row 8 is the header ``row_id | code | label | sha256``;
   from row 9 one row per manifest row (the row table, in sheet order).

Never any arm name or id, and no seed, anywhere in a pack.

The Scoring sheet
-----------------
Columns (letters fixed by design kind):

==========  =============================  ======================================
column      single design                  paired design (labels L1, L2, e.g. A, B)
==========  =============================  ======================================
A (hidden)  row id on every answer line    row id on every answer line
B           field labels, questions        field labels, questions
C           answer                         L1 answer
D           confidence (*)                 L1 confidence (*)
E           guide (help, bins, anchors)    L2 answer
F           -                              L2 confidence (*)
G           -                              guide (help, bins, anchors)
F-K / H-M   helper columns (**)            helper columns (**)
==========  =============================  ======================================

(*) hidden, with an empty heading, when no dimension asks for a confidence.

(**) six narrow helper columns right of the guide, outside the print area, formatted
``;;;`` so they show nothing on screen or paper (:func:`helper_columns`): done counts,
values to correct, marks set, cards reached, notes to write, texts outside their word
range. They are not hidden:
LibreOffice draws a number in a hidden column as ``###`` clipped at the guide's edge,
whatever its format, and writes those glyphs into a printed PDF. Nothing is read from them.

Rows 1-4 are a frozen header (title, progress line, legend, column headings) repeated
on every printed page. In a paired design the headings of row 4 name no label
("Question | Your answers | Guide", the answers' heading merged over the answer
columns): each card's scores start with their own heading row naming the case and each
label's columns; the Submission area is then not under an A/B heading. A card taller
than a page (either design) is cut before each response, whose band names the case,
and before that heading, and answer lines that run past a page get another one ("Case 3
— K7QF: more scores"): every printed page names its case (see
:mod:`sheetflow.packs.case_headings`).
The progress cell is ``C2`` (a formula, never read): the sum of
the done column followed by "of N required answers filled", or "All N answers done"
(shown green) once the sum reaches N. N counts each cell that
:func:`sheetflow.spec.rubric.answer_required` calls required, once: the same cells collect
counts in its completeness. The done column holds a few ``COUNTA`` formulas, each over up to 255
rectangles of required answer cells (some 30 cards), placed on the row of its first
rectangle; every other cell of the column is empty.
The next helper column counts, on each answer line, the values that line's rules refuse
(the red highlight's own formulas): while any is there the line starts "N to correct"
and never says "All ... done". A value is refused only where collect refuses it
(an error, the file not used): a choice typed in another letter case or with spaces
around it (`` y ``), which collect reads as that choice (``label-normalised``), is not.
The one after counts the marks whose blank is itself an answer (``blank_means``, e.g.
keep-known's KEEP/KNOWN); they are not required, so the line reports them on their own
("12 of 120 marks set; a blank mark means No").
The fifth counts the notes a marked flag needs and still lacks (a flag's ``note``, e.g.
answer-review's Note when Gold answer disputed is Y; collect refuses a marked flag with a
blank note, ``flag-note-missing``): on each such note's line, 1 while the flag in the same
card and answer column is marked (its choice, trimmed, in any case, as collect reads it)
and the note is blank. The note is not a required cell, so N stays the same; while any
is counted the line adds "; 1 note to write (orange)" and never says "All ... done".
The sixth counts the texts outside their word range (e.g. judge-likert's rationale of at
most 80 words): a hint, not a value to correct, since collect uses such an answer and
only warns (``text-word-count``). While any is counted the line adds "; 1 text outside
its word range (purple; allowed, please check)", after "All N answers done" when every
answer is in.

Every answer cell with a rule also has a conditional format that turns it red when it
holds a value the rule refuses (a paste bypasses data validation, the highlight does
not; free text never). A text answer with a word range turns purple while its text is
outside the range. Required cells are orange while blank,
**but only in the cards the rater has reached**: a card is reached once any answer cell
in it (any kind, required or not, its batch times included), or in any card after it,
or in the Submission area after the last card, holds something. So a fresh pack shows
no orange, a started card shows what it still needs, and a card skipped on the way
shows its blanks too; the cards still ahead stay plain yellow. The fourth helper column
holds, on each card's first row, the card's last row number once the card has an
answer (else 0), and in row 2 their maximum, the last row reached; the blank highlight
is ``AND(TRIM(..C12..)="", ROW(C12)<=$K$2)``. A note a marked flag needs is orange
while blank and its flag marked, ``AND(TRIM(..C13..)="", OR(TRIM(..C12..)="Y"))``
(tabs, line breaks and non-breaking spaces read as spaces first, as collect reads them:
a cell of them only is blank).
The sheet prints at a fixed scale with manual page breaks between cards, so a card
shorter than a page is never split (:mod:`sheetflow.packs.pages`).

Each card (one per case in paired, one per row in single), top to bottom:

* a title line: ``Case k of n - <code>`` in column B (the card's display code, never
  its item id; batches: a batch line before the first card of each batch holds the
  start-time and end-time answer cells in C);
  when every card shows one short response and nothing else (keep-known), the title
  line holds that response in C (no label line) and the guide shows on each batch's
  first card only (:meth:`sheetflow.packs.writer.PackWriter._one_line_cards`);
* each shown field: a label line, then its text in one or more *chunks* merged across
  the text columns (C..guide), each chunk at most :data:`CHUNK_CHARS` characters;
* paired: for each label, a ``Response L`` line and its chunks; single: ``Response``;
* paired: a heading line naming each label's answer and confidence columns;
* one answer line per response-scope dimension (a checklist: one line per question,
  the confidence on the first question's line), answers in the label's answer column,
  confidence in the label's confidence column;
* under each count line, a "points earned" line (formula, never read);
* a derived-points line per total (formula, never read);
* one line per case-scope dimension (answer in column C; text answers merged across the
  answer columns, the manifest gives the top-left cell).

A text longer than one chunk is split at white space (or, for a single long word, mid
word) into consecutive cells: **nothing is lost**, the text is the concatenation of its
chunks in manifest order. This is also how text longer than Excel's 32,767-unit cell
limit is written.

Manifest schema (``packs/manifest.json``)
-----------------------------------------
The form every reader gets (:func:`sheetflow.packs.manifest.open_manifest`,
:func:`sheetflow.packs.manifest.read_manifest`). On disk, ``manifest_format`` 2 stores each
card as a short list and the parts cards share (their layout with kinds, validations
and questions; the locked-text hashes) once in a top-level ``shared`` object: see
:mod:`sheetflow.packs.manifest_form`. Read the file through those functions, not with
``json.load``. ::

    {
      "manifest_format": 2, "schema_version": "1",
      "study_id": str, "spec_hash": str, "sheetflow_version": str,
      "design": "paired" | "single", "labels": ["A", "B"] | [],
      "scoring_sheet": "Scoring", "identity_sheet": "_sheetflow",
      "packs": [{
        "file": str, "rater_id": str, "role": "primary" | "second", "sitting": 1 | 2,
        "sha256": str,                            # the workbook's bytes as written
        "sheet_cells": {sheet: int},              # cells with content, per visible sheet
        "sheet_digests": {sheet: str},            # sha256 of its fixed cells, per visible sheet
        "identity": {key: str for key in IDENTITY_KEYS},
        "progress": Cell,
        "batches": [{"batch": int, "row_ids": [str], "start": Cell, "end": Cell}],
        "cards": [{
          "card": int, "item_id": str, "batch": int | null, "title": Cell,
          "locked": [Locked],                     # case-level shown fields
          "rows": [{
            "row_id": str,                        # keyed_row_id(): unique per pack
            "item_id": str, "label": str | null,
            "locked": [Locked],                   # this row's response
            "locked_sha256": str,                 # see row_digest()
            "answers": {dimension_id: Answer},    # response scope
            "derived": {total_id: Cell}           # formulas, never read
          }],
          "case_answers": {dimension_id: Answer}  # case scope
        }],
        "study_answers": {dimension_id: Answer}   # study scope (sitting 1 only)
      }]
    }

    Cell    = {"sheet": str, "cell": "C12"}
    Locked  = {"field": str, "label": str, "sheet": str, "cells": ["C7", ...],
               "sha256": sha256 of the field's full text (UTF-8, exactly as written)}
    Answer  = Cell + {"kind": str, "validation": Validation,
                      "confidence": Cell (only when the dimension asks for it)}
              checklist: {"kind": "checklist", "questions": [Cell + {"question": str,
                          "validation": Validation}], "confidence": Cell?}
    Validation = {"type": "list", "choices": [str]} | {"type": "whole", "min": int,
                  "max": int | null} | {"type": "decimal", "min": int, "max": int,
                  "places": int} | {"type": "datetime"} | {"type": "any"}

Locked text: a field's text is the concatenation of ``cells`` in order; compare
``text_sha256(text)`` with ``sha256`` (an openpyxl reader must decode ``_xHHHH_``
escapes first). ``locked_sha256`` is :func:`row_digest` over the card's locked fields
then the row's, in manifest order.

A pack's ``sha256`` is of its workbook file exactly as ``generate`` wrote it (manifests
written by sheetflow before it recorded this have none); ``verify`` and ``send`` compare
the file with it.

A pack's ``sheet_cells`` counts, for each of its visible sheets (Instructions, Scoring,
More instructions), the cells a reader gives a value as written (a number, a formula,
text other than ""); ``collect`` reads the pack itself only when a return holds more
(:mod:`sheetflow.collect.outside_answers`). Manifests written before sheetflow recorded
this have none, and the check is not done.

A pack's ``sheet_digests`` holds, for each of the same sheets, the sha256 of its fixed
cells: every cell with content but the answer cells and the locked text, as
:mod:`sheetflow.workbook.sent_cells` describes them; ``collect`` reads the pack itself
only when a return's digest differs (:mod:`sheetflow.collect.sent_cells`). Manifests
written before sheetflow recorded them have none, and that check is not done.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

SCHEMA_VERSION = "1"
MANIFEST_FORMAT = 2

INSTRUCTIONS_SHEET = "Instructions"
SCORING_SHEET = "Scoring"
MORE_SHEET = "More instructions"
LISTS_SHEET = "_lists"
IDENTITY_SHEET = "_sheetflow"

IDENTITY_KEYS = ("schema_version", "study_id", "spec_mark", "rater_id", "sitting", "pack_id")
LEGACY_SPEC_KEY = "spec_hash"  # the plain spec hash packs of earlier versions carry
READ_IDENTITY_KEYS = (*IDENTITY_KEYS, LEGACY_SPEC_KEY)
PROPERTY_PREFIX = "sheetflow_"
NAME_PREFIX = "sf_"
IDENTITY_ROW_TABLE_HEADER = 8  # 1-based row of the row-table header on _sheetflow
IDENTITY_ROW_TABLE_FIRST = 9

HEADER_ROWS = 4  # frozen and repeated when printed
PROGRESS_CELL = "C2"
ROW_ID_COLUMN = "A"
LABEL_COLUMN = "B"

CHUNK_CHARS = 1000  # about what Excel displays in one cell
CELL_LIMIT_UTF16 = 32767
MESSAGE_LIMIT = 255  # input message, list source
CONFIDENCE_CHOICES = ("Low", "Medium", "High")

MANIFEST_FILE = "manifest.json"
PACKS_DIR = "packs"
RETURNS_DIR = "returns"  # returned workbooks; made by generate, read by collect
OUT_DIR = "out"  # what collect and analyze write


def study_folder_holding(path: Path, root: Path, names: Iterable[str]) -> str | None:
    """Which of the study's folders ``names`` (under ``root``) ``path`` is, or is inside.

    Parameters
    ----------
    path : Path
        A folder a command is told to write to.
    root : Path
        The study folder.
    names : iterable of str
        Folder names under ``root``, e.g. ``("packs", "sealed")``.

    Returns
    -------
    str or None
        The first name whose folder holds ``path`` (both resolved, so a link or a
        ``..`` does not hide it); None when none does.
    """
    where = Path(path).resolve()
    for name in names:
        folder = (Path(root) / name).resolve()
        if where == folder or folder in where.parents:
            return name
    return None


def answer_columns(labels: tuple[str, ...]) -> dict[str | None, tuple[str, str]]:
    """Answer and confidence column letters per label (key None in a single design)."""
    if not labels:
        return {None: ("C", "D")}
    return {label: ("CDEFGH"[2 * i], "CDEFGH"[2 * i + 1]) for i, label in enumerate(labels)}


def guide_column(labels: tuple[str, ...]) -> str:
    """The column holding bins/anchors guidance (last visible column)."""
    return "E" if not labels else "CDEFGH"[2 * len(labels)]


def done_column(labels: tuple[str, ...]) -> str:
    """The helper column whose ``COUNTA`` formulas feed the progress line."""
    return chr(ord(guide_column(labels)) + 1)


def to_correct_column(labels: tuple[str, ...]) -> str:
    """The helper column counting, per answer line, the values its rule refuses."""
    return chr(ord(done_column(labels)) + 1)


def marks_column(labels: tuple[str, ...]) -> str:
    """The helper column counting the marks whose blank is an answer (``blank_means``)."""
    return chr(ord(done_column(labels)) + 2)


def reached_column(labels: tuple[str, ...]) -> str:
    """The helper column saying which cards the rater has reached (the blank highlight)."""
    return chr(ord(done_column(labels)) + 3)


def notes_column(labels: tuple[str, ...]) -> str:
    """The helper column counting the notes a marked flag needs and still lacks."""
    return chr(ord(done_column(labels)) + 4)


def hints_column(labels: tuple[str, ...]) -> str:
    """The helper column counting the texts outside their word range (a hint only)."""
    return chr(ord(done_column(labels)) + 5)


def helper_columns(labels: tuple[str, ...]) -> tuple[str, ...]:
    """The six helper columns right of the guide: their formulas feed the progress
    line and the blank highlights, they show nothing and are never printed or read."""
    return (done_column(labels), to_correct_column(labels), marks_column(labels),
            reached_column(labels), notes_column(labels), hints_column(labels))


def identity_name(key: str) -> str:
    """The defined name holding identity ``key``."""
    return NAME_PREFIX + key


def identity_property(key: str) -> str:
    """The custom document property holding identity ``key``."""
    return PROPERTY_PREFIX + key


def text_sha256(text: str) -> str:
    """The sha256 (hex) of a locked text exactly as written, UTF-8 encoded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pack_id(rater_id: str, sitting: int) -> str:
    """The id of a rater's pack for one sitting, as its identity holds it: "r1-s2"."""
    return f"{rater_id}-s{sitting}"


def keyed_row_id(row_key: str, pack_id: str, base: str) -> str:
    """A row id bound to its pack: ``<base>#<tag>``.

    ``base`` is the item id (single designs) or ``<item id>/<label>`` (paired); the tag
    is HMAC-SHA256 under the study's row key (never written into a pack) of the pack id
    and ``base``, 12 hex digits. A return's hidden row ids therefore prove which pack
    its rows came from, whatever its identity says: another rater's tags cannot be
    computed from any workbook.
    """
    message = f"{pack_id}\x1f{base}".encode()
    return f"{base}#{hmac.new(row_key.encode(), message, hashlib.sha256).hexdigest()[:12]}"


def case_name(card: dict[str, Any]) -> str:
    """A card as its rater sees it: ``"3 (K7QF)"`` (card number and display code).

    Every text a rater may read (issues quoted in reply drafts, feedback) names a case
    so, never by its item id: item ids often follow the arms.
    """
    code = card.get("code") or ""
    return f"{card['card']} ({code})" if code else str(card["card"])


def card_number(case: str) -> int | None:
    """The card number of a case named by :func:`case_name` (None for any other text)."""
    head = case.split(" ", 1)[0]
    return int(head) if head.isascii() and head.isdigit() else None


def row_digest(field_hashes: Iterable[str]) -> str:
    """A row's ``locked_sha256``: sha256 of its fields' hex digests joined by newlines."""
    return hashlib.sha256("\n".join(field_hashes).encode("ascii")).hexdigest()


def iter_answer_cells(pack: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every answer cell of one manifest pack entry, flattened.

    Yields dicts with ``sheet``, ``cell``, ``scope`` (response/case/study/batch),
    ``row_id`` (or None), ``item_id`` (or None), ``label`` (or None), ``dimension``
    (or None for batch times), ``part`` (``value``, ``confidence``, ``q1``.. for
    checklist questions, ``start``/``end`` for batches) and ``validation``.
    """
    for batch in pack.get("batches", []):
        for part in ("start", "end"):
            yield {**batch[part], "scope": "batch", "row_id": None, "item_id": None,
                   "label": None, "dimension": None, "part": part, "batch": batch["batch"],
                   "validation": {"type": "datetime"}}
    for card in pack.get("cards", []):
        for row in card["rows"]:
            base = {"scope": "response", "row_id": row["row_id"], "item_id": row["item_id"],
                    "label": row["label"]}
            for dim_id, answer in row["answers"].items():
                yield from _answer_parts(answer, {**base, "dimension": dim_id})
        base = {"scope": "case", "row_id": None, "item_id": card["item_id"], "label": None}
        for dim_id, answer in card["case_answers"].items():
            yield from _answer_parts(answer, {**base, "dimension": dim_id})
    base = {"scope": "study", "row_id": None, "item_id": None, "label": None}
    for dim_id, answer in pack.get("study_answers", {}).items():
        yield from _answer_parts(answer, {**base, "dimension": dim_id})


def _answer_parts(answer: dict[str, Any], base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if answer["kind"] == "checklist":
        for i, q in enumerate(answer["questions"], 1):
            yield {**base, "sheet": q["sheet"], "cell": q["cell"], "part": f"q{i}",
                   "validation": q["validation"]}
    else:
        yield {**base, "sheet": answer["sheet"], "cell": answer["cell"], "part": "value",
               "validation": answer["validation"]}
    if "confidence" in answer:
        yield {**base, **answer["confidence"], "part": "confidence",
               "validation": {"type": "list", "choices": list(CONFIDENCE_CHOICES)}}


def pack_title(study_title: str, sitting: int) -> str:
    """The title generate gives a pack of the study titled ``study_title`` (its
    document property and its Scoring sheet's first line)."""
    return study_title + (" (second sitting)" if sitting == 2 else "")


def pack_properties(title: str) -> dict[str, str]:
    """The document properties holding text that generate writes in a pack titled
    ``title`` (xlsxwriter's names); collect knows them as sheetflow's own from here."""
    return {"title": title, "comments": "Scoring workbook"}
