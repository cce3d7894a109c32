"""Returns that could not be read or identified, linked to the packs they stand for.

A returned file refused before it was parsed (damaged, cut off, not a workbook,
encrypted, ...), or whose identity is missing or inconsistent, is identified as no
pack. When there is evidence tying it to packs that were sent, it is *linked* to them
(never identified as them):

* its file name is the file name of a pack that was sent (each pack has its own file
  name), the extension aside: saving in LibreOffice's own format or as an older Excel
  file turns ``pack.xlsx`` into ``pack.ods`` or ``pack.xls``. For a file ``fetch`` saved,
  the name it was attached under counts too: the local name starts with the time
  received, which no pack's name does;
* for ``identity-conflict``: each identity store whose study, pack id and rater id
  name one pack of the manifest.

A file linked to exactly one pack makes that pack "returned, unusable": the rater gets
a reply draft asking for the file again, and no reminder. A file linked to several
packs is named on each of them without saying whose it is. A file linked to none stays
an unknown file; when it could not be read (:func:`unread_stranger`) it may well be a
pack of this study, so it is never called "not a pack of this study": it could not be
read, its rater is unknown, and :func:`unread_note` says how to find who sent it (no
reply is drafted to nobody).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

from ..packs.manifest import PackHead
from .validate import ERROR, LEFT_OUT_BESIDE, FileStatus, Issue, issue

UNREADABLE = frozenset({
    "empty-file", "file-too-large", "encrypted-workbook", "legacy-xls", "ods-file",
    "not-a-workbook", "zipped-workbook", "corrupt-file", "macro-workbook", "zip-bomb",
    "xml-dtd", "strict-ooxml", "unreadable-workbook", "read-aborted",
    "attachment-too-large", "attachment-undecodable"})
"""Codes of a file refused before its identity was read, for a reason the sender can
mend by sending it again (problems on the coordinator's side, such as permissions or a
file changed while collecting, are not among them)."""
UNIDENTIFIED = {"identity-missing": "it carries no identity",
                "identity-conflict": "its identity stores disagree",
                "identity-mismatch": "its identity names a pack not its own"}
"""Codes of a file read whose identity cannot say whose it is, and how to say so."""
REFUSED_AGAIN = frozenset({"spec-hash-mismatch", *UNIDENTIFIED})
"""Codes of a file linked to a pack whose hidden part (identity, spec mark) was
changed: the same file sent again would be refused again, so its rater is asked to
copy their answers into the original workbook, not to attach the file again."""
DETAIL_ROOM = 80
"""Characters an issue's detail keeps (:func:`~.validate.show_value` cuts the rest)."""


def naming_stores(stores: Mapping[str, Mapping[str, str]], packs: Mapping[str, PackHead],
                  study_id: str) -> dict[str, list[str]]:
    """Pack id -> the identity stores that name that pack, each store on its own.

    A store names a pack when its study id is this study's and its pack id and rater id
    are those of one pack in the manifest (``packs``, by pack id).
    """
    out: dict[str, list[str]] = defaultdict(list)
    for store, values in sorted(stores.items()):
        head = packs.get(values.get("pack_id", ""))
        if head is not None and head.rater_id == values.get("rater_id") \
                and values.get("study_id") == study_id:
            out[head.pack_id].append(store)
    return dict(out)


def conflict_detail(key: str, seen: Mapping[str, str], room: int = DETAIL_ROOM) -> str:
    """The detail of an ``identity-conflict`` on ``key``: its values, each with the
    stores holding it, the odd one out first, within ``room`` characters.

    When that is too long, the last (most common) value's stores are called "the
    rest", then the values are shown without their stores, then the values are cut
    shorter and the same tried again: the first value always shows.
    """
    holders: dict[str, list[str]] = defaultdict(list)
    for store, value in sorted(seen.items()):
        holders[value].append(store)
    groups = sorted(holders.items(), key=lambda g: (len(g[1]), g[0]))
    text = ""
    for width in (room, 24, 12, 6):
        for text in _conflict_texts(key, groups, width):
            if len(text) <= room:
                return text
    return text[:room - 3] + "..."


def _conflict_texts(key: str, groups: list[tuple[str, list[str]]], width: int) -> list[str]:
    """The ways :func:`conflict_detail` says it, longest first, values cut to ``width``."""
    shown = [(repr(_cut(value, width)), stores) for value, stores in groups]
    last = len(shown) - 1
    return [f"{key} " + "; ".join(f"{v} in {', '.join(s)}" for v, s in shown),
            f"{key} " + "; ".join(f"{v} in {'the rest' if i == last else ', '.join(s)}"
                                  for i, (v, s) in enumerate(shown)),
            f"{key} " + " vs ".join(v for v, _ in shown)]


