"""What the coordinator sees after collect: the roster and the validation workbook.

- :func:`roster`: one row per expected pack (returned or not) plus one per returned file
  that matched no pack, with the rater's name and e-mail, completeness, counts, a state
  and what to do next.
- :func:`write_validation_workbook`: ``out/validation.xlsx``, opening on the Status
  sheet (colour by state, frozen header, filters, landscape and one page wide when
  printed), then the Issues sheet (messages wrapped), the Mail sheet and the Files
  sheet (one row per input file with its sha256). When lines of ``mail.jsonl`` held no
  record, a red row above the Status and Mail tables names them (and the report's
  ``journal-damaged`` issue is a row of the Issues sheet; the Files sheet lists only
  the returns read, of which the journal is none).
- :func:`draft_name`: the file name of a rater's reply or reminder draft; the drafts
  themselves are composed in :mod:`.drafts`, above this module.

Nothing here prints; the CLI renders the results.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import close_workbook
from ..hints import command_line, import_judges_line
from ..spec.study import Rater, Study, judge_rater_ids
from ..words import counted
from ..workbook.printing import (
    MIN_SCALE,
    column_pixels,
    fitted_widths,
    page_pixels,
    set_print,
    text_lines,
    text_width,
)
from .links import (
    claimed_todo,
    claims_on,
    copied_from,
    disowned_todo,
    linked_to,
    refused_again,
    sole_link,
    unread_from,
    unread_from_text,
    unread_note,
    unread_stranger,
)
from .mail_state import PackMail, collect_caveat, short_time
from .unsaved import replied_text
from .validate import (
    FileStatus,
    Issue,
    ValidationReport,
    counted_files,
    errors_first,
    left_out_messages,
    not_the_raters,
)

FEEDBACK_DIR = "feedback"
REMINDERS_DIR = "reminders"

# state -> (label shown, fill colour, font colour)
STATES = {
    "errors": ("Errors: fix", "#FFC7CE", "#9C0006"),
    "unknown": ("Unknown file", "#FFC7CE", "#9C0006"),
    "unusable": ("Returned, unusable", "#FFC7CE", "#9C0006"),
    "unclear": ("Unusable file, unclear whose", "#FFC7CE", "#9C0006"),
    "missing": ("Not returned", "#FFEB9C", "#9C5700"),
    "not-used": ("Not used", "#FFEB9C", "#9C5700"),
    "warnings": ("OK, warnings", "#E2F0D9", "#375623"),
    "ok": ("OK", "#C6EFCE", "#006100"),
}


@dataclass(frozen=True)
class RosterRow:
    """One line of the coordinator's Status sheet.

    Attributes
    ----------
    state : str
        A key of :data:`STATES`.
    rater_id, name, email : str
        From the raters file ("" for a file that matched no pack).
    sitting : int
        1, or 2 for a second sitting (0 for an unknown file).
    pack : str
        The pack file sent ("" for an unknown file).
    file : str
        The returned file ("" when not returned).
    percent_complete : float or None
        Required answers given, 0-100; None when not returned or not a known pack.
    errors, warnings : int
    used : bool
        Whether the file's ratings are in ``ratings.csv``.
    todo : str
        What the coordinator does next.
    invited, returned_at, reminded, reply_sent : str
        The pack's mail history (``yyyy-mm-dd hh:mm`` UTC; reminders comma-separated;
        "" when none; an invitation that may or may not have arrived reads
        ``unconfirmed <time>``; see :mod:`.mail_state`).
    overdue : bool
        Not returned by the end of the ``[mail] deadline`` day.
    """

    state: str
    rater_id: str
    name: str
    email: str
    sitting: int
    pack: str
    file: str
    percent_complete: float | None
    errors: int
    warnings: int
    used: bool
    todo: str
    invited: str = ""
    returned_at: str = ""
    reminded: str = ""
    reply_sent: str = ""
    overdue: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The row as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Expected:
    """One pack the coordinator sent (from the manifest)."""

    pack_id: str
    rater_id: str
    sitting: int
    file: str


def roster(study: Study, expected: list[Expected], report: ValidationReport,
           mail: dict[str, PackMail] | None = None) -> list[RosterRow]:
    """Every expected pack (returned or not) and every unknown file, in that order.

    An exact copy of a returned file (collect reads it once) is shown on the original's
    pack, never as an unknown file.

    A file identified as no pack but linked to packs (:mod:`.links`) is shown on them:
    a pack with no identified return whose linked files are its alone is "unusable"
    (returned, but it cannot be used), one sharing a linked file with another pack is
    "unclear"; a pack with an identified return counts the files linked to it alone
    among its files. A linked file shown on no pack gets an "unclear" row of its own.

    Parameters
    ----------
    study : Study
        For the raters' names and e-mails.
    expected : list of Expected
        The packs generated, in manifest order.
    report : ValidationReport
        collect's report (every returned file).
    mail : dict, optional
        Pack id -> its mail history (:func:`.mail_state.pack_mail`).

    Returns
    -------
    list of RosterRow
    """
    raters = {r.id: r for r in study.raters}
    claimed_twice = rival_files(report.issues)
    refused_files = {i.file for i in report.issues if i.code in CONSENT}
    set_aside = not_the_raters(report.issues)  # their problems are not the rater's
    left_out = left_out_messages(report.issues)
    by_pack = defaultdict(list)
    # an exact copy of a file is read once: the copy belongs to the original's pack
    originals = report.originals()
    for f in report.files:
        original = originals.get(f.sha256)
        by_pack[f.pack_id or (original.pack_id if original else "")].append(f)
    placed: set[str] = set()
    rows = []
    for pack in expected:
        rater = raters.get(pack.rater_id, Rater(pack.rater_id))
        # the file that stands first: the used one, else one not set aside for another
        files = sorted(by_pack.pop(pack.pack_id, []),
                       key=lambda f: (not f.used, f.file in set_aside, f.file))
        history = mail_history((mail or {}).get(pack.pack_id, PackMail()))
        linked = linked_to(report.files, pack.pack_id)
        if linked and not files:
            placed.update(f.file for f in linked)
            rows.append(_unusable_row(rater, pack, linked, history, study.root,
                                      refused_again(report.issues)))
            continue
        files += [f for f in linked if sole_link(f)]
        placed.update(f.file for f in linked if sole_link(f))
        if not files:
            todo = todo_missing(rater, study.root, _misnamed(report.files, pack),
                                pack.sitting)
            claims = claims_on(pack.pack_id, report.issues)
            if claims:  # their file may be among them: no reminder, ask them
                todo = f"not returned yet: {claimed_todo(rater.id, claims)}"
            unread = [] if claims else unread_from(rater.id, report.files, report.issues)
            if unread:  # from their address, unread: it may be this pack (no reminder)
                todo = f"not returned yet: {unread_from_text(unread)}"
            why = (mail or {}).get(pack.pack_id, PackMail()).not_saved
            todo = replied_text(why) if why else todo  # no reminder: they replied
            rows.append(RosterRow("missing", rater.id, rater.name, rater.email, pack.sitting,
                                  pack.file, "", None, 0, 0, False, todo, **history))
            continue
        best = files[0]
        # a file set aside for the rater's other one (sent after our reply, or the pack
        # as it was sent) does not make the rater's state: its problems are not theirs
        # to fix (they stay on the Issues sheet)
        mine = counted_files(files, set_aside)
        errors = sum(f.errors for f in mine)
        warnings = sum(f.warnings for f in mine)
        state = ("errors" if errors else "not-used" if not best.used
                 else "warnings" if warnings else "ok")
        rivals = [f.file for f in files if f.file in claimed_twice]
        refused = {f.file for f in mine} & refused_files
        collect = command_line("collect", study.root)
        todo = _todo_rivals(rater, rivals, pack.sitting, collect) if len(rivals) > 1 else \
            _todo_no_answers(rater, pack.sitting, collect) if state == "errors" and all(
                f.no_answers for f in mine) else _todo(state, rater, errors, pack.sitting,
                                                       collect)
        if refused:  # nothing to fix: the ratings stay out unless the rater consents
            todo = _todo_consent(rater, pack.sitting, todo)
        todo += "".join(f"; {f.file}: {left_out[f.file]}" for f in files
                        if f.file in left_out)
        rows.append(RosterRow(state, rater.id, rater.name, rater.email, pack.sitting,
                              pack.file, ", ".join(f.file for f in files),
                              best.percent_complete, errors, warnings, best.used, todo,
                              **history))
    for files in by_pack.values():  # files that matched no pack (or no known one)
        for f in files:
            if f.linked:
                if f.file not in placed:
                    rows.append(RosterRow("unclear", "", "", "", 0, "", f.file, None,
                                          f.errors, f.warnings, False, _todo_unclear(f)))
                continue
            rows.append(RosterRow("unknown", "", "", "", 0, "", f.file, None, f.errors,
                                  f.warnings, f.used, _todo_unknown(f, report)))
    return _judge_rows(rows, judge_rater_ids(study), study.root)


def reimport_step(rater_id: str, study_dir: str | Path, *, fix: bool = True) -> str:
    """What to do about an automated judge's workbook (protocol 004): it is filled by
    ``import-judges`` from the JSONL outputs, so no mail to the judge mends it.

    Parameters
    ----------
    rater_id : str
        The judge's rater id.
    study_dir : str or Path
        The study folder as the user named it.
    fix : bool
        Whether the workbook came back wrong (the JSONL is fixed and imported again,
        replacing it) rather than not at all (imported for the first time).

    Returns
    -------
    str
    """
    if not fix:
        return (f"{rater_id} is an automated judge: import its outputs with "
                f"{import_judges_line(study_dir)}")
    return (f"{rater_id} is an automated judge: import its JSONL outputs again (fixed "
            f"where the Issues sheet says) with {import_judges_line(study_dir, '--force')}, "
            f"then run '{command_line('collect', study_dir)}'")


def _judge_rows(rows: list[RosterRow], judges: frozenset[str],
                study_dir: str | Path) -> list[RosterRow]:
    """``rows`` with the What to do of each automated judge's pack not back, or back
    with errors or unusable, saying to import it (again), not to write to the judge."""
    fixed = []
    for row in rows:
        if row.rater_id in judges and row.state in ("missing", "errors", "unusable"):
            head = f"{counted(row.errors, 'error')}: " if row.state == "errors" else ""
            step = reimport_step(row.rater_id, study_dir, fix=row.state != "missing")
            row = replace(row, todo=head + step)
        fixed.append(row)
    return fixed


def _todo_unknown(f: FileStatus, report: ValidationReport) -> str:
    """What to do about a file identified as no pack: find its sender, unless it is no
    file at all (a folder or broken link in the returns folder, which nobody sent); a
    file that could not be read is not called a stranger's (:func:`.links.unread_note`)."""
    if any(i.code == "not-a-file" and i.file == f.file for i in report.issues):
        return "not a file (a folder, pipe or broken link): nothing was read; move it " \
            "out of the returns folder"
    if unread_stranger(f, report.issues):  # it may well be a pack of this study
        return unread_note(f)
    beside = left_out_messages(report.issues).get(f.file, "")
    if beside:  # sent by a rater whose workbook is in
        return beside
    copy = copied_from(f, report.files, report.issues)
    if copy is not None:  # of a file identified as no pack, shown on its own row
        return (f"an exact copy of {copy.file}, read once: that file's row says what to "
                "do; remove this copy from the returns folder")
    claim = disowned_todo(f, report.issues)
    if claim:  # it claims a pack of this study: not a stranger's file
        return claim
    return ("not a pack of this study (see the Issues sheet): find out who sent it and "
            "ask for their own workbook")


