"""More than one file for one pack: which stands for the rater, after every file is read.

* **The pack as it was sent.** A file byte for byte the pack in ``packs/`` is the
  invitation's own attachment sent back (often beside the filled file, or forwarded
  with it). It is no return: its hundreds of blanks become one line,
  ``pack-as-sent-again`` (a warning) beside the rater's filled file, which it does not
  rival, or ``pack-as-sent`` (an error asking for the filled-in workbook) alone.
* **A blank copy saved again.** A file of the pack with no answer in it, saved after
  it was sent (so not byte for byte the pack), beside a file of the same pack that has
  answers and proves its rows: it is no return either, ``blank-copy-again`` (a
  warning), and does not rival the filled file. Alone, it is read as a return (its
  reply asks for the filled workbook).
* **A file sent after our reply.** The usual loop is a file, our reply asking for
  fixes, then a new file. When the mail journal shows the newest file came after a
  reply sent after every other file, it stands for the rater and the others are
  ``superseded`` (asking "which one is yours?" of a rater who did as asked would be
  false). Only if the newest came from the rater's address, or the same way as every
  file it would replace (the same other address, or no single sender for the same
  reason): a colleague's copy of the pack, filled and sent from their address after
  the reply, must not put the rater's own file out of use. It is a rival instead,
  whose ``duplicate-rater`` says why it replaced nothing.
* **A file that cannot prove its pack.** Row ids are keyed per pack by the study's
  secret, so only the pack's own workbook carries them. A file claiming the pack
  without any (its answer sheet or ids deleted) beside one that has them is
  ``rows-unproven``: counted for nobody, so a forged claim cannot put the rater's own
  return out of use. Alone (no file of the pack has them), it is ``claim-unproven``:
  counted for nobody either, so the pack stays not returned (never replied to, and
  not reminded while the file is there: the rater may have sent it) and the
  coordinator asks the rater whether they sent it. Such a file's rows
  were checked against the pack: one whose checks never ran (an attachment that
  arrived broken) keeps its own error and is no such file.
* **Otherwise** every file of the pack gets ``duplicate-rater`` and none is used until
  the coordinator removes the wrong one (only the rater can say which is theirs).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..hints import command_line
from ..packs.journal import Journal, parse_time
from ..packs.manifest import PackHead
from ..workbook import layout as L
from .returns import NotAFile, file_digest
from .senders import Senders
from .validate import Issue, issue


class Work(Protocol):
    """What these rules need of a file being collected (``run._FileWork``)."""

    path: Path
    name: str
    sha256: str
    head: PackHead | None
    member: int
    received: dt.datetime | None
    issues: list[Issue]
    as_sent: bool
    superseded_by: str
    sender: str
    sender_problem: str
    rows_proven: bool
    rows_checked: bool
    answers_read: bool
    entered: int
    resaved: bool

    @property
    def rater(self) -> str:
        """The pack's rater id ("" when not identified)."""

    @property
    def used(self) -> bool:
        """Whether its ratings are used: identified, no error, not set aside."""


def settle_packs(works: list[Any], root: Path, packs: Mapping[str, PackHead],
                 journal: Journal, senders: Senders) -> None:
    """Which file stands for each pack, once every file is checked: the packs sent back
    as they were sent are marked, the rivals among the rest settled, and only then are
    the packs sent back worded, since the words name the file that is used.

    Parameters
    ----------
    works : list
        The files read (each once), as :class:`Work`.
    root : Path
        The study folder (the packs as generated are in ``packs/``).
    packs : mapping of str to PackHead
        The manifest's packs by pack id.
    journal : Journal
        The mail journal (when each file and each reply went).
    senders : Senders
        The raters' addresses and who sent each file fetched.
    """
    mark_packs_as_sent(works, root, packs)
    mark_blank_copies(works)
    settle_rivals([w for w in works if not w.as_sent], journal, command_line("collect", root),
                  senders)
    word_packs_as_sent(works)


def mark_packs_as_sent(works: list[Any], root: Path, packs: Mapping[str, PackHead]) -> None:
    """Mark the files that are their pack exactly as generated."""
    sent: dict[str, str] = {}  # pack id -> sha256 of the file in packs/
    for work in works:
        if work.head is not None and _is_pack_as_sent(work, root / L.PACKS_DIR /
                                                      packs[work.head.pack_id].file, sent):
            work.as_sent = True