def _cut(value: str, width: int) -> str:
    return value if len(value) <= width else value[:max(width - 3, 1)] + "..."


def pack_words(head: PackHead) -> str:
    """A pack as a sentence names it: "R1's pack", "R1's sitting-2 pack"."""
    return f"{head.rater_id}'s {'' if head.sitting == 1 else f'sitting-{head.sitting} '}pack"


def file_link(name: str, issues: Iterable[Issue], by_stores: Mapping[str, list[str]],
              heads: list[PackHead], sent_as: str = "") -> dict[str, Any]:
    """The link fields of a file identified as no pack (:class:`~.validate.FileStatus`
    ``linked``, ``linked_raters``, ``link``), or ``{}`` when it is not linked.

    Parameters
    ----------
    name : str
        The file's name as returned.
    issues : iterable of Issue
        The file's issues: it is linked only when one of its errors is in
        :data:`UNREADABLE` or :data:`UNIDENTIFIED`.
    by_stores : mapping
        From :func:`naming_stores` (empty unless its identity stores disagree).
    heads : list of PackHead
        The packs sent, in manifest order.
    sent_as : str
        The attachment name a file ``fetch`` saved came under ("" for any other file):
        named like a pack so, it is linked as a file of that name would be, although
        its local name starts with the time received.
    """
    codes = [i.code for i in issues if i.severity == ERROR
             and (i.code in UNREADABLE or i.code in UNIDENTIFIED)]
    if not codes:
        return {}
    by_name = packs_named_like(name, heads) or packs_named_like(sent_as, heads)
    linked = [h for h in heads if h in by_name or h.pack_id in by_stores]
    if not linked:
        return {}
    evidence = [f"{' and '.join(by_stores[h.pack_id])} name {pack_words(h)}"
                for h in heads if h.pack_id in by_stores]
    evidence += [f"named like {pack_words(h)}" for h in by_name]
    what = _why_unusable(codes)
    return {"linked": [h.pack_id for h in linked],
            "linked_raters": list(dict.fromkeys(h.rater_id for h in linked)),
            "link": "; ".join([what, *evidence])}


def packs_named_like(name: str, heads: Iterable[PackHead]) -> list[PackHead]:
    """The packs whose file name is ``name``, the extension aside (``pack.ods`` is
    named like ``pack.xlsx``)."""
    stem = PurePath(name).stem
    return [h for h in heads if PurePath(h.file).stem == stem]


def named_like_pack(name: str, heads: Iterable[PackHead]) -> bool:
    """Whether ``name`` is the file name of a pack that was sent, the extension aside."""
    return bool(packs_named_like(name, heads))


UNREAD_WHAT = "could not be read, so its rater is unknown"
"""What a file refused before its identity was read, and linked to no pack, is."""
NOT_READ = frozenset({"file-changed-while-collecting", "symlink-outside-study",
                      "file-unreadable", "not-a-file"})
"""Codes of an entry collect did not read for a reason on the coordinator's side."""
NOT_READ_WHAT = "not read, so its rater is unknown"
"""What such an entry is: whether it is a pack of this study is not known."""


def not_read(f: FileStatus, issues: Iterable[Issue]) -> bool:
    """Whether ``f`` was left unread for a reason in :data:`NOT_READ`: its identity was
    never seen, so it cannot be called "not a pack of this study"."""
    return any(i.file == f.file and i.severity == ERROR and i.code in NOT_READ
               for i in issues)


def unread_count(files: int) -> str:
    """The files :func:`unread_stranger` finds, counted as a summary line says it."""
    whose = "its rater" if files == 1 else "their raters"
    return f"{files:,} file{'s' if files != 1 else ''} that could not be read, {whose} unknown"


def unread_stranger(f: FileStatus, issues: Iterable[Issue]) -> bool:
    """Whether ``f`` could not be read (an error in :data:`UNREADABLE`) and nothing ties
    it to a pack: it may be any rater's return, or none."""
    issues = list(issues)
    if any(i.file == f.file and i.code == LEFT_OUT_BESIDE for i in issues):
        return False  # its sender's return is in: whose it is, is known
    return not f.pack_id and not f.linked and any(
        i.file == f.file and i.severity == ERROR and i.code in UNREADABLE for i in issues)