def _unusable_row(rater: Rater, pack: Expected, linked: list[FileStatus],
                  history: dict[str, Any], study_dir: str | Path,
                  refused: set[str]) -> RosterRow:
    """The row of a pack whose only returns are files linked to it (:mod:`.links`);
    ``study_dir``: the study folder as the user named it; ``refused``: the files the
    same file sent again would not mend (:func:`.links.refused_again`)."""
    mine = all(sole_link(f) for f in linked)
    errors, warnings = sum(f.errors for f in linked), sum(f.warnings for f in linked)
    again = not any(f.file in refused for f in linked)
    todo = (_todo_unusable(rater, linked, pack.sitting, command_line("collect", study_dir),
                           again)
            if mine
            else "; ".join(_todo_unclear(f) for f in linked))
    return RosterRow("unusable" if mine else "unclear", rater.id, rater.name, rater.email,
                     pack.sitting, pack.file, ", ".join(f.file for f in linked), None,
                     errors, warnings, False, todo, **history)


def _todo_unusable(rater: Rater, linked: list[FileStatus], sitting: int,
                   collect: str, again: bool) -> str:
    """What to do about a pack returned unusable: ask for the file again, or, when
    ``again`` is false (the same file would be refused again), for the answers copied
    into the original workbook, as the reply draft asks (:func:`.replies.unusable_body`)."""
    files = "; ".join(f"{f.file} ({f.link})" for f in linked)
    ask = (f"send the reply draft out/{FEEDBACK_DIR}/{draft_name(rater.id, sitting)}"
           if rater.email else "write to them (no e-mail address in the raters file)")
    what = ("attach it again" if again else "copy their answers into their original "
            "workbook, as the same file sent again would be refused again")
    back = "it is" if again else "that workbook is"
    return (f"returned, but it cannot be used: {files}; {ask} asking {rater.id} to {what} "
            f"(see the Issues sheet), and run '{collect}' when {back} back")


