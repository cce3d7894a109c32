"""The text of the reply drafts collect writes to raters (:func:`.drafts.write_feedback`).

- :func:`feedback_subject`, :func:`feedback_body`: what to fix in the file the rater
  sent, cell by cell, the answers still blank counted apart from the problems;
- :func:`no_answers_body`: the file they sent has no answer in it (no list of its
  blank cells: the filled workbook is asked for);
- :func:`rivals_body`: different workbooks came back as theirs, which one is it?
- :func:`unusable_subject`, :func:`unusable_body`: their file arrived but could not be
  read or identified.

A reply goes to one rater: it quotes nothing that names another rater, and lists only
what that rater can fix in their own file, in words addressed to them (which issues,
and their words: :mod:`.rater_words`; the protocol's self-checks are never quoted).
Nothing here writes or prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from ..spec.study import Rater
from ..words import counted
from ..workbook import layout as L
from .links import REFUSED_AGAIN, UNREADABLE
from .locked_texts import LockedText
from .rater_words import in_reply, reply_text
from .validate import CATALOGUE, ERROR, Issue, cell_order

MAX_LISTED = 60  # lines listed in one reply; the issues past them are counted


class Returned(Protocol):
    """What a reply needs of the rater's roster row (:class:`.coordinator.RosterRow`)."""

    @property
    def file(self) -> str:
        """The file or files they sent (comma-separated), as they named them."""
        ...


def feedback_subject(title: str, issues: list[Issue]) -> str:
    """The reply's subject: the problems to fix and the answers still blank, counted
    apart (a rater who stopped half-way has answers to give, not problems to fix)."""
    blank, other = _blank_and_other(issues)
    if consent_only(issues):
        return f"{title}: your answer to the consent question"
    if blank and not other:
        return f"{title}: {counted(blank, 'answer')} still blank in your workbook"
    if blank:
        return (f"{title}: please fix {counted(other, 'problem')} and fill in "
                f"{counted(blank, 'blank answer')} in your workbook")
    return f"{title}: please fix {counted(other, 'problem')} in your workbook"


def feedback_body(rater: Rater, row: Returned, issues: list[Issue],
                  locked: Mapping[tuple[str, str], LockedText] | None = None) -> str:
    """The reply's text: what to fix, cell by cell (errors first), and how to return it.

    ``locked``: (sheet, cell) -> the field of each ``locked-text-changed`` issue
    (:func:`.locked_texts.locked_texts`), named and quoted so the rater can put it back.
    """
    errors = [i for i in issues if i.severity == ERROR]
    warnings = [i for i in issues if i.severity != ERROR and in_reply(i)]
    fresh = any(i.code in FRESH_COPY for i in errors)
    opening = (f"Thank you for returning your workbook ({row.file}). One answer needs your "
               "confirmation:" if consent_only(errors) else _opening(row.file, errors, fresh))
    lines = [f"Dear {rater.name or rater.id},", "", opening, ""]
    lines += _issue_lines(errors, locked or {})
    if warnings:
        lines += ["", "Please also check (these do not stop your answers being used):", ""]
        lines += _issue_lines(warnings, {})
    closing = ("If you change your answer, save that workbook and send it back to me. "
               "Your original workbook is attached again for reference; it does not hold "
               "your answers." if consent_only(errors)
               else _closing(fresh, any(i.code == LOCKED for i in errors)))
    lines += ["", closing, "", "Thank you!", ""]
    return "\n".join(lines)


CONSENT = frozenset({"consent-refused", "consent-refused-elsewhere"})


def consent_only(issues: list[Issue]) -> bool:
    """Whether the only errors are a consent not given: nothing to fix, a question to
    the rater (who may have meant it)."""
    errors = [i for i in issues if i.severity == ERROR]
    return bool(errors) and all(i.code in CONSENT for i in errors)


def _closing(fresh: bool, locked: bool) -> str:
    """How to send the file back, and what the attached workbook is for."""
    if fresh:
        # "the file" would read as the file they sent, the one not to be used
        return ("Then send me the fresh copy, filled in. Your original workbook is attached "
                "again for the fresh copy asked for above; it does not hold your answers, "
                "so copy them over from the file you sent.")
    holds = " (it holds the original texts)" if locked else ""
    return ("Then save the file and send it back to me. Your original workbook is attached "
            f"again for reference{holds}; it does not hold your answers, so keep working in "
            "the file you sent.")


