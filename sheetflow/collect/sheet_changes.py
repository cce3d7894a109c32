"""Sheets a rater added, deleted, renamed, hid or showed, and comments on cells: named.

sheetflow reads the answer cells of the Scoring sheet and nothing else, so what a
rater puts elsewhere would be lost without a word: a sheet of their own ("My notes"),
a comment (note) on a cell explaining a score. Each is named, as a warning of the file
(the ratings are still used):

- ``sheet-added``: a sheet the workbook as sent did not have, holding cells with
  content (an empty one loses nothing and is not named). A copy of the Scoring sheet
  is ``sheet-duplicated`` and the Scoring sheet found under another name
  ``sheet-renamed`` already: neither is named twice;
- ``sheet-renamed`` for the Instructions or More instructions sheet found under another
  name: the pack is read (only then) and a sheet holding all of its cells is the one
  renamed; ``sheet-deleted`` when it is nowhere (the identity sheet deleted is
  ``identity-partial``, the Scoring sheet ``sheet-missing``);
- ``sheet-visibility-changed``: a sheet of the pack hidden, or one of its hidden
  sheets shown;
- ``cell-comment``: each comment on a cell of any sheet, with its text.

All of it costs almost nothing on the usual return: the sheet list is read with the
workbook already, and whether comments exist at all is known from the zip member
names the safety checks listed (:attr:`.safety.Inspection.comments`); only a file with
comments has those parts read.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import defusedxml.ElementTree as SafeET

from ..packs.manifest import PackHead
from ..workbook import layout as L
from .outside_answers import open_pack
from .reader import Book
from .safety import column_number, sheet_members
from .validate import cell_name, show_value

SHEET_ADDED = "sheet-added"
SHEET_DELETED = "sheet-deleted"
SHEET_RENAMED = "sheet-renamed"
SHEET_VISIBILITY = "sheet-visibility-changed"
CELL_COMMENT = "cell-comment"
SHOWN = 20
"""Comments named one by one in a file; the rest are counted in one line."""

_VISIBLE = "visible"
# every sheet generate writes, with its state there (the lists sheet only when some
# choice list is too long to write into its rule)
_PACK_SHEETS = {L.INSTRUCTIONS_SHEET: _VISIBLE, L.SCORING_SHEET: _VISIBLE,
                L.MORE_SHEET: _VISIBLE, L.LISTS_SHEET: "hidden",
                L.IDENTITY_SHEET: "veryHidden"}
# the pack's sheets whose loss no other check names (the Scoring sheet's is
# sheet-missing, the identity sheet's identity-partial; whether a pack had a lists
# sheet its manifest does not say)
_DELETABLE = (L.INSTRUCTIONS_SHEET, L.MORE_SHEET)
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_COMMENTS_TYPE = "/comments"
_THREADED = "[Threaded comment]"  # Excel's text for older readers of a threaded comment
_THREADED_TEXT = "\nComment:\n"
_REF = re.compile(r"([A-Z]{1,3})([0-9]{1,7})")

Found = tuple[str, tuple[int, int], str]
"""(sheet, (row, column) of its cell, (0, 0) when it has none, text) of one comment or
one shape holding text."""


class FileChecker(Protocol):
    """What the checks need of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    job: Any  # the file's job: ``study_dir``, ``limits``
    head: PackHead
    book: Book
    sheet: str  # the Scoring sheet's name in the return
    copies: set[str]  # the sheets named as copies of the Scoring sheet
    renamed: dict[str, str]  # pack sheet -> its name in the return (filled in here)

    def add(self, code: str, **fields: Any) -> None: ...


# --------------------------------------------------------------------------- sheets