def _todo_unclear(f: FileStatus) -> str:
    return (f"{f.file} cannot be used and it is unclear whose it is ({f.link}): find out "
            "who sent it and ask them to attach their own workbook again")


def mail_history(mail: PackMail) -> dict[str, Any]:
    """A pack's mail history as the Status sheet shows it."""
    invited = short_time(mail.invited) or (
        f"unconfirmed {short_time(mail.invitation_unconfirmed)}"
        if mail.invitation_unconfirmed else "")  # may or may not have arrived
    return {"invited": invited, "returned_at": short_time(mail.returned),
            "reminded": ", ".join(short_time(t) for t in mail.reminded),
            "reply_sent": short_time(mail.reply_sent), "overdue": mail.overdue}


def todo_missing(rater: Rater, study_dir: str | Path,
                 misnamed: list[tuple[str, str]] | None = None, sitting: int = 1) -> str:
    """What to do about a pack that has not come back.

    ``study_dir``: the study folder as the user named it, for the commands to type.
    ``misnamed``: (file, rater) of each returned file named as this pack but holding
    another rater's workbook (``file-name-mismatch``): named, so the coordinator does
    not take the file in ``returns/`` for this rater's return.
    """
    aside = "".join(f"{file} in returns/ has this pack's name but is rater {other}'s "
                    f"workbook (see {other}'s row); " for file, other in misnamed or [])
    if rater.email:
        return (f"not returned yet: {aside}run '{command_line('remind', study_dir)}' and "
                f"send the draft out/{REMINDERS_DIR}/{draft_name(rater.id, sitting)} "
                f"(or '{command_line('send', study_dir, 'reminders')}')")
    return f"not returned yet: {aside}remind them (no e-mail address in the raters file)"


