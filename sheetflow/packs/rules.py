"""Cell rectangles, validation groups and the Excel formulas a pack shows.

Everything here is plain Python (no xlsxwriter): the writer feeds it cell positions
and writes what it returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..spec.labels import label_key, loose_keys
from ..spec.rubric import Dimension

GROUP_SIZE = 250  # ranges per validation / conditional-format element

Pos = tuple[int, int]  # (row, column), 0-based
Box = tuple[int, int, int, int]  # (first row, first column, last row, last column)


@dataclass
class Validations:
    """Cells grouped by identical validation, written as few elements as possible.

    Rules are keyed by what defines them (dimension, question, choices), so each rule's
    options are built once per workbook, not once per cell.
    """

    groups: dict[Hashable, list[Pos]] = field(default_factory=dict)
    options: dict[Hashable, dict[str, Any]] = field(default_factory=dict)
    described: dict[Hashable, dict[str, Any]] = field(default_factory=dict)

    def add(self, pos: Pos, key: Hashable,
            build: Callable[[], tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
        """Put the cell at ``pos`` under rule ``key`` (built on first use); describe it."""
        if key not in self.options:
            self.options[key], self.described[key] = build()
            self.groups[key] = []
        self.groups[key].append(pos)
        return self.described[key]


T = TypeVar("T")


def chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def boxes(cells: Iterable[Pos]) -> list[Box]:
    """``cells`` as few rectangles as possible, sorted by first row then column.

    Runs along a row are joined, then equal runs on consecutive rows are stacked (the
    Yes/No columns of a checklist's later questions, for example).
    """
    boxes: list[list[int]] = []
    stacks: dict[tuple[int, int], list[int]] = {}
    for row, first, last in _runs(sorted(set(cells))):
        box = stacks.get((first, last))
        if box is not None and box[2] == row - 1:
            box[2] = row
        else:
            box = stacks[(first, last)] = [row, first, row, last]
            boxes.append(box)
    return sorted((b[0], b[1], b[2], b[3]) for b in boxes)


def _runs(cells: list[Pos]) -> list[list[int]]:
    """``[row, first column, last column]`` of each run of adjacent sorted cells."""
    runs: list[list[int]] = []
    for row, col in cells:
        if runs and runs[-1][0] == row and runs[-1][2] == col - 1:
            runs[-1][2] = col
        else:
            runs.append([row, col, col])
    return runs


def grouped_refs(boxes: list[Box]) -> list[list[str]]:
    """A1 references of ``boxes``, at most :data:`GROUP_SIZE` per element."""
    return chunks([a1(b) for b in boxes], GROUP_SIZE)


def a1(box: Box) -> str:
    """``C12``, or ``C12:F13`` for a larger box (the Scoring sheet's columns are A-H)."""
    r1, c1, r2, c2 = box
    first = f"{LETTERS[c1]}{r1 + 1}"
    return first if (r1, c1) == (r2, c2) else f"{first}:{LETTERS[c2]}{r2 + 1}"


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def points_expr(dim: Dimension, answer: dict[str, Any]) -> str:
    """An Excel expression giving ``dim``'s points (0 while blank)."""
    if dim.kind == "checklist":
        cells = [q["cell"] for q in answer["questions"]]
        return "+".join(f'({c}="Yes")' for c in cells)
    cell = answer["cell"]
    if dim.kind == "count":
        lows = ",".join(str(b.low) for b in dim.bins)
        points = ",".join(num(b.points) for b in dim.bins)
        return f"IF(ISNUMBER({cell}),LOOKUP({cell},{{{lows}}},{{{points}}}),0)"
    return f"IF(ISNUMBER({cell}),{cell},0)"


def total_formula(total: Any, answers: dict[str, Any], dims: dict[str, Dimension]) -> str:
    """The formula of a total's cell: blank until every cell it adds up is filled.

    A total shown while a part is blank counts that part as 0 (a B total of 13 with
    Depth empty): the rater's self-check the protocol asks for would read a sum that
    is not one. Filled is ``COUNTA``'s (a cell of spaces is filled there, and red or
    orange in the pack), not a promise that the parts are valid; a value the pack shows
    red still earns no points.
    """
    parts = [points_expr(dims[d], answers[d]) for d in total.of if d in answers]
    inputs = []
    for d in total.of:
        if d in answers:
            a = answers[d]
            inputs += [q["cell"] for q in a["questions"]] if "questions" in a else [a["cell"]]
    expr = "+".join(f"({p})" for p in parts) or "0"
    if total.method == "mean" and parts:
        expr = f"({expr})/{len(parts)}"
    if not inputs:
        return f"={expr}"
    return f'=IF(COUNTA({",".join(inputs)})<{len(inputs)},"",{expr})'


def num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


LARGEST_ANSWER = 10**9
"""The largest number an answer may hold: collect refuses a larger one
(``value-too-large``), so a count with no maximum turns red above it too."""


def invalid_formula(rule: dict[str, Any], ref: str, dim: Dimension | None = None) -> str | None:
    """A conditional-format formula true when cell ``ref`` holds a value collect refuses.

    A paste bypasses data validation; this highlight does not. A value is read as
    collect reads it (``collect/values.py``):

    - never an answer, whatever the rule: an error value (``#N/A``, ``error-value``) or
      a formula (``formula-in-answer``), text answers included;
    - blank, never refused (the blank highlight covers it): an empty cell or one of
      spaces (plain, non-breaking, ideographic, zero-width), tabs and line breaks only
      (:func:`blank_test`), which collect reads as blank;
    - a choice in another letter case or with spaces, non-breaking spaces, tabs or line
      breaks around it is that choice (``label-normalised``), not a value to correct;
    - a number typed as text (``'3'``, ``'4 '``, ``'+3'``, ``'3.0'``) is that number
      (``number-stored-as-text``), in a scale's dropdown and in a number cell alike,
      and so is one with a tab or line break after it;
      text with anything else (a space before it, ``1e3``, ``3,0``) is refused.

    ``IF`` guards each numeric test so that no value raises an error (an error counts
    as false in a rule, and would break the count of red cells on the progress line).
    A date is a number to a formula, which cannot see the cell's date format in both
    applications (LibreOffice's ``CELL("format")`` calls an ISO date ``G``): a date is
    red where its number is outside the rule (a scale, a count with a maximum), not in
    a count without a maximum or in a text answer, where collect refuses it
    (``date-in-answer``).

    Parameters
    ----------
    rule : dict
        The manifest's validation description (``list``, ``whole``, ``decimal``,
        ``time``, ``datetime`` or ``any``).
    ref : str
        The relative reference of the rule's top-left cell, e.g. ``C12``.
    dim : Dimension, optional
        For ``list``: a scale's dimension, whose numbers collect reads as numbers.

    Returns
    -------
    str or None
        None for a batch time, which collect never refuses (it warns:
        :func:`time_hint_formula`). A free text is refused only as an error value or
        a formula, whatever its length (a word range is a hint,
        :func:`word_range_formula`; collect only warns, ``text-word-count``).
    """
    kind = rule["type"]
    if kind in ("time", "datetime"):
        return None
    test = None
    if kind == "list":
        test = f"NOT({_listed(rule['choices'], ref, dim)})"
    elif kind in ("whole", "decimal"):
        top = rule["max"] if rule.get("max") is not None else LARGEST_ANSWER
        test = _number_refused(ref, rule["min"], top, rule.get("places", 0))
    if test is not None:
        test = f"AND({filled_test(ref)},{test})"
    return _not_an_answer(ref, test)


def _not_an_answer(ref: str, test: str | None) -> str:
    """``test``, or an error value or a formula in ``ref`` (collect refuses both).

    ``ISFORMULA`` is Excel 2013's: in an older Excel it is ``#NAME?``, read as false,
    so the rest of the test (and the progress line) still works there. Its ``_xlfn.``
    prefix, as the file stores it, also tells xlsxwriter the formula is ready: it
    skips the 29 searches for newer functions it makes over every other formula,
    which on these, the longest a pack writes, took some 1.1 of the 2.8 CPU seconds
    of a 500-case paired pack."""
    formula = f"IFERROR(_xlfn.ISFORMULA({ref}),FALSE)"
    return f"IF(ISERROR({ref}),TRUE,{f'OR({formula},{test})' if test else formula})"


def _listed(choices: list[str], ref: str, dim: Dimension | None) -> str:
    """Whether ``ref`` holds one of ``choices`` as collect reads it (a scale's numbers
    as numbers, :func:`_number_refused`; a label in another letter case or spacing,
    with a space for a hyphen, or a yes/no word for a yes/no label,
    :func:`.labels.loose_keys`)."""
    numbers = dim is not None and dim.kind == "scale"
    labels = [" ".join(c.split()) for c in choices if not (numbers and _NUMBER.fullmatch(c))]
    tests = []
    if numbers and len(labels) < len(choices):
        tests.append(f"NOT({_number_refused(ref, dim.minimum, dim.maximum, 0)})")
    keys = loose_keys(tuple(labels))
    # full-width letters (Ｙｅｓ) as ASCII, as collect's NFKC reads them; only for ASCII
    # labels: ASC also makes full-width katakana half-width, which a label of them
    # would then not match
    half = f"ASC({ref})" if all(c.isascii() for c in labels) else ref
    if keys:
        tests += _one_of(list(keys), label_key_text(half))
    # labels that read the same once spacing and hyphens go (A-B beside A B): each
    # only in letter case and the spaces around it, as collect reads them
    alike = [c for c in labels if keys.get(label_key(c)) != c]
    if alike:
        tests += _one_of(alike, loose_text(half))
    return f"OR({','.join(tests)})"


def _one_of(texts: list[str], reading: str) -> list[str]:
    """Tests that ``reading`` (the cell read once) is one of ``texts``, ignoring case."""
    if not any(set(t) & set("*?~") for t in texts):
        # read once and looked up among all (MATCH ignores case, as "=" does): a copy
        # of the reading per label made the packs' formulas 2.4x longer, and
        # xlsxwriter's formula preparation doubled generate's time
        listed = ",".join(f'"{_quoted(t)}"' for t in texts)
        return [f"ISNUMBER(MATCH({reading},{{{listed}}},0))"]
    return [f'{reading}="{_quoted(t)}"' for t in texts]  # MATCH reads * ? ~ as wildcards


NBSP = "\u00a0"
"""The non-breaking space (pasted from web pages and word processors), written as itself
in the formulas: ``CHAR(160)`` is another character on a Mac, ``UNICHAR`` is too new."""
_DIGIT_PLACES = "{" + ",".join(map(str, range(1, 17))) + "}"
"""The places of a number typed as text that are looked at: 16 (``+1000000000.000``)."""


def _number_refused(ref: str, low: float, high: float, places: int) -> str:
    """Whether ``ref`` is not a number from ``low`` to ``high`` with at most ``places``
    decimals, as collect reads one (``_parse_whole``), typed or as text.

    Text is a number when it is plain digits (an optional sign first, one optional
    point), in ASCII or full-width (``３``, what an East Asian input method types;
    ``ASC`` reads them as ASCII, as collect's NFKC does), with nothing before them and
    only spaces after them, spaces as
    :func:`loose_text` reads them (a tab or line break pasted with the number): its
    first character is a digit, sign or point, and each place of its reading is a
    digit (``-MID(..)`` is a number) or that sign or point.
    Its value is read with the point as this computer's decimal separator
    (``MID(1/2,2,1)``), so that a comma locale does not read ``3.5`` as a date.
    Anything else in text, and text beyond 16 places, is refused.
    """
    def off(x: str) -> str:  # whole (or rounded) and within the bounds, or not
        fit = f"ROUND({x},{places})" if places else f"INT({x})"
        return f"{x}<>MEDIAN({num(low)},{num(high)},{fit})"

    half = f"ASC({ref})"  # full-width digits, sign and point read as ASCII, as NFKC does
    text = loose_text(half)
    plain = (f'AND(ISNUMBER(FIND(LEFT({half},1),"0123456789+-.")),LEN({text})'
             f'-ISNUMBER(FIND(LEFT({half},1),"+-"))-ISNUMBER(FIND(".",{half}))'
             f"=SUMPRODUCT(--ISNUMBER(-MID({text},{_DIGIT_PLACES},1))))")
    value = f'VALUE(SUBSTITUTE({text},".",MID(1/2,2,1)))'
    return f"IF(ISNUMBER({ref}),{off(ref)},IFERROR(OR(NOT({plain}),{off(value)}),TRUE))"


def time_hint_formula(ref: str) -> str:
    """A formula true when the batch time in ``ref`` is not a date and time from 2000 to
    2099, the validation's own bounds: a time of day alone, words, an error value, a
    formula.

    A hint (purple), never red: collect uses the file and warns
    (``batch-time-invalid``, ``batch-time-no-date``). Text is read as the spreadsheet
    reads it (``--``: ``2026-11-02 14:05`` typed as text is that time, as collect reads
    it, tabs and line breaks around it read as spaces). Blank (:func:`blank_test`) is
    not a hint: the blank highlight covers it.
    """
    def outside(x: str) -> str:
        return f"OR({x}<DATE(2000,1,1),{x}>=DATE(2100,1,1))"

    read = f"--{loose_text(ref)}"
    return _not_an_answer(ref, f"IF(ISNUMBER({ref}),{outside(ref)},"
                               f"IFERROR({outside(read)},{filled_test(ref)}))")


def loose_text(ref: str) -> str:
    """Cell ``ref`` as collect compares a label: tabs, line breaks and non-breaking
    spaces read as spaces, spaces trimmed and runs of them made one (``TRIM``); both
    applications compare text ignoring letter case, as collect does."""
    spaced = ref
    for code in (9, 10, 13):  # tab, line feed, carriage return
        spaced = f'SUBSTITUTE({spaced},CHAR({code})," ")'
    return f'TRIM(SUBSTITUTE({spaced},"{NBSP}"," "))'


def blank_test(ref: str) -> str:
    """Whether cell ``ref`` is blank as collect reads it: empty, or only spaces, tabs,
    line breaks, non-breaking spaces, ideographic spaces (what a Japanese or Chinese
    input method types for a space) and zero-width spaces. The blank highlight, the
    count of filled answers and the red highlight's gate all read it so: a cell holding
    a pasted tab was red and counted filled while collect found it missing.

    ``CLEAN`` drops the tabs and line breaks (and the other control characters, which
    a cell hardly holds) where :func:`loose_text` makes them spaces: the same blank in
    a shorter formula, written for every required cell in the count of filled answers,
    whose formulas xlsxwriter searches 29 times each for newer functions.
    """
    return f'{_cleaned(ref)}=""'


def filled_test(ref: str) -> str:
    """Whether cell ``ref`` is not blank (:func:`blank_test`)."""
    return f'{_cleaned(ref)}<>""'


def _cleaned(ref: str) -> str:
    spaced = f'SUBSTITUTE(SUBSTITUTE({ref},"{NBSP}"," "),"{IDEOGRAPHIC_SPACE}"," ")'
    return f'TRIM(CLEAN(SUBSTITUTE({spaced},"{ZERO_WIDTH_SPACE}","")))'


IDEOGRAPHIC_SPACE = "\u3000"
ZERO_WIDTH_SPACE = "\u200b"


def label_key_text(ref: str) -> str:
    """Cell ``ref`` as :func:`.labels.label_key` reads it: without spaces, tabs, line
    breaks, non-breaking spaces, hyphens and underscores; both applications compare
    text ignoring letter case. (The invisible characters collect drops too are kept:
    a cell holding one is red in the pack, though collect reads it.)"""
    bare = ref
    for gone in ("CHAR(9)", "CHAR(10)", "CHAR(13)", f'"{NBSP}"', '" "', '"-"', '"_"'):
        bare = f'SUBSTITUTE({bare},{gone},"")'
    return bare


def word_range_formula(ref: str, dim: Dimension) -> str | None:
    """A formula true when the text in ``ref`` is outside ``dim``'s word range.

    A hint, not a value to correct: collect uses the answer and warns
    (``text-word-count``). Words are runs between spaces, tabs and line breaks, as
    collect counts them.

    The cell's reading (:func:`loose_text`) is the bulk of the formula and neither
    application can name it once (``LET`` is too new for older Excel and LibreOffice),
    so the count is written once: a range is tested as the distance from its middle
    (``ABS(2*words-low-high)>high-low``, exact in whole numbers), not as two bounds
    each with its own count. The reading appears 3 times, not 5: the formula of each
    text cell (the hint column counts them per line) was the longest a pack wrote.

    Returns
    -------
    str or None
        None when ``dim`` has no word range.
    """
    low, high = dim.min_words, dim.max_words
    if low is None and high is None:
        return None
    flat = loose_text(ref)
    words = f'(LEN({flat})-LEN(SUBSTITUTE({flat}," ",""))+1)'
    if low is not None and high is not None:
        outside = f"ABS(2*{words}-{low + high})>{high - low}"
    elif low is not None:
        outside = f"{words}<{low}"
    else:
        outside = f"{words}>{high}"
    return f"AND(LEN({flat})>0,{outside})"


def _col(letter: str) -> int:
    return ord(letter) - ord("A")


def column_name(index: int) -> str:
    """The letters of the 0-based column ``index`` (0 -> A, 25 -> Z, 26 -> AA)."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = LETTERS[rest] + name
    return name


def _quoted(text: str) -> str:
    return text.replace('"', '""')


_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
