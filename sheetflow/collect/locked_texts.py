"""What a changed locked text was: its role and its text as sent, for a rater's reply.

A ``locked-text-changed`` issue names the first cell of a shown field (a prompt, a
response, a shown column) whose text no longer hashes to the one generate wrote. The
rater is told which field it is ("Response A of case 1 (K7QF)") and, when it is short,
the text to put back: collect accepts the file once the text is exactly as sent (the
same digest), so restoring it is enough. The text is read from the pack in ``packs/``
(the workbook the reply attaches) and quoted only when it hashes to the manifest's
digest. Nothing here writes or prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SheetflowError
from ..packs.manifest import PackHead, open_manifest
from ..workbook import layout as L
from .file_check import split_cell
from .locked_check import show_full
from .reader import open_book
from .safety import Problem
from .validate import Issue

CODE = "locked-text-changed"


@dataclass(frozen=True)
class LockedText:
    """One shown field whose text the rater changed.

    Attributes
    ----------
    role : str
        What it is, as the rater reads it: ``"Response A of case 1 (K7QF)"``.
    cells : tuple of str
        Its cells (a long text runs over several).
    text : str or None
        The text as sent; None when it could not be read as sent from the pack.
    """

    role: str
    cells: tuple[str, ...]
    text: str | None


def locked_texts(root: Path, head: PackHead, issues: Iterable[Issue]
                 ) -> dict[tuple[str, str], LockedText]:
    """(sheet, cell) of each ``locked-text-changed`` issue of ``issues`` -> its field.

    An issue whose cell is not where the pack has the field (rows were inserted above
    it) is left out: its role is not known for sure.
    """
    wanted = {(i.sheet, i.cell, i.case) for i in issues if i.code == CODE}
    if not wanted:
        return {}
    fields = _fields(root, head, wanted)
    texts = _texts(root / L.PACKS_DIR / head.file, head, fields.values())
    return {key: LockedText(role, tuple(locked["cells"]), texts.get(key))
            for key, (role, locked) in fields.items()}


def _fields(root: Path, head: PackHead, wanted: set[tuple[str, str, str]]
            ) -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """(sheet, first cell) -> (role, the manifest's locked field) for ``wanted``."""
    try:
        manifest = open_manifest(root)
    except SheetflowError:
        return {}
    try:
        entry = manifest.pack(head)
    except SheetflowError:
        return {}
    finally:
        manifest.close()
    found = {}
    for card in entry.get("cards", []):
        case = L.case_name(card)
        for locked in card["locked"] + [x for r in card["rows"] for x in r["locked"]]:
            key = (locked.get("sheet", L.SCORING_SHEET), locked["cells"][0])
            if (*key, case) in wanted:
                found[key] = (f"{locked['label']} of case {case}", locked)
    return found


def _texts(pack: Path, head: PackHead, fields: Iterable[tuple[str, dict[str, Any]]]
           ) -> dict[tuple[str, str], str]:
    """(sheet, first cell) -> the field's text in ``pack``, for the fields whose text
    there hashes to the manifest's digest (what collect accepts back). The pack is read
    as a return is (:func:`.reader.open_book`), and only when its bytes are those
    generate wrote."""
    fields = list(fields)
    if not fields:
        return {}
    try:
        book = open_book(pack, sha256=head.sha256 or None)
    except OSError:
        return {}  # no text quoted: the reply says where to copy it from
    if isinstance(book, Problem):
        return {}
    try:
        out = {}
        for _, locked in fields:
            sheet = locked.get("sheet", L.SCORING_SHEET)
            places = [split_cell(ref) for ref in locked["cells"]]
            cells = book.cells(sheet, max(r for r, _ in places), max(c for _, c in places))
            text = "".join(show_full(cells.get(place)) for place in places)
            if L.text_sha256(text) == locked["sha256"]:
                out[(sheet, locked["cells"][0])] = text
        return out
    finally:
        book.close()