def _misnamed(files: Iterable[FileStatus], pack: Expected) -> list[tuple[str, str]]:
    """(file, rater) of each returned file named as ``pack``'s workbook that holds
    another rater's (``file-name-mismatch``)."""
    return [(f.file, f.rater) for f in files
            if f.pack_id and f.pack_id != pack.pack_id and Path(f.file).name == pack.file]


def rival_files(issues: Iterable[Issue]) -> list[str]:
    """Files that are one of two or more different returns of one pack
    (``duplicate-rater``), in the order of ``issues``."""
    return list(dict.fromkeys(i.file for i in issues if i.code == "duplicate-rater"))


def _todo_rivals(rater: Rater, rivals: list[str], sitting: int, collect: str) -> str:
    """What to do when different files came back as one rater's: only they can say
    which is theirs (one may not be: a colleague can return a pack as another);
    ``collect`` is the command that reads the returns again."""
    ask = (f"send the reply draft out/{FEEDBACK_DIR}/{draft_name(rater.id, sitting)}, which "
           "asks them" if rater.email else "ask them (no e-mail address in the raters file)")
    every, rest = ("both", "other") if len(rivals) == 2 else ("all", "others")
    return (f"{len(rivals)} different files came back as theirs ({every} under File "
            f"returned): {ask} which one is theirs, then remove the {rest} from the returns "
            f"folder and run '{collect}'")


