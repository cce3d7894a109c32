"""Cell rectangles, validation groups and the Excel formulas a pack shows.

Everything here is plain Python (no xlsxwriter): the writer feeds it cell positions
and writes what it returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

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
    parts = [points_expr(dims[d], answers[d]) for d in total.of if d in answers]
    inputs = []
    for d in total.of:
        if d in answers:
            a = answers[d]
            inputs += [q["cell"] for q in a["questions"]] if "questions" in a else [a["cell"]]
    expr = "+".join(f"({p})" for p in parts) or "0"
    if total.method == "mean" and parts:
        expr = f"({expr})/{len(parts)}"
    return f'=IF(COUNTA({",".join(inputs)})=0,"",{expr})'


def num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


LARGEST_ANSWER = 10**9
"""The largest number an answer may hold: collect refuses a larger one
(``value-too-large``), so a count with no maximum turns red above it too."""


def invalid_formula(rule: dict[str, Any], ref: str, dim: Dimension | None = None) -> str | None:
    """A conditional-format formula true when cell ``ref`` holds a value ``rule`` refuses.

    A paste bypasses data validation; this highlight does not. Blank is never flagged
    (the blank highlight covers it). ``IF`` guards each numeric test so a text value is
    flagged instead of raising ``#VALUE!`` (an error counts as false in a rule). A value
    is read as collect reads it (``collect/values.py``): a choice in another letter case
    or with spaces, tabs or line breaks around it is that choice (``label-normalised``),
    not a value to correct; a number typed as text may have spaces after it, not before.

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
        None when every value is allowed: free text, whatever its length (a word range
        is a hint, :func:`word_range_formula`; collect only warns, ``text-word-count``).
    """
    kind = rule["type"]
    if kind == "list":
        numbers = dim is not None and dim.kind == "scale"
        labels = [" ".join(c.split()) for c in rule["choices"]
                  if not (numbers and _NUMBER.fullmatch(c))]
        tests = [_number_choice(ref, c) for c in rule["choices"]
                 if numbers and _NUMBER.fullmatch(c)]
        if labels and not any(set(c) & set("*?~") for c in labels):
            # the cell read once and looked up among all labels (MATCH ignores case, as
            # "=" does): a copy of the reading per label made the packs' formulas 2.4x
            # longer, and xlsxwriter's formula preparation doubled generate's time
            listed = ",".join(f'"{_quoted(c)}"' for c in labels)
            tests.append(f"ISNUMBER(MATCH({loose_text(ref)},{{{listed}}},0))")
        else:  # MATCH would read * ? ~ in a label as wildcards
            tests += [f'{loose_text(ref)}="{_quoted(c)}"' for c in labels]
        return f"AND(LEN({ref})>0,NOT(OR({','.join(tests)})))"
    if kind in ("whole", "decimal"):
        top = rule["max"] if rule.get("max") is not None else LARGEST_ANSWER
        bad = [f"{ref}<{rule['min']}", f"{ref}>{top}"]
        bad.append(f"{ref}<>INT({ref})" if kind == "whole"
                   else f"ROUND({ref},{rule['places']})<>{ref}")
        return f"IF(ISNUMBER({ref}),OR({','.join(bad)}),LEN({ref})>0)"
    if kind == "time":
        return f"IF(ISNUMBER({ref}),OR({ref}<0,{ref}>=1),LEN({ref})>0)"
    if kind == "datetime":  # the validation's own bounds: 2000-01-01 to 2099-12-31 23:59
        return (f"IF(ISNUMBER({ref}),OR({ref}<DATE(2000,1,1),{ref}>=DATE(2100,1,1)),"
                f"LEN({ref})>0)")
    return None


def loose_text(ref: str) -> str:
    """Cell ``ref`` as collect compares a label: tabs and line breaks read as spaces,
    spaces trimmed and runs of them made one (``TRIM``); both applications compare
    text ignoring letter case, as collect does."""
    spaced = ref
    for code in (9, 10, 13):  # tab, line feed, carriage return
        spaced = f'SUBSTITUTE({spaced},CHAR({code})," ")'
    return f"TRIM({spaced})"


def _number_choice(ref: str, choice: str) -> str:
    """Whether ``ref`` holds the number ``choice`` of a scale: the number, or the number
    as text with spaces after it, never before (collect reads " 5" as words)."""
    return f'AND(LEFT({ref},1)<>" ",TRIM({ref})="{choice}")'


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