def mark_blank_copies(works: list[Any]) -> None:
    """Mark as sent back blank each file of a pack with no answer in it that came
    beside a file of the same pack with answers and its own rows: a blank copy opened
    and saved again is no return, and must not make the filled file a rival.

    The filled file must prove its rows: a forged claim beside the rater's blank copy
    is left to :func:`settle_rivals`, which sets the forgery aside.
    """
    for group in _by_pack(works):
        if any(w.entered and w.rows_proven and not w.as_sent for w in group):
            for work in group:
                if work.answers_read and not work.entered and not work.as_sent and \
                        all(i.code in BLANK_CODES for i in work.issues):
                    work.as_sent = work.resaved = True


BLANK_CODES = frozenset({"answer-missing", "batch-not-scored", "batch-time-missing"})
"""What a blank copy may say of itself and still be set aside: blanks alone (any other
issue, a changed text or identity, keeps it in view as a return)."""


def word_packs_as_sent(works: list[Any]) -> None:
    """Replace the issues of each pack sent back as it was sent (its hundreds of blanks)
    with one line: an error alone, a warning beside the rater's filled file that says
    which file is used (after :func:`settle_rivals`, when that is known)."""
    for group in _by_pack(works):
        filled = [w for w in group if not w.as_sent]
        for work in (w for w in group if w.as_sent):
            if not filled:
                work.issues = [issue("pack-as-sent", file=work.name, rater=work.rater)]
                continue
            code = "blank-copy-again" if work.resaved else "pack-as-sent-again"
            work.issues = [issue(code, file=work.name, rater=work.rater,
                                 beside=_beside(filled))]


def _beside(filled: list[Work]) -> str:
    """What the pack sent back came beside: the filled file used, or else the filled
    files that stand (not those a newer one replaced), none of them used."""
    used = [w for w in filled if w.used]
    if used:
        return f"file ({used[0].name}), which is the one used"
    standing = [w.name for w in filled if not w.superseded_by]
    if len(standing) == 1:
        return f"file ({standing[0]}), which has errors: none is used until they are fixed"
    return (f"files ({', '.join(standing)}), which have errors: none is used until they "
            "are fixed")


def _is_pack_as_sent(work: Work, pack: Path, sent: dict[str, str]) -> bool:
    assert work.head is not None
    try:  # the sizes first: a return differs from its pack in nearly every case
        if work.member < 0 and pack.stat().st_size != work.path.stat().st_size:
            return False
        if work.head.pack_id not in sent:
            sent[work.head.pack_id] = file_digest(pack)
    except (OSError, NotAFile):
        return False
    return sent[work.head.pack_id] == work.sha256


def settle_rivals(works: list[Any], journal: Journal, again: str,
                  senders: Senders) -> None:
    """Every pack with two or more files: the newest after a reply stands when it came
    from the rater (:func:`_why_not_theirs`), or else all are ``duplicate-rater``, whose
    message says to run ``again`` (collect on the study folder) once the wrong one is
    removed, and why the newest replaced nothing when it came after the reply."""
    for group in _by_pack(works):
        group = _proven_only(group)
        if len(group) < 2:
            continue
        newest, why = _after_reply(group, journal), ""
        if newest is not None:
            sent = _Sent.of(newest, senders)
            why = _why_not_theirs(newest, group, senders, sent)
            if not why:
                _supersede(group, newest, _who_sent(newest, sent))
                continue
        for work in group:
            others = ", ".join(w.name for w in group if w is not work)
            work.issues.append(issue("duplicate-rater", file=work.name, rater=work.rater,
                                     detail=f"also {others}", collect=again, caveat=why))


def _proven_only(group: list[Work]) -> list[Work]:
    """The files of one pack left to rival each other: a file whose rows were checked
    and prove nothing is set aside, counted for nobody (``rows-unproven`` beside a
    file that proves the pack, which alone is left; ``claim-unproven`` when none
    does, since a claim nothing proves is no return of the rater's)."""
    proven = [w for w in group if w.rows_proven]
    # beside a proven file every other is set aside, checked or not (as it always was)
    unproven = [w for w in group if not w.rows_proven and (proven or w.rows_checked)]
    for work in unproven:
        code = "rows-unproven" if proven else "claim-unproven"
        # a claim alone keeps the pack claimed as its value: once the file counts for
        # nobody it is the only trace of which pack (sitting) stays not returned for it
        claimed = "" if proven else work.head.pack_id
        work.issues.append(issue(code, file=work.name, rater=work.rater,
                                 detail=work.rater, value=claimed))
        work.head = None
    return [w for w in group if not any(w is u for u in unproven)]