def _todo_no_answers(rater: Rater, sitting: int, collect: str) -> str:
    """What to do when the rater's file came back with nothing filled in: its blank
    cells are no errors to fix, the filled workbook is what is missing (``collect``: the
    command that reads it once it is back)."""
    ask = (f"send the reply draft out/{FEEDBACK_DIR}/{draft_name(rater.id, sitting)}, which "
           "asks" if rater.email else "ask them (no e-mail address in the raters file)")
    return (f"the file has no answers in it (perhaps the blank workbook was sent): {ask} "
            f"for the filled one; run '{collect}' when it is back")


CONSENT = frozenset({"consent-refused", "consent-refused-elsewhere"})
"""Codes of a file kept out because its rater did not give consent."""


def _todo_consent(rater: Rater, sitting: int, then: str) -> str:
    """A rater who did not give consent: none of their ratings is used; ask whether
    they meant it (they may have)."""
    ask = ("the reply draft asks whether they meant it" if rater.email
           else "ask them whether they meant it")
    return (f"consent not given (see the Issues sheet), so none of their ratings is used "
            f"({ask}); {then}")


def _todo(state: str, rater: Rater, errors: int, sitting: int, collect: str) -> str:
    """What to do about a pack that came back (``collect``: the command that reads the
    fixed file once it is back)."""
    if state == "errors":
        where = (f"send the reply draft out/{FEEDBACK_DIR}/{draft_name(rater.id, sitting)}"
                 if rater.email else "send them the list on the Issues sheet (no e-mail "
                 "address in the raters file)")
        return (f"{counted(errors, 'error')}: {where}; run '{collect}' when the fixed file "
                "is back")
    if state == "not-used":
        return "not used (see the Issues sheet); ask for a fresh copy"
    if state == "warnings":
        return "usable; read the warnings on the Issues sheet"
    return "nothing to do"


def draft_name(rater_id: str, sitting: int = 1) -> str:
    """The file name of a rater's draft: ``<rater_id>.eml`` (``-sitting2`` for sitting 2)."""
    return f"{rater_id}.eml" if sitting == 1 else f"{rater_id}-sitting{sitting}.eml"


# --------------------------------------------------------------------------- workbook

# Status and Mail each print one landscape page wide at 70% or more: at most about 140
# characters of column width (see sheetflow.workbook.printing); text wraps in its cell.
STATUS_COLUMNS = (  # header, width, RosterRow field
    ("State", 11, "state"), ("Rater", 9, "rater_id"), ("Name", 14, "name"),
    ("Sitting", 7, "sitting"), ("Pack file", 22, "pack"), ("File returned", 22, "file"),
    ("Complete %", 9, "percent_complete"), ("Errors", 7, "errors"),
    ("Warnings", 9, "warnings"), ("Used", 6, "used"), ("What to do", 25, "todo"),
)
MAIL_COLUMNS = (  # the mail history of each pack, beside who it went to
    ("State", 11, "state"), ("Rater", 9, "rater_id"), ("Name", 14, "name"),
    ("E-mail", 24, "email"), ("Sitting", 7, "sitting"), ("Invited", 16, "invited"),
    ("Returned", 16, "returned_at"), ("Reminded", 16, "reminded"),
    ("Reply sent", 16, "reply_sent"), ("Overdue", 8, "overdue"),
)
LINE_POINTS = 15  # row height of one line of wrapped text
ISSUE_COLUMNS = (("severity", 9, "Severity"), ("code", 18, "Code"), ("file", 22, "File"),
                 ("sheet", 9, "Sheet"), ("cell", 6, "Cell"), ("rater", 9, "Rater"),
                 ("case", 9, "Case"), ("label", 6, "Label"), ("dimension", 11, "Dimension"),
                 ("value", 10, "Value"), ("message", 30, "Message"))
