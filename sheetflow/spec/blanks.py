"""Item texts left blank: which are errors, which are warnings, and why.

A blank cell in the items file reaches a rater as an empty box on the card, and
nothing downstream notices: the rater scores it like any other. So every blank text a
rater reads is reported, each naming the file, the rows and the column:

* the **id** is an error (:class:`~sheetflow.spec.loader.Loader`): nothing else names
  the item in the key, the returns and the analysis;
* a **shown field** (``[items] show``: the prompt, the question, a gold answer) is an
  error: it is what the response is judged against, and the spec's author chose it. A
  field that may really be blank on some items (retrieved evidence when retrieval
  found nothing) says so with ``optional = true`` in its ``show`` entry, and is then
  not reported;
* a **response** (an arm's column in a paired design, the ``response_column`` in a
  single one) is a warning: a model may legitimately return nothing (a refusal, an
  empty completion), and a study may mean raters to score that; but an empty cell is
  more often a broken export, so ``check`` and ``generate`` name each one.

A cell holding only white space or invisible characters (a zero-width space) counts as
blank: it shows as nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .tables import invisible_char

SHOWN_ROWS = 5
"""How many row numbers a message lists before "and N more"."""


def is_blank(text: str) -> bool:
    """Whether ``text`` shows as nothing: empty, white space or invisible characters."""
    return all(ch.isspace() or invisible_char(ch) for ch in text)


def blank_rows(rows: Iterable[tuple[int, dict[str, str]]], column: str) -> list[int]:
    """The row numbers of ``rows`` (``(row number, {column: text})``) where ``column``
    is blank."""
    return [row_no for row_no, fields in rows if is_blank(fields.get(column, ""))]


def describe_rows(rows: list[int]) -> str:
    """``"row 5"``, ``"rows 5, 9 and 12"`` or ``"rows 5, 9, 12, 14, 20 and 35 more"``."""
    if len(rows) == 1:
        return f"row {rows[0]}"
    head = ", ".join(str(r) for r in rows[:SHOWN_ROWS])
    if len(rows) > SHOWN_ROWS:
        return f"rows {head} and {len(rows) - SHOWN_ROWS} more"
    return f"rows {', '.join(str(r) for r in rows[:-1])} and {rows[-1]}"


def response_columns(study: Any) -> list[str]:
    """The items-file columns holding responses: each arm's in a paired design, the
    ``response_column`` in a single one."""
    design = study.design
    if design.paired:
        return list(dict.fromkeys(a.column for a in design.arms if a.column))
    return [design.response_column] if design.response_column else []


def blank_responses(study: Any) -> list[str]:
    """One warning per response column that is blank on some items.

    Parameters
    ----------
    study : Study

    Returns
    -------
    list of str
        For example ``"my-study/items.csv: rows 4 and 9: column 'response_improved' (a
        response) is empty; ..."``; empty when every response has text.
    """
    return [f"{study.root / study.items_file}: {describe_rows(blank)}: column "
            f"{column!r} (a response) is empty, so raters will see and score an "
            "empty response; fill it in, or leave it if the model really "
            "returned nothing"
            for column, blank in _blank_by_column(study)]


def blank_response_notes(study: Any) -> list[str]:
    """One note per response column blank on some items, for the analysis's Summary.

    ``check`` and ``generate`` warn of these (:func:`blank_responses`), but the analyst
    reads the Summary, where a decision resting on scores of empty responses would
    otherwise look like any other.

    Parameters
    ----------
    study : Study
        As loaded now: the items file the analysis reads the responses of.

    Returns
    -------
    list of str
        For example ``"items.csv: column 'response_baseline' (arm iter1_baseline's
        response) is empty on all 18 items (rows 2, 3, 4, 5, 6 and 13 more): the raters
        were shown an empty response there, and the figures include their scores of
        it"``; empty when every response has text.
    """
    arms = {a.column: a.id for a in study.design.arms if a.column} \
        if study.design.paired else {}
    total = len(study.items)
    out = []
    for column, blank in _blank_by_column(study):
        whose = f"arm {arms[column]}'s response" if column in arms else "a response"
        many = f"all {total}" if len(blank) == total else f"{len(blank)} of {total}"
        out.append(f"{study.items_file}: column {column!r} ({whose}) is empty on {many} "
                   f"items ({describe_rows(blank)}): the raters were shown an empty "
                   "response there, and the figures include their scores of it")
    return out


def _blank_by_column(study: Any) -> list[tuple[str, list[int]]]:
    """Each response column blank on some items, with those items' row numbers."""
    rows = [(it.row, it.fields) for it in study.items]
    found = [(column, blank_rows(rows, column)) for column in response_columns(study)]
    return [(column, blank) for column, blank in found if blank]