def _opening(file: str, errors: list[Issue], fresh: bool = False) -> str:
    """The reply's first paragraph: the file that came, and what stands between its
    answers and their use (fixed in the file sent, unless a fresh copy is needed)."""
    blank, other = _blank_and_other(errors)
    thanks = f"Thank you for returning your workbook ({file})."
    if blank and not other:
        return (f"{thanks} It still has {counted(blank, 'blank answer')}, listed below; "
                "your answers can be used once "
                f"{'it is' if blank == 1 else 'they are'} filled in:")
    where = "" if fresh else " in the file you sent"
    if blank:
        return (f"{thanks} Before your answers can be used, please fix "
                f"{counted(other, 'problem')} and fill in {counted(blank, 'blank answer')}"
                f"{where}:")
    return f"{thanks} Before your answers can be used, please fix the following{where}:"


def _blank_and_other(issues: list[Issue]) -> tuple[int, int]:
    """Errors that are blank required answers, and the other errors."""
    errors = [i for i in issues if i.severity == ERROR]
    blank = sum(i.code == BLANK for i in errors)
    return blank, len(errors) - blank


NO_ANSWERS_SUBJECT = "the workbook you sent has no answers in it"


def no_answers_body(rater: Rater, row: Returned) -> str:
    """The reply to a rater whose workbook came back with nothing filled in: no answer
    came back, so there is nothing to fix in it and no blank cell to list; the filled
    workbook is asked for (perhaps the blank copy was attached instead)."""
    return "\n".join([
        f"Dear {rater.name or rater.id},", "",
        f"Thank you for sending your workbook ({row.file}). It has no answers in it: "
        "every answer cell is blank. Perhaps the blank copy was sent instead of the one "
        "you filled in.", "",
        "Could you send me the workbook with your answers in it? If you have not filled "
        "it in yet, please fill in the yellow cells, save the file and send that file "
        "back to me. Your workbook is attached again in case you need a fresh copy.", "",
        "Thank you!", ""])


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


def unusable_subject(title: str, issues: list[Issue]) -> str:
    """The subject of :func:`unusable_body`'s reply: what to send, as its closing says
    (the answers copied into the original workbook, or the workbook sent again, saved
    as the issues ask)."""
    errors = [i for i in issues if i.severity == ERROR]
    send = f"send your workbook {_resent_as(errors) or 'again'}"
    if any(i.code in REFUSED_AGAIN for i in errors):
        copy = "copy your answers into the workbook attached"
        return f"{title}: please {copy}, or {send}" if _resendable(errors) else \
            f"{title}: please {copy}"
    return f"{title}: please {send}"


def _resendable(errors: list[Issue]) -> bool:
    """Whether one of ``errors`` is of a file refused before it was read, which the
    rater can send again (saved as asked): beside a file whose hidden part was changed,
    the rater may send either."""
    return any(i.code in UNREADABLE for i in errors)


# how a file refused for its format is to come back (the issue's line says how to
# get there): after "save it as .xlsx", "attach your workbook again" would ask for the
# very file refused
_RESENT_AS = (({"encrypted-workbook"}, "without its opening password"),
              ({"legacy-xls", "ods-file", "macro-workbook", "strict-ooxml",
                "unreadable-workbook"}, "saved as .xlsx"),
              ({"zipped-workbook"}, "not zipped"))


def _resent_as(errors: list[Issue]) -> str:
    """How the workbook is to be sent again after ``errors`` ("saved as .xlsx"), or ""
    when as it is."""
    codes = {i.code for i in errors}
    return ", ".join(how for kinds, how in _RESENT_AS if codes & kinds)