# a dimension id or a value (PASS_ADEQUATE, overall_verdict) wider than its column was
# broken mid-word: such a column widens to its longest word up to this, the message
# giving up the room down to MESSAGE_FLOOR so the sheet still prints one page wide
WORD_CAP = 24
MESSAGE_FLOOR = 24
_BREAKS = re.compile(r"\s+|(?<=-)")  # spreadsheet programs wrap at a space or after "-"


def write_validation_workbook(path: Path, rows: list[RosterRow],
                              report: ValidationReport, *, study_dir: str | Path,
                              journal_damaged: list[int] | None = None) -> None:
    """Write the Status sheet (``rows``) and the Issues sheet (``report``) to ``path``.

    Every string goes through ``write_string`` (text from returned files never becomes
    a formula or link), and the creation date is pinned so two runs give the same file.

    Parameters
    ----------
    path : Path
    rows : list of RosterRow
    report : ValidationReport
    study_dir : str or Path
        The study folder as the user gave it: the commands the workbook names run on it.
    journal_damaged : list of int, optional
        The lines of ``mail.jsonl`` that held no record when collect read it: named
        above the Status and Mail tables (the sheet the workbook opens on, and the one
        whose history they may have cut short), since the sender checks, the times
        received and the messages shown as sent went without them.
    """
    import datetime as dt

    from ..workbook.app_props import SheetflowWorkbook  # xlsxwriter: only when writing

    wb = SheetflowWorkbook(str(path), {"strings_to_formulas": False,
                                       "strings_to_urls": False,
                                       "strings_to_numbers": False})
    wb.set_properties({"created": dt.datetime(2000, 1, 1), "title": "Validation of returns"})
    head = wb.add_format({"bold": True, "bg_color": "#D9D9D9", "border": 1,
                          "text_wrap": True, "valign": "top"})
    banner = collect_caveat(journal_damaged, study_dir) if journal_damaged else ""
    _roster_sheet(wb, head, rows, "Status", STATUS_COLUMNS, banner)
    _issues_sheet(wb, head, report.issues)
    _roster_sheet(wb, head, rows, "Mail", MAIL_COLUMNS, banner)
    _files_sheet(wb, head, report)
    close_workbook(wb, path)


def _print_setup(ws: Any, widths: list[float], rows: int, header: int = 0) -> None:
    """Frozen header, filters, and printed legibly (see :mod:`sheetflow.workbook.printing`:
    a sheet too wide for one page at 70% goes on to the right, its first column
    repeated, rather than shrinking to an unreadable size). ``header``: the row of the
    table's header (below a banner: the banner stays in view too, and prints once)."""
    ws.freeze_panes(header + 1, 0)
    ws.autofilter(header, 0, header + max(rows, 1), len(widths) - 1)
    set_print(ws, widths, header_rows=header + 1, header_from=header, landscape=True)