def _by_pack(works: list[Any]) -> list[list[Work]]:
    """The identified files grouped by their pack, in the order first seen."""
    by_pack: dict[str, list[Work]] = defaultdict(list)
    for work in works:
        if work.head is not None:
            by_pack[work.head.pack_id].append(work)
    return list(by_pack.values())


def _after_reply(group: list[Work], journal: Journal) -> Work | None:
    """The newest file when it came after a reply sent after all the others, else None.
    Files of unknown arrival (put in ``returns/`` by hand) never settle this way."""
    fetched = journal.received_by_sha256()
    times = [w.received or parse_time(str(fetched.get(w.sha256, {}).get("received", "")))
             for w in group]
    if any(t is None for t in times):
        return None
    order = sorted(zip(times, range(len(group)), strict=True))
    (last, newest), earlier = order[-1], order[-2][0]
    head = group[newest].head
    assert head is not None  # grouped by pack
    replies = [d.finished or d.started for d in journal.sent("reply", head.rater_id,
                                                            head.sitting)]
    if last == earlier or not any(r and earlier < r < last for r in replies):
        return None
    return group[newest]


@dataclass(frozen=True)
class _Sent:
    """Who sent the newest file of a pack, looked up once for :func:`_why_not_theirs`
    and :func:`_who_sent`."""

    address: str
    """Its message's sender address ("" with no single sender)."""
    owner: str
    """The rater whose address that is ("" for none)."""
    came: tuple[str, str]
    """How its message came (:func:`_came`)."""

    @classmethod
    def of(cls, work: Work, senders: Senders) -> _Sent:
        """The sender of ``work``'s message."""
        address, owner = senders.sender_of(work.sha256, work.sender)
        return cls(address, owner, _came(work, senders))


def _why_not_theirs(newest: Work, group: list[Work], senders: Senders, sent: _Sent) -> str:
    """Why ``newest``, sent after the reply, may not replace the other files of its pack
    ("" when it may): it came neither from the pack's rater's address nor the same way
    as every other file (``sent``: who sent it). Anyone can forward a blank pack, so the
    order of arrival alone does not say that a file is the rater's."""
    address, owner, came = sent.address, sent.owner, sent.came
    if owner and owner == newest.rater:
        return ""
    if all(_came(w, senders) == came for w in group if w is not newest):
        return ""
    if address:
        whose = f" (the address of rater {owner})" if owner else ""
        how = f"from {address}{whose}, not rater {newest.rater}'s address"
    else:
        how = f"with no single sender address ({came[1]})"
    return (f" {newest.name} came after the reply asking for fixes, but {how}, so it "
            "replaces no earlier file.")


def _came(work: Work, senders: Senders) -> tuple[str, str]:
    """How a file's message came: (its sender's address, "") or, with no single
    sender, ("", why)."""
    address, _ = senders.sender_of(work.sha256, work.sender)
    if address:
        return address, ""
    return "", work.sender_problem or senders.unsure_by_sha256.get(work.sha256, "")


def _who_sent(newest: Work, sent: _Sent) -> str:
    """How ``newest``, allowed to replace the earlier files, came after the reply
    (``sent``: who sent it): from its rater's address, or the same way as every earlier
    file (which says nothing of who sent it: a sender-unknown warning stands beside
    it)."""
    if sent.owner and sent.owner == newest.rater:
        return f"Rater {newest.rater} sent {newest.name} after the reply asking for fixes"
    how = (f"from {sent.address}, the address every earlier file came from" if sent.address
           else f"with no single sender address ({sent.came[1]}), as every earlier file "
           "came")
    return f"{newest.name} came after the reply asking for fixes ({how})"


def _supersede(group: list[Work], newest: Work, came: str) -> None:
    """Mark every file of the pack but ``newest`` replaced by it; ``came`` says how it
    came (:func:`_who_sent`)."""
    for work in group:
        if work is not newest:
            work.superseded_by = newest.name
            work.issues.append(issue("superseded", file=work.name, rater=work.rater,
                                     detail=newest.name, what=came))