def check_sheets(checker: FileChecker) -> None:
    """Name the sheets added, deleted, renamed, hidden or shown since the workbook was
    sent, as warnings of ``checker``'s file; record the renamed ones in
    ``checker.renamed``."""
    states = dict(checker.book.sheets)
    known = {*_PACK_SHEETS, checker.sheet, *checker.copies}
    added = [name for name in states if name not in known]
    gone = [name for name in _DELETABLE if name not in states]
    if gone and added:  # rare: a sheet of the pack may be there under another name
        _find_renamed(checker, gone, added)
        added = [name for name in added if name not in checker.renamed.values()]
        gone = [name for name in gone if name not in checker.renamed]
    for name in added:
        _report_added(checker, name)
    for name in gone:
        checker.add(SHEET_DELETED, sheet=name)
    for name, was in _PACK_SHEETS.items():
        now = states.get(checker.renamed.get(name, checker.sheet if name == L.SCORING_SHEET
                                             else name))
        if now is not None and (now == _VISIBLE) != (was == _VISIBLE):
            checker.add(SHEET_VISIBILITY, sheet=name,
                        detail="visible" if was == _VISIBLE else "hidden",
                        what="hidden" if was == _VISIBLE else "visible")


def _report_added(checker: FileChecker, name: str) -> None:
    """One warning for sheet ``name``, added by the rater, when it holds anything."""
    scan = checker.book.scans.get(name)
    count = scan.cells if scan is not None else 0
    if count:
        checker.add(SHEET_ADDED, sheet=name,
                    detail=f"{count} cell{'s' if count != 1 else ''}")


def _find_renamed(checker: FileChecker, gone: list[str], added: list[str]) -> None:
    """Record as renamed each sheet of ``gone`` whose every cell in the pack is, with
    the same value, on one sheet of ``added`` (whatever the rater typed beside)."""
    pack = open_pack(checker)
    if isinstance(pack, str):
        return  # cannot be told: each is named as added or deleted, both true
    try:
        for name in gone:
            rows, cols = pack.extents.get(name, (0, 0))
            before = pack.cells(name, rows, cols)
            for here in added:
                now = checker.book.cells(here, rows, cols)
                if before and here not in checker.renamed.values() and \
                        all(now.get(place) == value for place, value in before.items()):
                    checker.renamed[name] = here
                    checker.add(SHEET_RENAMED, sheet=name, detail=here)
                    break
    finally:
        pack.close()


# --------------------------------------------------------------------------- comments


def check_comments(checker: FileChecker) -> None:
    """Name each comment on a cell of the workbook, with its text, as a warning of
    ``checker``'s file (the first :data:`SHOWN` one by one, then one line)."""
    if not checker.book.comment_parts:
        return  # the usual return: no comment anywhere
    name_found(checker, CELL_COMMENT, read_comments, _COMMENT_WORDS)


class Wording(NamedTuple):
    """The messages of :func:`name_found`, as :meth:`str.format` templates: ``{sheet}``,
    ``{cell}`` ("" when none), ``{where}`` ("at cell B4 of sheet 'S'", or "on sheet
    'S'" without a cell), ``{text}`` (as shown), ``{count}``, ``{shown}``
    (:data:`SHOWN`), ``{error}`` (the kind of error)."""

    unreadable: str
    """The one warning when the parts cannot be read."""
    one: str
    """Naming one thing found, with its text."""
    more: str
    """Counting those past the first :data:`SHOWN`, from where the first of them is."""


_COMMENT_WORDS = Wording(
    unreadable="The workbook holds comments on cells that could not be read ({error}); "
               "open it to read them",
    one="Cell {cell} of sheet '{sheet}' has a comment: '{text}'",
    more="From cell {cell} of sheet '{sheet}' on, {count} more cells have a comment; "
         "only the first {shown} are named one by one")