def unusable_body(rater: Rater, row: Returned, issues: list[Issue],
                  names: Mapping[str, str] | None = None) -> str:
    """The reply to a rater whose file arrived but could not be read or identified:
    what was wrong with it, and a request to attach it again, saved as the issues ask
    (for a file whose hidden identity or spec mark was changed,
    :data:`.links.REFUSED_AGAIN`, to copy the answers into the original workbook
    attached: the same file would be refused again; when another of their files was
    refused before it was read, either way, as the subject says).

    ``names``: each issue's file -> the name the rater gave it (default: its own); when
    several files came back, each line names the file it is about, so the rater knows
    which file to convert and which to copy over.
    """
    errors = [i for i in issues if i.severity == ERROR]
    files = list(dict.fromkeys(i.file for i in errors))
    opening = (f"Thank you for sending your workbook ({row.file}). It arrived, but it "
               "could not be used:" if len(files) < 2 else
               f"Thank you for sending your files ({row.file}). They arrived, but "
               f"{'neither' if len(files) == 2 else 'none of them'} could be used:")
    lines = [f"Dear {rater.name or rater.id},", "", opening, ""]
    named = None if len(files) < 2 else {f: (names or {}).get(f, f) for f in files}
    lines += _issue_lines(errors, named=named)
    how = _resent_as(errors)
    again = len({i.file for i in errors if i.code in REFUSED_AGAIN})
    if again and _resendable(errors):
        # two files came back: either holds the answers, and each is mended its own way
        changed = ("the workbook whose hidden part was changed again would not help: it "
                   "would" if again == 1 else "the workbooks whose hidden parts were "
                   "changed again would not help: they would")
        ask = ("Please send me one workbook with your answers: either the workbook "
               "attached (your original one, as I sent it) with your answers copied into "
               f"it, or your filled-in workbook{f', {how}.' if how else ' again.'} "
               f"Sending {changed} still not match.")
    elif again:
        # the same file sent again is refused again: its answers go into a fresh copy
        sent = ("this file again would not help: its hidden part" if again == 1 else
                "these files again would not help: their hidden parts")
        ask = (f"Sending {sent} would still not match. The workbook attached is your "
               "original one, as I sent it.")
    else:
        ask = (f"Please attach your filled-in workbook{f', {how},' if how else ' again'} "
               "and send it back to me. Your original workbook is attached in case you "
               "need a fresh copy; if you start from it, your earlier answers are not in it.")
    lines += ["", ask, "", "Thank you!", ""]
    return "\n".join(lines)


# issues whose message names another rater, their file or their address: a reply goes
# to one rater, who learns neither who else rates nor what another's file holds, so it
# quotes only what the catalogue says of the kind (the Issues sheet keeps the names)
OTHERS_NAMED = frozenset({"file-name-mismatch", "rows-from-other-rater", "sender-not-rater",
                          "answers-match-other-rater", "saved-by-same-user"})


BLANK = "answer-missing"
LOCKED = "locked-text-changed"

# errors that a fresh copy of the workbook mends, not an edit of the file sent: a
# reply listing one asks for no fix "in the file you sent"
FRESH_COPY = frozenset({"sheet-missing", "row-missing", "column-deleted", "spec-hash-mismatch",
                        "rows-not-this-rater", "rows-unproven",
                        "formula-reaches-out", "external-reference", "data-connection",
                        "embedded-object", "activex-control"})

BLANK_CASE_FROM = 4
"""Blank answers of one case from which a reply says "case N: K answers are blank"
once."""


def _issue_lines(issues: list[Issue],
                 locked: Mapping[tuple[str, str], LockedText] | None = None, *,
                 named: Mapping[str, str] | None = None) -> list[str]:
    """A line per issue, up to :data:`MAX_LISTED` lines, the rest counted; a case with
    many blank answers (a rater who stopped half-way) is one line, and cases one after
    another each with many blank answers share one, so the reply says which cases are
    left without a line for each of hundreds of cases. ``named``: each issue's file ->
    the name its line opens with (a reply about several files), or none named."""
    entries = _entries(issues, locked or {}, named or {})
    lines = [line for line, _ in entries[:MAX_LISTED]]
    rest = [item for _, items in entries[MAX_LISTED:] for item in items]
    if rest:
        blank = sum(i.code == BLANK for i in rest)
        counts = [counted(n, noun) for n, noun in ((len(rest) - blank, "more problem"),
                                                   (blank, "more blank answer")) if n]
        lines.append(f"- and {' and '.join(counts)} in the file")
    return lines


