"""The drafts the coordinator sends: collect's replies and remind's reminders.

- :func:`write_feedback`: a reply draft (``out/feedback/<rater_id>.eml``, X-Unsent) to
  each rater whose file has errors, listing sheet!cell and what to do, with their pack
  attached again; and to each rater whose file arrived but could not be read or
  identified (linked to their pack alone, see :mod:`.links`), asking for it again. The
  drafts' text is composed in :mod:`.replies`.
- :func:`write_reminders`: a reminder draft (``out/reminders/<rater_id>.eml``) to each
  rater who has not returned, with the pack attached again.
- :func:`save_drafts`: a folder of drafts replaced whole or not at all;
  :func:`stage_drafts` stages them in a larger set (``collect``'s, with the record
  that names them).

Every draft's attachment is checked against the sha256 ``generate`` recorded in the
manifest (:func:`sheetflow.packs.manifest.changed_packs`), on the bytes the draft
attaches (read once, as :func:`sheetflow.packs.mail.compose_eml` put them in it): a
draft attaching a workbook changed after generate is left out
(``Drafts.changed``), for the caller to refuse (``remind``) or name (``collect``).

Above :mod:`.coordinator` (the roster the drafts are made from); nothing here prints.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path

from ..hints import command_line
from ..packs.journal import Journal, read_journal
from ..packs.mail import attachment_of, compose_eml, deadline_text
from ..packs.manifest import PackHead, changed_packs, changed_packs_problem
from ..spec.study import Rater, Study, judge_rater_ids
from ..staging import OutputSet, remove_partials
from ..workbook import layout as L
from .coordinator import RosterRow, draft_name, rival_files
from .locked_texts import locked_texts
from .mail_state import as_sent, as_sent_received, names_as_sent
from .replies import (
    NO_ANSWERS_SUBJECT,
    feedback_body,
    feedback_subject,
    no_answers_body,
    rivals_body,
    spelled,
    unusable_body,
    unusable_subject,
)
from .validate import Issue, ValidationReport, not_the_raters


@dataclass
class Drafts:
    """The drafts composed or written, and the raters who get none, with why."""

    written: list[Path] = field(default_factory=list)
    no_email: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    """Automated judges (protocol 004) whose row needed a draft: ``import-judges``
    fills their workbooks, so none is written (:func:`.coordinator.reimport_step`)."""
    unwritten: dict[str, bytes] = field(default_factory=dict)
    """Draft file name -> the draft, for drafts composed but not written (yet, or at
    all: a dry run)."""
    changed: list[tuple[str, int, str]] = field(default_factory=list)
    """(rater, sitting, ``packs/<file>``) for each draft left out: the pack it attached
    is not the workbook generate wrote (:func:`~sheetflow.packs.manifest.changed_packs`)."""
    attached: dict[str, str] = field(default_factory=dict)
    """Draft file name -> the sha256 of the pack it attaches ("" when none), for the
    drafts of ``unwritten``, as composed (no parse of the draft)."""


def write_feedback(study: Study, root: Path, rows: list[RosterRow],
                   report: ValidationReport, heads: list[PackHead], *,
                   journal: Journal | None = None) -> Drafts:
    """A reply draft to each rater whose returned file has errors, or arrived unusable
    (the ``unusable`` rows of :func:`.coordinator.roster`: it is asked for again). A
    file with no answer in it gets a reply asking for the filled one, not a list of its
    blanks.

    The drafts are composed in memory (``Drafts.unwritten``); :func:`save_drafts`
    writes them in place of the earlier ones, so a rater whose file is now clean has
    none. A rater whose pack changed after generate gets none either (``Drafts.changed``,
    worded by :func:`reply_left_out`): one bad pack never blocks the other replies.

    Parameters
    ----------
    study : Study
    root : Path
        The study folder (the packs are attached from ``packs/``).
    rows : list of RosterRow
        From :func:`.coordinator.roster`.
    report : ValidationReport
    heads : list of PackHead
        The manifest's packs, with the sha256 of each workbook generate wrote.
    journal : Journal, optional
        The mail journal collect read (the names the raters gave their files); default:
        read here.

    Returns
    -------
    Drafts
    """
    by_file: dict[str, list[Issue]] = defaultdict(list)
    for item in report.issues:
        by_file[item.file].append(item)
    set_aside = not_the_raters(report.issues)
    journal = read_journal(root) if journal is None else journal
    sent_as = names_as_sent(report.files, journal)
    statuses = {f.file: f for f in report.files}

    def compose(rater: Rater, row: RosterRow) -> tuple[str, str]:
        # only the file that stands for the rater: not one their newer file replaced,
        # nor the pack sent back untouched beside it, nor a cut-off file beside the one
        # used; named as the rater named it
        standing = [f for f in row.file.split(", ") if f not in set_aside]
        issues = [i for f in standing for i in by_file.get(f, [])]
        names = dict(zip(standing, as_sent(standing, sent_as), strict=True))
        row = replace(row, file=", ".join(names.values()))
        rivals = rival_files(issues)
        if len(rivals) > 1:
            return (f"{study.title}: {spelled(len(rivals)).lower()} different workbooks "
                    "came back as yours",
                    rivals_body(rater, as_sent_received(rivals, report.files, journal)))
        if row.state == "unusable":
            return (unusable_subject(study.title, issues),
                    unusable_body(rater, row, issues, names))
        sent = [statuses[f] for f in standing if f in statuses]
        if sent and all(f.no_answers for f in sent):
            # no answer came back: nothing to fix, and no list of every blank cell
            return f"{study.title}: {NO_ANSWERS_SUBJECT}", no_answers_body(rater, row)
        head = next((h for h in heads if h.file == row.pack), None)
        locked = locked_texts(root, head, issues) if head is not None else {}
        return (feedback_subject(study.title, issues),
                feedback_body(rater, row, issues, locked))
    return _draft_each(study, root, rows, ("errors", "unusable"), heads, compose)


def reply_left_out(rater: str, pack: str, study_dir: str | Path) -> str:
    """Why ``rater`` got no reply draft: ``pack`` changed after generate (``study_dir``:
    the study folder as the user gave it, for the commands named)."""
    return changed_packs_problem([pack], study_dir,
                                 not_done=f"no reply draft was written for {rater}",
                                 then=f"run '{command_line('collect', study_dir)}' again")


def reply_about(draft: bytes) -> str:
    """What tells one reply from another beside its attachment, as ``send`` journals
    it: ``text:`` and the sha256 of the draft's text (the same reply, whatever its MIME
    boundary)."""
    msg = message_from_bytes(draft, policy=SMTP)
    assert isinstance(msg, EmailMessage)
    body = msg.get_body(("plain",))
    text = body.get_content() if body is not None else ""
    return "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def reply_key(rater: str, sitting: int, draft: bytes) -> tuple[str, str, int, str, str]:
    """The journal's key of the reply ``draft`` (:attr:`~sheetflow.packs.journal.Delivery.key`):
    what ``send replies`` holds back when it was sent before."""
    msg = message_from_bytes(draft, policy=SMTP)
    assert isinstance(msg, EmailMessage)
    found = attachment_of(msg)
    attached = hashlib.sha256(found[1]).hexdigest() if found is not None else ""
    return ("reply", rater, sitting, attached, reply_about(draft))


def reply_keys(drafts: Drafts) -> dict[str, dict[str, str]]:
    """Draft file name -> what :func:`reply_key` reads of each reply draft composed
    (``attached``, ``text``) and the draft's ``sha256``, for ``out/collection.json``:
    ``status`` takes a draft's key from there while the draft is the one collect wrote,
    and reads it from the draft only when it is not."""
    return {name: {"sha256": hashlib.sha256(draft).hexdigest(),
                   "attached": drafts.attached[name], "text": reply_about(draft)}
            for name, draft in drafts.unwritten.items()}


def with_replies_left_out(rows: list[RosterRow], drafts: Drafts,
                          study_dir: str | Path) -> list[RosterRow]:
    """``rows`` with the "What to do" of each rater whose reply draft was left out
    (``drafts.changed``) saying so: it would send the coordinator to a draft that is
    not there."""
    why = {(rater, sitting): reply_left_out(rater, pack, study_dir)
           for rater, sitting, pack in drafts.changed}
    return [replace(row, todo=why[row.rater_id, row.sitting])
            if (row.rater_id, row.sitting) in why else row for row in rows]


def write_reminders(study: Study, root: Path, rows: list[RosterRow],
                    heads: list[PackHead]) -> Drafts:
    """A reminder draft to each rater whose pack has not come back, composed in memory
    (``Drafts.unwritten``; :func:`save_drafts` writes them).

    Parameters
    ----------
    study, root, heads
        As in :func:`write_feedback`.
    rows : list of RosterRow
        The ``missing`` rows get a reminder.

    Returns
    -------
    Drafts
        A reminder whose pack changed after generate is in ``changed``, not composed.
    """
    def compose(rater: Rater, row: RosterRow) -> tuple[str, str]:
        return (f"{study.title}: a reminder about your scoring workbook", "\n".join([
            f"Dear {rater.name or rater.id},", "",
            f"I have not yet received your scoring workbook ({row.pack}). Could you fill "
            "in the yellow cells, save it and send it back to me? The workbook is attached "
            "again in case you need it.", "",
            *_deadline_lines(study.mail.deadline, row.overdue),
            "If you have already sent it, please send it once more: it has not arrived.",
            "", "Thank you!", ""]))
    return _draft_each(study, root, rows, ("missing",), heads, compose)


def _deadline_lines(deadline: dt.date | None, overdue: bool) -> list[str]:
    """The study's ``[mail] deadline`` as a reminder states it (none when unset): the
    rater learns the date, or that it has passed (the end of that day, UTC)."""
    if deadline is None:
        return []
    if overdue:
        return [f"The deadline was {deadline_text(deadline)}: please send it as soon as you "
                "can.", ""]
    # the same form of the date as the invitation's
    return [f"Please send it back by {deadline_text(deadline)}, the deadline of the study.",
            ""]


def _draft_each(study: Study, root: Path, rows: list[RosterRow], states: tuple[str, ...],
                heads: list[PackHead],
                compose: Callable[[Rater, RosterRow], tuple[str, str]]) -> Drafts:
    """A draft (subject and body from ``compose``) to each rater whose row is in one of
    ``states``, with their pack attached, in ``Drafts.unwritten``; one whose attached
    bytes are not the workbook generate wrote goes to ``Drafts.changed`` instead."""
    raters = {r.id: r for r in study.raters}
    judges = judge_rater_ids(study)
    drafts = Drafts()
    for row in rows:
        if row.state not in states:
            continue
        if row.rater_id in judges:  # no mail reaches a program: its JSONL is imported
            drafts.judges.append(row.rater_id)
            continue
        rater = raters.get(row.rater_id)
        if rater is None or not rater.email:
            drafts.no_email.append(row.rater_id)
            continue
        subject, body = compose(rater, row)
        draft = compose_eml(study, rater, root / L.PACKS_DIR / row.pack, subject=subject,
                            body=body)
        # the pack is read once, by compose_eml: what is checked is what the draft carries
        changed = changed_packs(draft.attached, heads)
        if changed:
            drafts.changed.append((rater.id, row.sitting, changed[0]))
            continue
        name = draft_name(rater.id, row.sitting)
        drafts.unwritten[name] = draft.message
        drafts.attached[name] = draft.attached[0][1] if draft.attached else ""
    return drafts


def save_drafts(drafts: Drafts, out_dir: Path, command: str) -> None:
    """Write the drafts composed (``drafts.unwritten``) to ``out_dir`` in place of the
    ``.eml`` files there, as one set (:class:`~sheetflow.staging.OutputSet`): a run that
    fails half way leaves the earlier drafts as they were, never half of each. The
    drafts move to ``drafts.written``. ``command`` names the run in the note of one
    stopped half-way (:func:`~sheetflow.staging.recover_interrupted`)."""
    with OutputSet(label=command, what="drafts") as outputs:
        stage_drafts(drafts, out_dir, outputs)
    mark_written(drafts, out_dir)


def stage_drafts(drafts: Drafts, out_dir: Path, outputs: OutputSet) -> None:
    """Stage the drafts composed (``drafts.unwritten``) in ``outputs``, to replace the
    ``.eml`` files in ``out_dir`` (those it does not write again are removed as the set
    goes in): ``collect`` stages its reply drafts in the set of ``collection.json``,
    which records them, so the two are never of different runs. Call
    :func:`mark_written` once the set is in place."""
    remove_partials(out_dir)
    outputs.supersede(sorted(out_dir.glob("*.eml")))
    for name, draft in drafts.unwritten.items():
        outputs.write(out_dir / name, draft)


def mark_written(drafts: Drafts, out_dir: Path) -> None:
    """Move the drafts of ``drafts.unwritten`` to ``drafts.written``: their set is in
    place in ``out_dir`` (made when no draft was written: no draft is still an answer
    to look at)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    drafts.written += [out_dir / name for name in drafts.unwritten]
    drafts.unwritten = {}