def unread_note(f: FileStatus) -> str:
    """What the coordinator reads, and does, about a file :func:`unread_stranger` finds:
    the same words on the screen of collect and status and on the Status sheet.

    Its error is written to whoever sent it, but no reply can be drafted to nobody: the
    coordinator finds the sender (the address it came from, when known) and asks them.
    """
    came = ""
    if f.sender:
        whose = f"rater {f.sender_rater}'s address" if f.sender_rater \
            else "the address of no rater"
        came = f" (it came from {f.sender}, {whose})"
    return (f"{UNREAD_WHAT}: find out who sent it{came}, ask them to send the .xlsx "
            "workbook they received, filled in (its error says what went wrong; no reply "
            f"draft is written, as no rater is identified), and remove {_where(f)}")


def unread_from(rater: str, files: Iterable[FileStatus], issues: Iterable[Issue]) -> list[str]:
    """The files from ``rater``'s address that could not be read and that nothing else
    ties to a pack (:func:`unread_stranger`): one of them may be their pack, so a pack
    of theirs not returned is not one that "has not arrived"."""
    mine = [f for f in files if f.sender_rater == rater and not f.pack_id and not f.linked]
    issues = list(issues) if mine else []
    return [f.file for f in mine if unread_stranger(f, issues)]


def unread_from_text(files: list[str]) -> str:
    """What a pack not returned whose rater sent :func:`unread_from` files is, and what
    to do: the words of status, remind and the Status sheet."""
    what = f"a file came from their address, {files[0]}, that" if len(files) == 1 \
        else f"{len(files)} files came from their address, {', '.join(files)}, that"
    return f"{what} could not be read: ask them for the workbook as .xlsx"


def _where(f: FileStatus) -> str:
    """What to remove from the returns: the file, or the saved message it came in."""
    if not f.path:
        return "it from the returns folder"
    if PurePath(f.path).name != f.file:  # an attachment of a saved message
        return f"{f.path}, the saved message it came in"
    return f.path


def beside_used(files: list[FileStatus], issues: Iterable[Issue],
                heads: list[PackHead]) -> list[Issue]:
    """A :data:`~.validate.LEFT_OUT_BESIDE` warning for each file that could not be read
    or identified and is tied to one rater whose every pack it may stand for has a
    return used: linked to that one pack (its name, its identity stores), or, linked to
    none, sent from that rater's address (a cut-off attachment, then the good one).

    Such a file asks nothing of the rater, whose workbook is in: neither "ask them for
    the workbook" nor a reply draft asking for it again would be true.

    Parameters
    ----------
    files : list of FileStatus
        Every file read (its ``warnings`` is counted up for the warning added).
    issues : iterable of Issue
        Their issues.
    heads : list of PackHead
        The packs sent.

    Returns
    -------
    list of Issue
        The warnings to add to the report.
    """
    issues = list(issues)
    used = {f.pack_id: f.file for f in files if f.used}
    copies = {i.file for i in issues if i.code == "duplicate-file"}  # named as copies
    out = []
    for f in files:
        if f.pack_id or f.file in copies or not _unusable_codes(f, issues):
            continue
        packs = [h for h in heads if h.pack_id == sole_link(f)] if f.linked else \
            [h for h in heads if f.sender_rater and h.rater_id == f.sender_rater]
        if not packs or any(h.pack_id not in used for h in packs):
            continue  # a pack of theirs not in: this file may be it
        beside = " and ".join(used[h.pack_id] for h in packs)
        # linked to none: the address it came from is what ties it to the rater
        how = left_out_what(f, issues) + ("" if f.linked else f"; it came from {f.sender}, "
                                          f"rater {f.sender_rater}'s address")
        out.append(issue(LEFT_OUT_BESIDE, file=f.file, rater=packs[0].rater_id,
                         detail=how, beside=beside))
        f.warnings += 1
    return out


def left_out_what(f: FileStatus, issues: Iterable[Issue]) -> str:
    """What a file that could not be read or identified is, in the words collect's line
    for it and its :func:`beside_used` warning share: its link (why it cannot be used,
    and what ties it to a pack), else why it cannot be used.

    A file read whose identity is missing or inconsistent is said to be so, never
    "could not be read": it was read.

    Parameters
    ----------
    f : FileStatus
        A file identified as no pack.
    issues : iterable of Issue
        The report's issues (those of ``f`` are read).
    """
    return f.link or _why_unusable(_unusable_codes(f, issues))


