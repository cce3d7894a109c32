"""The text of the reply drafts collect writes to raters (:func:`.coordinator.write_feedback`).

- :func:`feedback_body`: what to fix in the file the rater sent, cell by cell;
- :func:`rivals_body`: different workbooks came back as theirs, which one is it?
- :func:`unusable_body`: their file arrived but could not be read or identified.

A reply goes to one rater: it quotes nothing that names another rater, and nothing
only the coordinator can act on. Nothing here writes or prints.
"""

from __future__ import annotations

from typing import Protocol

from ..spec.study import Rater
from ..words import counted
from .validate import CATALOGUE, ERROR, Issue, cell_order

MAX_LISTED = 60  # issues quoted in one reply; the rest are counted


class Returned(Protocol):
    """What a reply needs of the rater's roster row (:class:`.coordinator.RosterRow`)."""

    @property
    def file(self) -> str:
        """The file or files they sent (comma-separated), as they named them."""
        ...


def feedback_body(rater: Rater, row: Returned, issues: list[Issue]) -> str:
    """The reply's text: what to fix, cell by cell (errors first), and how to return it."""
    errors = [i for i in issues if i.severity == ERROR]
    warnings = [i for i in issues if i.severity != ERROR and i.code not in FOR_COORDINATOR]
    lines = [f"Dear {rater.name or rater.id},", "",
             f"Thank you for returning your workbook ({row.file}). Before your answers can "
             "be used, please fix the following in the file you sent:", ""]
    lines += _issue_lines(errors)
    if warnings:
        lines += ["", "Please also check (these do not stop your answers being used):", ""]
        lines += _issue_lines(warnings)
    lines += ["", "Then save the file and send it back to me. Your original workbook is "
              "attached again in case you need a fresh copy; if you start from it, your "
              "earlier answers are not in it.", "", "Thank you!", ""]
    return "\n".join(lines)


def rivals_body(rater: Rater, rivals: list[str]) -> str:
    """The reply to a rater under whose name different workbooks came back: which is
    theirs? Nothing of either file is quoted: one may have been filled by someone else,
    whose answers are not theirs to read."""
    return "\n".join([
        f"Dear {rater.name or rater.id},", "",
        f"{spelled(len(rivals))} different workbooks came back as yours: "
        f"{', '.join(rivals)}. Only "
        "one can be used, so none is used for now.", "",
        "Could you tell me which one holds your answers, or send it to me once more? If "
        "you did not send one of them, please say so.", "",
        "Your original workbook is attached in case you need a fresh copy.", "",
        "Thank you!", ""])


def spelled(n: int) -> str:
    """A small count as a word to begin a sentence with ("Two"), a larger one in digits."""
    return ("Two", "Three", "Four", "Five")[n - 2] if 2 <= n <= 5 else str(n)


def unusable_body(rater: Rater, row: Returned, issues: list[Issue]) -> str:
    """The reply to a rater whose file arrived but could not be read or identified:
    what was wrong with it, and a request to attach it again."""
    errors = [i for i in issues if i.severity == ERROR]
    lines = [f"Dear {rater.name or rater.id},", "",
             f"Thank you for sending your workbook ({row.file}). It arrived, but it could "
             "not be used:", ""]
    lines += _issue_lines(errors)
    lines += ["", "Please attach your filled-in workbook again and send it back to me. "
              "Your original workbook is attached in case you need a fresh copy; if you "
              "start from it, your earlier answers are not in it.", "", "Thank you!", ""]
    return "\n".join(lines)


# issues whose message names another rater, their file or their address: a reply goes
# to one rater, who learns neither who else rates nor what another's file holds, so it
# quotes only what the catalogue says of the kind (the Issues sheet keeps the names)
OTHERS_NAMED = frozenset({"file-name-mismatch", "rows-from-other-rater", "sender-not-rater",
                          "answers-match-other-rater", "saved-by-same-user"})


# warnings about how the file came, for the coordinator to act on (which address sent
# it): nothing the rater fixes in the workbook, so no reply to them quotes them
FOR_COORDINATOR = frozenset({"sender-unknown"})


BLANK_CASE_FROM = 4
"""Blank answers of one case from which a reply says "case N: K answers blank" once."""


def _issue_lines(issues: list[Issue]) -> list[str]:
    """A line per issue, up to :data:`MAX_LISTED`; a case with many blank answers (a
    rater who stopped half-way) is one line, so the reply says which cases are left."""
    blanks: dict[str, list[Issue]] = {}
    for item in issues:
        if item.code == "answer-missing" and item.case:
            blanks.setdefault(item.case, []).append(item)
    whole = {case for case, items in blanks.items() if len(items) >= BLANK_CASE_FROM}
    lines, shown = [], 0
    for item in issues:
        if item.code == "answer-missing" and item.case in whole:
            if item is blanks[item.case][0]:
                mine = blanks[item.case]
                rows = [row for row, _ in map(cell_order, (i.cell for i in mine)) if row]
                span = f" ({item.sheet + ' ' if item.sheet else ''}rows {min(rows)} to " \
                    f"{max(rows)})" if rows else ""
                lines.append(f"- case {item.case}: {len(mine)} answers are blank{span}")
            continue
        shown += 1
        if shown > MAX_LISTED:
            continue
        where = "!".join(x for x in (item.sheet, item.cell) if x)
        text = CATALOGUE[item.code].meaning if item.code in OTHERS_NAMED else item.message
        lines.append(f"- {where}: {text}" if where else f"- {text}")
    if shown > MAX_LISTED:
        lines.append(f"- and {counted(shown - MAX_LISTED, 'more problem')} in the file")
    return lines