def name_found(checker: FileChecker, code: str, read: Callable[[Book], list[Found]],
               words: Wording) -> None:
    """Name what ``read`` finds on the sheets of ``checker``'s book (comments, text in
    drawings) as ``code`` warnings of its file: the first :data:`SHOWN` one by one,
    then one line counting the rest.

    Parameters
    ----------
    checker : FileChecker
        The file's checker, whose ``add`` records each warning.
    code : str
        The warnings' code.
    read : callable
        (sheet, (row, column), text) of each thing found, in the order named; it may
        raise what a damaged part raises (SyntaxError, ValueError, KeyError,
        zipfile.BadZipFile).
    words : Wording
        The messages.
    """
    try:
        found = read(checker.book)
    except (SyntaxError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        # ParseError is a SyntaxError; defusedxml's refusals are ValueErrors
        checker.add(code, what=words.unreadable.format(error=type(exc).__name__))
        return
    for sheet, place, text in found[:SHOWN]:
        checker.add(code, sheet=sheet, cell=_cell(place), value=text,
                    what=_worded(words.one, sheet, place, text=show_value(text)))
    rest = found[SHOWN:]
    if rest:
        sheet, place, _ = rest[0]
        checker.add(code, sheet=sheet, cell=_cell(place),
                    what=_worded(words.more, sheet, place, count=len(rest)))


def _worded(template: str, sheet: str, place: tuple[int, int], **fields: Any) -> str:
    """``template`` filled in for what was found at ``place`` of ``sheet``."""
    cell = _cell(place)
    where = f"at cell {cell} of sheet '{sheet}'" if cell else f"on sheet '{sheet}'"
    return template.format(sheet=sheet, cell=cell, where=where, shown=SHOWN, **fields)


def _cell(place: tuple[int, int]) -> str:
    """The name of the cell at ``place``; "" for (0, 0), a thing placed on no cell."""
    return cell_name(*place) if place != (0, 0) else ""


def read_comments(book: Book) -> list[Found]:
    """(sheet, (row, column), text) of each comment on a cell, in sheet order then
    reading order; a comment part no sheet refers to is shown nowhere and left out.

    Raises
    ------
    SyntaxError, ValueError, KeyError, zipfile.BadZipFile
        When a part cannot be read.
    """
    return read_related(book, _COMMENTS_TYPE, _comments)


def read_related(book: Book, kind: str,
                 parse: Callable[[bytes], list[tuple[tuple[int, int], str]]],
                 ) -> list[Found]:
    """(sheet, (row, column), text) of what ``parse`` finds in each part of type
    ``kind`` a sheet relates to (its comments, its drawing), in sheet order then
    reading order; a part no sheet refers to is shown nowhere and left out.

    Raises
    ------
    SyntaxError, ValueError, KeyError, zipfile.BadZipFile
        When a part cannot be read.
    """
    found = []
    with zipfile.ZipFile(io.BytesIO(book.data)) as zf:
        names = set(zf.namelist())
        for sheet, member in sheet_members(zf, names):
            for part in related_parts(zf, names, member, kind):
                found += sorted((sheet, place, text) for place, text in parse(zf.read(part)))
    return found


def related_parts(zf: zipfile.ZipFile, names: set[str], member: str, kind: str) -> list[str]:
    """The parts the relationships of sheet part ``member`` name whose type ends with
    ``kind`` (``"/comments"``, ``"/drawing"``), those the zip holds."""
    folder, _, base = member.rpartition("/")
    rels = f"{folder}/_rels/{base}.rels"
    if rels not in names:
        return []
    parts = []
    for rel in SafeET.fromstring(zf.read(rels)):
        if rel.get("Type", "").endswith(kind):
            target = rel.get("Target", "")
            part = target.lstrip("/") if target.startswith("/") else \
                posixpath.normpath(posixpath.join(folder, target))
            if part in names:
                parts.append(part)
    return parts


def _comments(data: bytes) -> list[tuple[tuple[int, int], str]]:
    """((row, column), text) of each comment of a comments part that has a cell."""
    out = []
    for comment in SafeET.fromstring(data).iter(f"{_MAIN}comment"):
        ref = _REF.fullmatch(comment.get("ref", ""))
        if ref is None:
            continue  # no cell to show it on: Excel shows it nowhere either
        place = int(ref[2]), column_number(ref[1])
        text = comment.find(f"{_MAIN}text")
        runs = [] if text is None else \
            text.findall(f"{_MAIN}t") + text.findall(f"{_MAIN}r/{_MAIN}t")
        out.append((place, _plain("".join(t.text or "" for t in runs))))
    return out


def _plain(text: str) -> str:
    """A comment's text on one line; of an Excel threaded comment, what the rater
    wrote (not the notice Excel puts first for older programs)."""
    if text.startswith(_THREADED) and _THREADED_TEXT in text:
        text = text.split(_THREADED_TEXT, 1)[1]
    return " ".join(text.split())