def _unusable_codes(f: FileStatus, issues: Iterable[Issue]) -> list[str]:
    """The codes of ``f``'s errors that leave it unread or unidentified."""
    return [i.code for i in issues if i.file == f.file and i.severity == ERROR
            and (i.code in UNREADABLE or i.code in UNIDENTIFIED)]


def _why_unusable(codes: list[str]) -> str:
    """Why a file with these :func:`_unusable_codes` cannot be used, in a few words."""
    return UNIDENTIFIED.get(codes[0], "could not be read") if codes else "could not be read"


DISOWNED = {
    "rows-from-other-rater": "its rows are another pack's",  # maybe its own other sitting
    "rows-not-this-rater": "its rows are no rater's",
    "rows-unproven": "no row proves it, while another file does",
    "claim-unproven": "no row proves it",
}
"""Codes of a file read whose rows do not prove the pack it claims (so it counts for
nobody), and why, in a few words."""


def disowned(f: FileStatus, issues: Iterable[Issue]) -> str:
    """What a file its rows disown is, in the words of collect's line for it and of
    status: the rater it claims and why it counts for nobody; "" for any other file.

    Such a file is identified as no pack, but it is no stranger's: it claims a pack of
    this study, so "not a pack of this study" would not be true of it.
    """
    found = _disowning(f, issues)
    if found is None:
        return ""
    return f"says it is rater {found.rater}'s, but {DISOWNED[found.code]}: counted for nobody"


def disowned_todo(f: FileStatus, issues: Iterable[Issue]) -> str:
    """What the coordinator does about a file :func:`disowned` names ("" for another):
    a claim nothing proves is asked of the rater it names (no reply goes to them);
    rows of another pack, or of none, are a sender to find."""
    found = _disowning(f, issues)
    if found is None:
        return ""
    ask = (f"ask rater {found.rater} whether they sent it (if they did, ask for the "
           "workbook they received, changed only in the answer cells)"
           if found.code == "claim-unproven"
           else "find out who sent it and ask for their own workbook")
    return f"{disowned(f, [found])} (see the Issues sheet): {ask}"


def claims_on(pack_id: str, issues: Iterable[Issue]) -> list[str]:
    """The files that claim pack ``pack_id`` with no row proving it (``claim-unproven``,
    whose value is the pack claimed): the pack is not returned, but its rater may have
    sent one of them."""
    return list(dict.fromkeys(i.file for i in issues
                              if i.code == "claim-unproven" and i.value == pack_id))


def claimed_todo(rater: str, files: list[str]) -> str:
    """What to do about a pack not returned that ``files`` claim (:func:`claims_on`):
    ask its rater, as each file's own line says; a reminder would tell a rater who sent
    one that it never arrived."""
    what = "a file claims" if len(files) == 1 else f"{len(files)} files claim"
    it = "it" if len(files) == 1 else "them"
    return (f"{what} this pack but no row proves it: ask {rater} whether they sent "
            f"{' or '.join(files)} (if they did, ask for the workbook they received, "
            f"changed only in the answer cells; if not, remove {it} from returns/ and "
            "remind them)")


def _disowning(f: FileStatus, issues: Iterable[Issue]) -> Issue | None:
    """The issue by which ``f``'s rows disown the pack it claims, if any."""
    if f.pack_id:
        return None
    return next((i for i in issues if i.file == f.file and i.code in DISOWNED), None)


def copied_from(f: FileStatus, files: Iterable[FileStatus],
                issues: Iterable[Issue]) -> FileStatus | None:
    """The file read whose exact copy ``f`` is (``duplicate-file``: collect read the
    bytes once), or None when ``f`` is no copy."""
    copies = {i.file for i in issues if i.code == "duplicate-file"}
    if f.file not in copies or not f.sha256:
        return None
    return next((o for o in files if o.sha256 == f.sha256 and o.file not in copies), None)


def refused_again(issues: Iterable[Issue]) -> set[str]:
    """The files with an error in :data:`REFUSED_AGAIN`."""
    return {i.file for i in issues if i.severity == ERROR and i.code in REFUSED_AGAIN}


def sole_link(f: FileStatus) -> str:
    """The one pack an unidentified file is linked to ("" for none or several)."""
    return f.linked[0] if not f.pack_id and len(f.linked) == 1 else ""


def linked_to(files: Iterable[FileStatus], pack_id: str) -> list[FileStatus]:
    """The files identified as no pack but linked to ``pack_id``."""
    return [f for f in files if not f.pack_id and pack_id in f.linked]
