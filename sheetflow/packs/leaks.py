"""The last check of ``generate``: no arm id in any part of a pack a rater receives.

Every zip part of every workbook (sheets, shared strings, defined names, document
properties) and the blinded manifest are searched for the design's arm ids, before
anything is moved into place (:func:`refuse_leaks`).

How an arm id is matched, and what a match does:

* An id matches as a whole token, in any case: not preceded or followed by a letter, a
  digit or ``_`` (``cell_a`` is not found in ``cell_ab``, ``base`` not in ``baseline``).
* A string that is a verbatim piece of the study's instructions is passed over: they
  are the same in every pack, so naming an arm there tells no card's arm.
* A *distinctive* id (at least :data:`MIN_DISTINCTIVE` characters, holding a digit,
  ``_``, ``-`` or ``.``, so no ordinary word: ``cell_a_opus_solo``, ``gpt-4o``) found in a
  pack stops ``generate`` (:class:`~sheetflow.errors.SealError`): such a token does not
  come into a response or a prompt by coincidence.
* An id that is an ordinary word or short (``baseline``, ``control``, ``v2``) may stand
  in any text by coincidence, so a match is a warning naming the pack and the part.
* The manifest is kept by the coordinator and read by ``collect``; no rater holds it,
  so any match there is a warning (item ids that carry their arm are the usual cause,
  which ``check`` names).

The invitations reach every rater too: the subject and body of each (the ``[email]``
texts of study.toml, filled in for the rater, or the default wording) are searched the
same way (:func:`refuse_mail_leaks`), before anything is written: a distinctive id
stops ``generate``, an ordinary word is a warning naming the subject or body. The
reminders and replies hold no text of study.toml but the title, which every pack shows
and the pack search covers.
"""

from __future__ import annotations

import functools
import html
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import SealError
from ..spec.study import Study

MIN_DISTINCTIVE = 5
"""Characters an arm id needs (with a non-letter) for a match in a pack to stop generate."""

