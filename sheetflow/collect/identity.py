"""The three identity stores of a returned workbook: document properties, defined
names and the hidden identity sheet, read as plain text for the pack check.

A return is attributed by the rows it proves, not by what these claim; they are
compared with each other and with the pack they name (:mod:`.file_check`).
"""

from __future__ import annotations

from collections.abc import Collection

from ..packs.manifest import PackHead
from ..workbook import layout as L
from .reader import Book, Cells
from .safety import Limits
from .validate import show_value


def identity_sheet(book: Book, limits: Limits) -> Cells:
    """The identity sheet's four columns, down to its last row with content."""
    return book.cells(L.IDENTITY_SHEET, identity_rows(book, limits), 4)


def identity_rows(book: Book, limits: Limits) -> int:
    """The identity sheet's last row with content, within the limits."""
    return min(book.extents.get(L.IDENTITY_SHEET, (0, 0))[0], limits.max_rows)


def identity_stores(book: Book, limits: Limits) -> dict[str, dict[str, str]]:
    """Identity key -> value from each of the three stores (empty dict when absent)."""
    props = {k: book.properties[L.identity_property(k)] for k in L.READ_IDENTITY_KEYS
             if L.identity_property(k) in book.properties}
    names = {k: book.names[L.identity_name(k)] for k in L.READ_IDENTITY_KEYS
             if L.identity_name(k) in book.names}
    sheet: dict[str, str] = {}
    cells = identity_sheet(book, limits)
    for r in range(1, len(L.IDENTITY_KEYS) + 1):
        key, value = cells.get((r, 1)), cells.get((r, 2))
        if key in L.READ_IDENTITY_KEYS and value is not None:
            sheet[str(key)] = show_value(value)
    return {"document properties": props, "defined names": names,
            f"sheet {L.IDENTITY_SHEET}": sheet}


def pack_mismatch(identity: dict[str, str], stores: dict[str, dict[str, str]],
                  head: PackHead | None, raters: Collection[str]) -> dict[str, str] | None:
    """How an identity whose stores agree names a rater of this study and a pack that
    is not theirs, or the pack but another sitting: the ``identity-mismatch`` fields
    (its detail, and the identity sheet's cell of the key, when that sheet holds it);
    None when it does not.

    Parameters
    ----------
    identity : dict of str to str
        The identity the stores agree on.
    stores : dict
        The stores it was read from (:func:`identity_stores`, those present).
    head : PackHead or None
        The pack its ``pack_id`` names (None: no pack of the manifest).
    raters : collection of str
        The rater ids of the manifest's packs.
    """
    rater, pack = identity.get("rater_id", ""), identity.get("pack_id", "")
    sitting = identity.get("sitting")
    if rater not in raters:
        return None  # no rater of this study: unknown-rater says so
    if head is None:
        key, detail = "pack_id", f"names rater {rater} but pack {_cut(pack)!r}, no pack " \
            "of this study"
    elif head.rater_id != rater:
        key, detail = "rater_id", f"names rater {rater} but pack {pack}, which is rater " \
            f"{head.rater_id}'s"
    elif sitting is not None and not _same_number(sitting, head.sitting):
        key, detail = "sitting", f"sitting {_cut(sitting)!r}, but pack {pack} is sitting " \
            f"{head.sitting}"
    else:
        return None
    held = key in stores.get(f"sheet {L.IDENTITY_SHEET}", {})
    where = {"sheet": L.IDENTITY_SHEET, "cell": f"B{L.IDENTITY_KEYS.index(key) + 1}"}
    return {"detail": detail, **(where if held else {})}


def pack_names(head: PackHead, rater: str, sitting: int) -> dict[str, str]:
    """The ``detail`` (rater ``rater``'s pack of ``sitting``) and ``claimed`` (``head``)
    fields of a message setting two packs against each other.

    By rater, and by sitting too when both are one rater's: "rater owner-01's workbook,
    not owner-01's" would say of a first sitting sent back as the second that a
    rater's rows are not their own.
    """
    if rater != head.rater_id:
        return {"detail": rater, "claimed": head.rater_id}
    return {"detail": f"{rater} (sitting {sitting})",
            "claimed": f"{rater} (sitting {head.sitting})"}


def _same_number(text: str, number: int) -> bool:
    """Whether ``text`` is ``number`` written as a number ("1" or "1.0": a spreadsheet
    app may store the sitting as a number)."""
    try:
        return float(text) == number
    except ValueError:
        return False


def _cut(value: str, width: int = 24) -> str:
    return value if len(value) <= width else value[:width - 3] + "..."