def _roster_sheet(wb: Any, head: Any, rows: list[RosterRow], title: str,
                  columns: tuple[tuple[str, int, str], ...], banner: str = "") -> None:
    """A sheet of one row per pack (``rows``) showing ``columns``, each row coloured by
    its state, below ``banner`` when there is one; the Status sheet is the one the
    workbook opens on."""
    ws = wb.add_worksheet(title)
    top = _banner(wb, ws, banner, [width for _, width, _ in columns]) if banner else 0
    formats = {state: (wb.add_format({"bg_color": fill, "font_color": font, "bold": True,
                                      "valign": "top", "border": 1, "text_wrap": True}),
                       wb.add_format({"bg_color": fill, "valign": "top", "border": 1,
                                      "text_wrap": True}))
               for state, (_, fill, font) in STATES.items()}
    for c, (header, width, _) in enumerate(columns):
        ws.write_string(top, c, header, head)
        ws.set_column(c, c, width)
    _header_height(ws, [(header, width) for header, width, _ in columns], top)
    for r, row in enumerate(rows, top + 1):
        strong, plain = formats[row.state]
        ws.set_row(r, LINE_POINTS * _lines(
            (_shown(row, name), width) for _, width, name in columns))
        for c, (_, _, name) in enumerate(columns):
            value = getattr(row, name)
            if name == "state" or isinstance(value, bool) or not _shown(row, name):
                text = _shown(row, name)
                if text:
                    ws.write_string(r, c, text, strong if name == "state" else plain)
                else:
                    ws.write_blank(r, c, None, plain)
            elif isinstance(value, (int, float)):
                ws.write_number(r, c, value, plain)
            else:
                ws.write_string(r, c, str(value), plain)
    _print_setup(ws, [float(w) for _, w, _ in columns], len(rows), top)
    if title == "Status":
        ws.activate()


def _shown(row: RosterRow, name: str) -> str:
    """The text a roster cell shows: the state's words, Yes/No, "Overdue" or blank
    (also the sitting of a file of no pack, 0); a cell showing nothing is left blank."""
    value = getattr(row, name)
    if name == "state":
        return STATES[row.state][0]
    if row.state == "missing" and name in ("errors", "warnings", "used"):
        return ""  # nothing came back: nothing was checked (0 errors read as clean)
    if name == "used":
        return "Yes" if value else "No"
    if name == "overdue":
        return "Overdue" if value else ""
    if name == "sitting":
        return str(value) if value else ""
    return "" if value is None else str(value)


def _header_height(ws: Any, cells: list[tuple[str, int]], row: int = 0) -> None:
    """The header row as tall as its longest wrapped header ("Complete %" takes two)."""
    ws.set_row(row, LINE_POINTS * _lines(cells))


def _banner(wb: Any, ws: Any, text: str, widths: list[int]) -> int:
    """``text`` across the first row of ``ws``, above its table, in the colours of an
    error (a spreadsheet program grows no row for wrapped text in merged cells, so the
    row is made as tall as the text needs); the row the table starts on."""
    style = wb.add_format({"bold": True, "bg_color": "#FFC7CE", "font_color": "#9C0006",
                           "text_wrap": True, "valign": "top", "border": 1})
    ws.merge_range(0, 0, 0, len(widths) - 1, "", style)
    ws.write_string(0, 0, text, style)
    # bold text is wider than the plain text the count assumes: a line to spare
    ws.set_row(0, LINE_POINTS * (_lines([(text, sum(widths))]) + 1))
    return 1


def _lines(cells: Iterable[tuple[str, int]],
           count: Callable[[str, float], int] = text_lines) -> int:
    """Lines the tallest wrapped cell needs, word by word in its column (``count``).

    A one-line text shorter than its column (``width`` whole characters, one kept
    free) takes one line whatever its words: most cells of a long Issues sheet are such.
    """
    return max((1 if len(text) < int(width) and "\n" not in text
                else count(text, width) for text, width in cells), default=1) or 1