_BLOCK = 1 << 22
_SHARED_STRING = re.compile(rb"<si>(.*?)</si>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_NOT_A_WORD = re.compile(r"[0-9_.\-]")
_EDGE = rb"[A-Za-z0-9_]"  # a character that continues a token


@dataclass(frozen=True)
class Leak:
    """One arm id found in one part of one file."""

    file: str
    part: str
    arm: str
    distinctive: bool
    """Whether the id is no ordinary word (see the module's notes)."""


def distinctive(arm: str) -> bool:
    """Whether ``arm`` cannot be an ordinary word: long enough and not letters only."""
    return len(arm) >= MIN_DISTINCTIVE and bool(_NOT_A_WORD.search(arm))


def find_leaks(study: Study, files: list[tuple[str, Path]]) -> list[Leak]:
    """Every arm id found in ``files``, once per file, part and id.

    Parameters
    ----------
    study : Study
    files : list of (str, Path)
        The name each file is known by (its final name) and where to read it (a staged
        copy): workbooks are searched part by part, other files in blocks.

    Returns
    -------
    list of Leak
        Empty when no file names an arm.
    """
    arms = [a.id for a in study.design.arms if a.id]
    if not arms:
        return []
    overlap = max(len(a.encode("utf-8")) for a in arms) + 1  # the id and a character before
    found: dict[Leak, None] = {}  # a plain file is searched in blocks: a hit counts once
    for name, path in files:
        for part, data, start in _parts(path, name, overlap):
            hits = arms_in(data, arms, start)
            if hits and part == "xl/sharedStrings.xml":
                hits = arms_in(_without_instruction_strings(data, study.instructions), hits)
            for arm in hits:
                found[Leak(name, part, arm, distinctive(arm))] = None
    return list(found)


def arms_in(data: bytes, arms: list[str], start: int = 0) -> list[str]:
    """Those of ``arms`` that stand in ``data`` as a whole token (see the module's
    notes), a match starting at ``start`` or after; in the order of ``arms``."""
    # bytes' lower() folds ASCII case as the pattern does: an id absent from the folded
    # text cannot match, and a plain substring search is many times faster than a pattern
    folded = data.lower()
    left = {arm for arm in arms if folded.find(arm.encode("utf-8").lower(), start) >= 0}
    hits: set[str] = set()
    while left:
        # at the first place any id stands, the pattern names the longest; the others
        # are sought again from that place on (an id may stand inside a longer one that
        # matched there: "gpt-4" in "gpt-4o-mini" when both are arms)
        match = _tokens(tuple(sorted(left))).search(data, start)
        if match is None:
            break
        text = match.group(0).lower()
        same = {arm for arm in left if arm.encode("utf-8").lower() == text}
        hits |= same
        left -= same
        start = match.start()
    return [arm for arm in arms if arm in hits]


def refuse_leaks(study: Study, packs: list[tuple[str, Path]],
                 manifest: tuple[str, Path]) -> list[str]:
    """Stop when a pack holds a distinctive arm id; the warnings for the other matches.

    Raises
    ------
    SealError
        One line per part and arm id, naming the first pack that holds it and how
        many others do; the caller writes nothing.
    """
    leaks = find_leaks(study, [*packs, manifest])
    stop = [k for k in leaks if k.distinctive and k.file != manifest[0]]
    if stop:
        raise SealError(_refusal(stop))
    return [_warning(k, k.file == manifest[0]) for k in leaks]


def refuse_mail_leaks(study: Study, invitations: list[tuple[str, str, str]]) -> list[str]:
    """Stop when an invitation's subject or body holds a distinctive arm id; a warning
    per other arm id found (once, however many invitations hold it).

    Parameters
    ----------
    study : Study
    invitations : list of (str, str, str)
        Each invitation as (what names it, its subject, its body).

    Raises
    ------
    SealError
        Naming the part of study.toml to change; the caller writes nothing.
    """
    arms = [a.id for a in study.design.arms if a.id]
    found: dict[tuple[str, str], list[str]] = {}  # (subject or body, arm) -> invitations
    for name, subject, body in invitations:
        for part, text in (("subject", subject), ("body", body)):
            for arm in arms_in(text.encode("utf-8"), arms):
                found.setdefault((part, arm), []).append(name)
    stop = [(part, arm, names) for (part, arm), names in found.items() if distinctive(arm)]
    if stop:
        raise SealError(_mail_refusal(stop))
    return [f"{names[0]}: its {part} contains {arm!r}, an arm id that is also an ordinary "
            f"word or short{_others(names, 'invitation')}; check that the {part} of study."
            "toml's [email] does not name the arm" for (part, arm), names in found.items()]


def _mail_refusal(stop: list[tuple[str, str, list[str]]]) -> str:
    lines = [f"{names[0]}: its {part} holds arm id {arm!r}{_others(names, 'invitation')}"
             for part, arm, names in stop]
    return ("; ".join(lines) + ": every rater would find an arm id in their invitation, so "
            "nothing was written. Remove the arm id from the subject or body of [email] in "
            "study.toml (or the title it quotes), then generate again")


def _others(names: list[str], kind: str) -> str:
    """`` (and 2 other invitations)`` when more than one holds it."""
    more = len(names) - 1
    return f" (and {more} other {kind}{'s' if more > 1 else ''})" if more else ""


def _refusal(leaks: list[Leak]) -> str:
    by_part: dict[tuple[str, str], list[str]] = {}
    for k in leaks:
        by_part.setdefault((k.part, k.arm), []).append(k.file)
    lines = []
    for (part, arm), files in by_part.items():
        more = f" (and {len(files) - 1} other pack{'s' if len(files) > 2 else ''})" \
            if len(files) > 1 else ""
        lines.append(f"{files[0]}: {part} holds arm id {arm!r}{more}")
    return ("; ".join(lines) + ": a rater would find an arm id in their pack, so nothing was "
            "written. Find the text of study.toml or the items file that puts it there "
            "(a shown column, the title, a dimension's text), remove the arm id from it, "
            "then generate again")


def _warning(leak: Leak, in_manifest: bool) -> str:
    if in_manifest:
        return (f"{leak.file} contains arm id {leak.arm!r}; the manifest stays with the "
                "coordinator, but check the item ids (they should say nothing about the arm)")
    return (f"{leak.file}: {leak.part} contains {leak.arm!r}, an arm id that is also an "
            "ordinary word or short; check that the spec's texts do not name the arm")


@functools.lru_cache(maxsize=256)
def _tokens(arms: tuple[str, ...]) -> re.Pattern[bytes]:
    """Any of ``arms`` as a whole token, in any (ASCII) case: one pattern, the longest
    id first, so that where several stand at one place the longest is the match."""
    ids = sorted((a.encode("utf-8") for a in arms), key=len, reverse=True)
    return re.compile(b"(?<!" + _EDGE + b")(?:" + b"|".join(map(re.escape, ids)) +
                      b")(?!" + _EDGE + b")", re.IGNORECASE)


def _without_instruction_strings(data: bytes, instructions: str) -> bytes:
    """Shared strings XML without the strings that are verbatim pieces of the instructions."""
    def keep(match: re.Match[bytes]) -> bytes:
        text = html.unescape(_TAG.sub("", match.group(1).decode("utf-8")))
        return b"" if text and text in instructions else match.group(0)
    return _SHARED_STRING.sub(keep, data)


def _parts(path: Path, name: str, overlap: int) -> Iterator[tuple[str, bytes, int]]:
    """A workbook's zip parts one at a time, or a plain file (named ``name``) in blocks:
    (part, bytes, where a match may start).

    Each block comes with the ``overlap`` bytes before it and the byte after it, so a
    token of up to ``overlap - 1`` bytes is whole in some block together with the bytes
    that decide whether it stands alone. A match may not start at the first of the bytes
    before (nothing shows what precedes it; the block before searched it). The manifest
    of a large study never sits in memory at once.
    """
    if not name.endswith(".xlsx"):
        with path.open("rb") as fh:
            tail, block = b"", fh.read(_BLOCK)
            while block:
                after = fh.read(_BLOCK)
                yield name, tail + block + after[:1], 1 if tail else 0
                tail, block = (tail + block)[-overlap:], after
        return
    with zipfile.ZipFile(path) as zf:
        for part in zf.namelist():
            yield part, zf.read(part), 0
