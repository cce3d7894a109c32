"""Who sent a return: the message's ``From`` address checked against ``raters.csv``.

A return's sender is known when it came in a saved message (``.eml``, ``.mbox``) or
was saved by ``sheetflow fetch``, whose journal records the sender of each attachment
by its sha256. A sender whose address is no rater's gets ``sender-unknown``, and so
does a message with no single sender (no ``From``, one naming several addresses, or one
that cannot be read: anyone may have sent it); a
workbook of one rater sent from another rater's address gets ``sender-not-rater``
(both warnings: a rater may write from a second address, and the coordinator decides).
Addresses are compared without case.

Either is the one sign that someone returned a workbook for someone else, so a return
used that came so makes ``collect`` and ``status`` exit 1 until the coordinator has
checked who sent it and marks the file read (``collect --mark-read FILE``, recorded as
:mod:`.text_read` describes); its row of the Status sheet says so
(:func:`with_senders_unchecked`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..packs.journal import Journal
from ..spec.study import Study
from .mailbox import NO_SENDER
from .next_steps import sender_step
from .validate import SENDER_CHECK, Issue, ValidationReport, issue

if TYPE_CHECKING:
    from .coordinator import RosterRow

_CAME_FROM = {"sender-not-rater": "came from another rater's address",
              "sender-unknown": "came from an address of no rater"}


@dataclass(frozen=True)
class Senders:
    """The raters' addresses, and the sender of each file ``fetch`` saved."""

    raters_by_address: dict[str, str] = field(default_factory=dict)
    by_sha256: dict[str, str] = field(default_factory=dict)
    unsure_by_sha256: dict[str, str] = field(default_factory=dict)
    """Why the message of a file ``fetch`` saved had no single sender (sha256 -> why)."""
    names_by_sha256: dict[str, str] = field(default_factory=dict)
    """The attachment name a file ``fetch`` saved was sent under (sha256 -> name): the
    local name it is saved under starts with the time received, so only this one can be
    a pack's file name."""

    @classmethod
    def of(cls, study: Study, journal: Journal) -> Senders:
        """From the study's raters and its mail journal."""
        addresses = {r.email.lower(): r.id for r in study.raters if r.email}
        # a record without a sender (null, missing) knows none: never the address "none"
        fetched = {sha: sender.lower() if isinstance(sender := record.get("sender"), str)
                   else "" for sha, record in journal.received_by_sha256().items()}
        # a file fetched came by mail: a record naming no sender is a message without one
        unsure = {sha: _why_no_sender(journal.received_by_sha256()[sha])
                  for sha, sender in fetched.items() if not sender}
        names = {sha: name for sha, record in journal.received_by_sha256().items()
                 if isinstance(name := record.get("attachment"), str)}
        return cls(addresses, fetched, unsure, names)

    def sender_of(self, sha256: str, sender: str) -> tuple[str, str]:
        """The address a file came from ("" when unknown) and the rater whose address it
        is ("" when none): ``sender`` from its saved message, else the journal's record
        of the file ``fetch`` saved with these bytes."""
        address = (sender or self.by_sha256.get(sha256, "")).lower()
        return address, self.raters_by_address.get(address, "") if address else ""

    def check(self, name: str, sha256: str, sender: str, rater: str,
              sender_problem: str = "") -> list[Issue]:
        """The sender issues of one file (``rater``: the pack's rater, "" if unknown;
        ``sender_problem``: why its saved message has no single sender, "" if it has one
        or the file came in no saved message)."""
        sender, _ = self.sender_of(sha256, sender)
        if not sender:
            why = sender_problem or self.unsure_by_sha256.get(sha256, "")
            # the value says why (the Status sheet's "What to do" tells it apart)
            return [issue("sender-unknown", file=name, rater=rater, detail=why, value=why,
                          what=f"with no single sender address ({why})")] if why else []
        owner = self.raters_by_address.get(sender)
        if owner is None:
            return [issue("sender-unknown", file=name, rater=rater, detail=sender,
                          what=f"from {sender}, an address of no rater in the raters file")]
        if rater and owner != rater:
            return [issue("sender-not-rater", file=name, rater=rater,
                          detail=f"{sender}, the address of rater {owner}")]
        return []


def with_senders_unchecked(rows: Sequence[RosterRow], report: ValidationReport,
                           study_dir: str | Path) -> list[RosterRow]:
    """``rows`` (the Status sheet's), the "What to do" of each whose return used came
    from another rater's address or from no rater's, not yet marked read, saying so and
    what to do (:func:`.next_steps.sender_step`)."""
    unchecked = set(report.unchecked_sender_files())
    came = {i.file: _came(i) for i in report.issues
            if i.code in SENDER_CHECK and i.file in unchecked}
    out = []
    for row in rows:
        files = [f for f in row.file.split(", ") if f in came] if row.file else []
        todo = "; ".join(f"the message carrying {f} {came[f]}" for f in files)
        out.append(replace(row, todo=f"{todo}: {sender_step(study_dir)}") if files else row)
    return out


def _came(found: Issue) -> str:
    """How the message carrying a file came, as the Status sheet says it: a
    ``sender-unknown`` with a value had no single sender, the value saying why."""
    if found.code == "sender-unknown" and found.value:
        return f"had no single sender address ({found.value})"
    return _CAME_FROM[found.code]


def _why_no_sender(record: dict[str, object]) -> str:
    """Why the message of a ``received`` record had no single sender: as ``fetch``
    recorded it, else (a record written before it did, or one naming none) no sender."""
    why = record.get("sender_problem")
    return why if isinstance(why, str) and why else NO_SENDER
