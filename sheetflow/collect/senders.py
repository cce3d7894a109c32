"""Who sent a return: the message's ``From`` address checked against ``raters.csv``.

A return's sender is known when it came in a saved message (``.eml``, ``.mbox``) or
was saved by ``sheetflow fetch``, whose journal records the sender of each attachment
by its sha256. A sender whose address is no rater's gets ``sender-unknown``; a
workbook of one rater sent from another rater's address gets ``sender-not-rater``
(both warnings: a rater may write from a second address, and the coordinator decides).
Addresses are compared without case.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..packs.journal import Journal
from ..spec.study import Study
from .validate import Issue, issue


@dataclass(frozen=True)
class Senders:
    """The raters' addresses, and the sender of each file ``fetch`` saved."""

    raters_by_address: dict[str, str] = field(default_factory=dict)
    by_sha256: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, study: Study, journal: Journal) -> Senders:
        """From the study's raters and its mail journal."""
        addresses = {r.email.lower(): r.id for r in study.raters if r.email}
        # a record without a sender (null, missing) knows none: never the address "none"
        fetched = {sha: sender.lower() if isinstance(sender := record.get("sender"), str)
                   else "" for sha, record in journal.received_by_sha256().items()}
        return cls(addresses, fetched)

    def sender_of(self, sha256: str, sender: str) -> tuple[str, str]:
        """The address a file came from ("" when unknown) and the rater whose address it
        is ("" when none): ``sender`` from its saved message, else the journal's record
        of the file ``fetch`` saved with these bytes."""
        address = (sender or self.by_sha256.get(sha256, "")).lower()
        return address, self.raters_by_address.get(address, "") if address else ""

    def check(self, name: str, sha256: str, sender: str, rater: str) -> list[Issue]:
        """The sender issues of one file (``rater``: the pack's rater, "" if unknown)."""
        sender, _ = self.sender_of(sha256, sender)
        if not sender:
            return []
        owner = self.raters_by_address.get(sender)
        if owner is None:
            return [issue("sender-unknown", file=name, rater=rater, detail=sender)]
        if rater and owner != rater:
            return [issue("sender-not-rater", file=name, rater=rater,
                          detail=f"{sender}, the address of rater {owner}")]
        return []