def _entries(issues: list[Issue], locked: Mapping[tuple[str, str], LockedText],
             named: Mapping[str, str]) -> list[tuple[str, list[Issue]]]:
    """(line, the issues it stands for) in the order of ``issues``: the blank answers
    of a case with many are one entry, of a run of such cases (card numbers one after
    another, nothing else between) one too; any other issue is an entry of its own."""
    blanks: dict[str, list[Issue]] = {}
    for item in issues:
        if item.code == BLANK and item.case:
            blanks.setdefault(item.case, []).append(item)
    whole = {case for case, items in blanks.items() if len(items) >= BLANK_CASE_FROM}
    entries: list[tuple[str, list[Issue]]] = []
    run: list[str] = []  # the cases the last entry stands for, when it is blank cases
    for item in issues:
        if item.code != BLANK or item.case not in whole:
            run = []
            entries.append((_issue_line(item, locked, named.get(item.file, "")), [item]))
        elif item is blanks[item.case][0]:
            if run and _next_card(blanks[run[-1]][0], item):
                run.append(item.case)
                entries[-1] = _blank_cases(run, blanks)
            else:
                run = [item.case]
                entries.append(_blank_cases(run, blanks))
    return entries


def _next_card(before: Issue, item: Issue) -> bool:
    """Whether ``item``'s case is the card right after ``before``'s, on the same sheet."""
    first, then = L.card_number(before.case), L.card_number(item.case)
    return first is not None and then == first + 1 and before.sheet == item.sheet


def _blank_cases(run: list[str], blanks: dict[str, list[Issue]]) -> tuple[str, list[Issue]]:
    """The line for the blank answers of the cases ``run``, and those answers."""
    mine = [i for case in run for i in blanks[case]]
    rows = [row for row, _ in map(cell_order, (i.cell for i in mine)) if row]
    sheet = mine[0].sheet
    span = ""
    if rows:
        lines = f"row {rows[0]}" if min(rows) == max(rows) else \
            f"rows {min(rows)} to {max(rows)}"
        span = f" ({sheet + ' ' if sheet else ''}{lines})"
    cases = (f"case {run[0]}" if len(run) == 1 else f"cases {run[0]} and {run[1]}"
             if len(run) == 2 else f"cases {run[0]} to {run[-1]}")
    return f"- {cases}: {len(mine)} answers are blank{span}", mine


def _issue_line(item: Issue, locked: Mapping[tuple[str, str], LockedText],
                file: str = "") -> str:
    """One issue as a reply lists it: where (``file``, when the reply is about several),
    and what to do."""
    cell = "!".join(x for x in (item.sheet, item.cell) if x)
    where = ", ".join(x for x in (file, cell) if x)
    text = (CATALOGUE[item.code].meaning if item.code in OTHERS_NAMED
            else _locked_line(item, locked.get((item.sheet, item.cell)))
            if item.code == LOCKED else reply_text(item))
    return f"- {where}: {text}" if where else f"- {text}"


QUOTED_UP_TO = 160
"""The longest original text a reply quotes; a longer one is copied from the attachment."""


def _locked_line(item: Issue, field: LockedText | None) -> str:
    """A changed locked text: which field it is, what it said, and that putting it
    back is enough (collect accepts the file once its text is as sent)."""
    if field is None:  # its place moved (rows inserted): named by cell and case
        return (f"The text in {item.cell} (case {item.case}) was changed; it must stay as "
                "it was sent. Copy it back from the same place in the workbook attached, "
                "exactly as it is there. Putting it back is enough: your answers stay as "
                "they are.")
    cells = field.cells[0] if len(field.cells) == 1 else \
        f"cells {field.cells[0]} to {field.cells[-1]}"
    if field.text is not None and len(field.text) <= QUOTED_UP_TO and len(field.cells) == 1:
        back = f"Please put back the text as it was: '{field.text}'"
    else:
        back = f"Please copy it back exactly from {cells} of the workbook attached"
    return (f"The text of {field.role}, in {cells}, was changed; it must stay as it was sent. "
            f"{back}. Putting it back is enough: your answers stay as they are.")