def _issues_sheet(wb: Any, head: Any, issues: list[Issue]) -> None:
    ws = wb.add_worksheet("Issues")
    wrap = wb.add_format({"text_wrap": True, "valign": "top"})
    top = wb.add_format({"valign": "top"})
    severity = {"error": wb.add_format({"bg_color": "#FFC7CE", "font_color": "#9C0006",
                                        "valign": "top"}),
                "warning": wb.add_format({"bg_color": "#FFEB9C", "font_color": "#9C5700",
                                          "valign": "top"})}
    rows = [[_issue_text(item, name) for name, _, _ in ISSUE_COLUMNS]
            for item in errors_first(issues)]
    widths = issue_widths(rows)
    for c, ((name, _, header), width) in enumerate(zip(ISSUE_COLUMNS, widths, strict=True)):
        ws.write_string(0, c, header, head)
        ws.set_column(c, c, width, wrap if name == "message" else top)
    _header_height(ws, [(header, width)
                        for (_, _, header), width in zip(ISSUE_COLUMNS, widths, strict=True)])
    # file names, codes and raters repeat down a long sheet: their lines are counted once
    lines_of = lru_cache(maxsize=4096)(text_lines)
    for r, texts in enumerate(rows, 1):
        lines = _lines(zip(texts, widths, strict=True), lines_of)
        if lines > 1:  # spreadsheet programs do not grow a row for wrapped text
            ws.set_row(r, LINE_POINTS * lines)
        ws.write_string(r, 0, texts[0], severity.get(texts[0], top))
        for c in range(1, len(texts)):
            if texts[c]:  # an empty cell is left unwritten: the column's format shows
                ws.write_string(r, c, texts[c], wrap)
    _print_setup(ws, widths, len(issues))


def issue_widths(rows: list[list[str]]) -> list[float]:
    """The Issues sheet's column widths for ``rows`` (texts in :data:`ISSUE_COLUMNS`
    order): each column but the message its default or its longest word (broken at a
    space or after "-") up to :data:`WORD_CAP`; the message the rest of a landscape page
    at 70%, at least :data:`MESSAGE_FLOOR`; the widest narrowed back when too wide."""
    widths: list[float] = []
    for c, (name, default, _) in enumerate(ISSUE_COLUMNS):
        if name == "message":
            widths.append(0.0)  # set below, from the room the others leave
            continue
        longest = max((text_width(w) for row in rows for w in _BREAKS.split(row[c])),
                      default=0)
        widths.append(float(max(default, min(longest + 1, WORD_CAP))))
    at = [name for name, _, _ in ISSUE_COLUMNS].index("message")
    room = page_pixels(True) / MIN_SCALE - sum(column_pixels(w) for w in widths if w)
    widths[at] = float(max(MESSAGE_FLOOR, int((room - 5) / 7)))
    floors = [float(MESSAGE_FLOOR if name == "message" else default)
              for name, default, _ in ISSUE_COLUMNS]
    return fitted_widths(widths, floors)


def _issue_text(item: Issue, name: str) -> str:
    """An issue's field as its cell shows it: the message says when its text was marked
    read (:mod:`.text_read`; a column of its own would not fit the printed page)."""
    if name == "message" and item.read:
        return f"{item.message} ({item.read})"
    return str(getattr(item, name))


FILE_COLUMNS = (("File", 48), ("Rater", 12), ("Used", 6), ("Errors", 7), ("Warnings", 9),
                ("Complete %", 9), ("sha256", 34))


def _files_sheet(wb: Any, head: Any, report: ValidationReport) -> None:
    """One row per file: its whole name (wrapped, never cut) and its sha256 (on two
    lines)."""
    ws = wb.add_worksheet("Files")
    wrap = wb.add_format({"text_wrap": True, "valign": "top"})
    top = wb.add_format({"valign": "top"})
    for c, (name, width) in enumerate(FILE_COLUMNS):
        ws.write_string(0, c, name, head)
        ws.set_column(c, c, width, top)
    _header_height(ws, list(FILE_COLUMNS))
    for r, f in enumerate(report.files, 1):
        ws.set_row(r, LINE_POINTS * _lines([(f.file, FILE_COLUMNS[0][1]),
                                            (f.sha256, FILE_COLUMNS[6][1])]))
        ws.write_string(r, 0, f.file, wrap)
        ws.write_string(r, 1, f.rater, wrap)
        ws.write_string(r, 2, "Yes" if f.used else "No")
        ws.write_number(r, 3, f.errors)
        ws.write_number(r, 4, f.warnings)
        if f.pack_id and f.percent_complete is not None:
            ws.write_number(r, 5, f.percent_complete)
        ws.write_string(r, 6, f.sha256, wrap)
    _print_setup(ws, [float(w) for _, w in FILE_COLUMNS], len(report.files))
