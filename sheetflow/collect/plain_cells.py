"""Cell values taken from the sheet scan, for sheets written in the plain form.

The scan of :mod:`.safety` visits every cell with content before any parser opens
the file; python-calamine then parsed each sheet's XML a second time for its
values. For a sheet in the form Excel, LibreOffice, openpyxl and xlsxwriter write,
the scan's match of each cell already holds its value, so :func:`plain_window` turns
those matches into exactly the values python-calamine gives and the sheet is parsed
once. The plain form, checked over the whole sheet:

- every cell tag starts ``<c r="``, no tag has a namespace prefix, no cell is an
  error cell (the scan's own fast path), and every cell tag lies inside
  ``<sheetData>``, with no comment, CDATA section or processing instruction in the
  part;
- each cell with content holds one value child and then ends: ``<v>``, an inline
  string's ``<is><t>``, or a formula with at most a cached ``<v>``; no cell address
  is written twice;
- its attributes after ``r`` are at most ``s="N"`` and ``t="…"`` with ``t`` one of
  ``n``, ``s``, ``str``, ``b``, ``inlineStr`` (an inline string written in ``<is>``);
- a number is written as a decimal (``-1.5``, ``2E-3``) and its style's number
  format can show no date or time (no ``d m y h s p`` and no ``/`` in a custom
  format, a built-in format outside 14-22 and 45-47): python-calamine turns those
  into dates, which this module never guesses;
- a text holds no character reference, carriage return or ``_xHHHH_`` escape (the
  places python-calamine versions differ), is valid UTF-8, and every ``&`` starts
  one of XML's five named entities; a shared string is one plain ``<t>``.

Any other sheet gives None and is read by python-calamine as before. A formula
cell's cached value is not read: the reader replaces it with its formula.
"""

from __future__ import annotations

import re
import zipfile
from itertools import compress, repeat
from operator import itemgetter, ne, not_
from typing import Any

import defusedxml.ElementTree as SafeET

SHARED_STRINGS = "xl/sharedStrings.xml"  # where python-calamine reads them
STYLES = "xl/styles.xml"
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
# what python-calamine reads as a date or a duration (calamine's formats.rs)
_DATE_BUILTINS = frozenset({*range(14, 23), 45, 46, 47})
_DATE_SIGNS = re.compile(r"[dmyhspDMYHSP/]")
_NUMBER = rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_NUMBERS = re.compile(rb"(?:" + _NUMBER + rb"(?: " + _NUMBER + rb")*)?")
_ATTRS = re.compile(rb'(?: s="([0-9]{1,9})")?(?: t="(n|s|str|b|inlineStr)")?\s*\Z')
_PLAIN_SI = re.compile(rb'<si><t(?: xml:space="preserve")?>([^<]*)</t></si>|<si><t/></si>')
_ENTITIES = {b"&quot;": b'"', b"&apos;": b"'", b"&lt;": b"<", b"&gt;": b">", b"&amp;": b"&"}
_ENTITY = re.compile(rb"&(?:quot|apos|lt|gt|amp);")
_MARKUP = re.compile(rb"<[!?]")  # a comment, CDATA section, DTD or processing instruction

# the scan's groups (safety._SPACED_VALUE_CELL_REF)
_PRE, _ADDRESS, _COL, _ROW, _POST, _V, _INLINE, _IS, _FORMULA = range(9)
_END = 11

Cells = dict[tuple[int, int], Any]


def plain_sheet(data: bytes) -> bool:
    """Whether a sheet part's markup is in the plain form: every cell tag inside
    ``<sheetData>``, no comment, CDATA section or processing instruction after the
    XML declaration (its cells are checked by :func:`plain_window`).

    Parameters
    ----------
    data : bytes
        The sheet part.
    """
    if _MARKUP.search(data, 1) is not None:
        return False
    start, end = data.find(b"<sheetData>"), data.rfind(b"</sheetData>")
    if not 0 <= start < end:
        return b"<c " not in data
    return data.find(b"<c ", 0, start) < 0 and data.find(b"<c ", end) < 0


class Context:
    """What values need from the rest of the workbook: shared strings, number styles.

    Parameters
    ----------
    zf : zipfile.ZipFile
        The workbook, already inspected.
    """

    def __init__(self, zf: zipfile.ZipFile):
        names = set(zf.namelist())
        self.strings = (_shared_strings(zf.read(SHARED_STRINGS))
                        if SHARED_STRINGS in names else [])
        self.number_styles = _number_styles(zf.read(STYLES)) if STYLES in names else None


def _shared_strings(data: bytes) -> list[str] | None:
    """The shared strings in order, or None unless each is one plain ``<t>``."""
    if _MARKUP.search(data, 1) is not None:
        return None
    found = _PLAIN_SI.findall(data)
    if len(found) != data.count(b"<si>") or data.count(b"<si") != data.count(b"<si>"):
        return None
    texts = [_text(raw) for raw in found]
    return None if None in texts else texts


def _number_styles(data: bytes) -> frozenset[bytes] | None:
    """The style indexes (as written in ``s="N"``) whose numbers python-calamine gives
    as plain numbers; None when the styles part cannot be read."""
    try:
        root = SafeET.fromstring(data)
    except (SafeET.ParseError, ValueError):  # leave the sheets to python-calamine
        return None
    custom = {}
    for fmt in root.iter(f"{_MAIN}numFmt"):
        custom[fmt.get("numFmtId", "")] = fmt.get("formatCode", "")
    xfs = root.find(f"{_MAIN}cellXfs")
    plain = set()
    for index, xf in enumerate(xfs if xfs is not None else ()):
        if _number_format(xf.get("numFmtId"), custom):
            plain.add(str(index).encode())
    return frozenset(plain)


def _number_format(fmt_id: str | None, custom: dict[str, str]) -> bool:
    """Whether a number format shows neither a date nor a time for python-calamine."""
    if fmt_id is None:
        return True
    if fmt_id in custom:
        return _DATE_SIGNS.search(custom[fmt_id]) is None
    return fmt_id.isdigit() and int(fmt_id) not in _DATE_BUILTINS


def _text(raw: bytes) -> str | None:
    """A text's XML content as python-calamine gives it, or None outside the plain form."""
    if b"\r" in raw or b"&#" in raw or b"_x" in raw:
        return None
    if b"&" in raw:
        ampersands = raw.count(b"&")
        raw, replaced = _ENTITY.subn(_entity, raw)
        if replaced != ampersands:  # an "&" that starts no named entity
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _entity(found: re.Match[bytes]) -> bytes:
    return _ENTITIES[found[0]]


def plain_window(matches: list[tuple[bytes, ...]], context: Context, rows: int,
                 cols: int) -> Cells | None:
    """Non-empty cells of rows 1..rows, columns 1..cols, as python-calamine reads them,
    formula cells left out (the reader puts each formula in its place).

    The cells are read a kind at a time (inline strings, numbers, shared strings...)
    with C-level maps, not one by one: a 500-case answer sheet has some 40,000.

    Parameters
    ----------
    matches : list of tuple
        The scan's matches of a sheet :func:`plain_sheet` accepted.
    context : Context
    rows, cols : int
        The window.

    Returns
    -------
    dict or None
        (row, column) -> str, float or bool; None when some cell of the sheet is
        outside the plain form.
    """
    if not all(map(itemgetter(_END), matches)) or any(map(itemgetter(_PRE), matches)):
        return None
    if len(set(map(itemgetter(_ADDRESS), matches))) != len(matches):
        return None  # an address written twice
    kept = list(map(not_, map(itemgetter(_FORMULA), matches)))
    values = list(compress(matches, kept))
    columns = {c: _column_of(c) for c in set(map(itemgetter(_COL), values))}
    places = list(zip(map(int, map(itemgetter(_ROW), values)),
                      map(columns.__getitem__, map(itemgetter(_COL), values)), strict=True))
    kinds = {}
    for attrs in set(map(itemgetter(_POST), values)):
        found = _ATTRS.match(attrs)
        if found is None:
            return None
        kinds[attrs] = _kind(*found.groups(), context)
    of_cell = list(map(kinds.__getitem__, map(itemgetter(_POST), values)))
    out: Cells = {}
    for kind in set(of_cell):
        chosen = list(map(kind.__eq__, of_cell))
        read = _READ[kind](list(compress(values, chosen)), context)
        if read is None:
            return None
        out.update(compress(zip(compress(places, chosen), read, strict=True),
                            map(ne, read, repeat(""))))
    if max(map(itemgetter(0), out), default=0) > rows or \
            max(map(itemgetter(1), out), default=0) > cols:
        out = {place: value for place, value in out.items()
               if place[0] <= rows and place[1] <= cols}
    return out


def _kind(style: bytes | None, typ: bytes | None, context: Context) -> str:
    """How a cell with these attributes is read (a key of :data:`_READ`)."""
    if typ is None or typ == b"n":
        styles = context.number_styles
        plain = style is None or (styles is not None and style in styles)
        return "number" if plain else "maybe date"
    return typ.decode("ascii")


def _inline(cells: list[tuple[bytes, ...]], _: Context) -> list[str] | None:
    """Inline strings. One written with a <v> instead of <is> is not plain: newer
    python-calamine reads it as empty, older versions refuse the sheet."""
    if not all(map(itemgetter(_INLINE), cells)):
        return None
    return _texts(list(map(itemgetter(_IS), cells)))


def _strings(cells: list[tuple[bytes, ...]], _: Context) -> list[str] | None:
    """``t="str"`` cells: the <v> text."""
    if any(map(itemgetter(_INLINE), cells)):
        return None
    return _texts(list(map(itemgetter(_V), cells)))


def _numbers(cells: list[tuple[bytes, ...]], _: Context) -> list[Any] | None:
    """Numbers in a style that shows no date: floats ("" for an empty <v>)."""
    raws = list(map(itemgetter(_V), cells))
    if any(map(itemgetter(_INLINE), cells)) or \
            _NUMBERS.fullmatch(b" ".join(filter(None, raws))) is None:
        return None
    return list(map(_float, raws))


def _float(raw: bytes) -> Any:
    return float(raw) if raw else ""


def _maybe_dates(cells: list[tuple[bytes, ...]], _: Context) -> list[str] | None:
    """Numbers in a style python-calamine may read as a date: plain only when blank."""
    if any(map(itemgetter(_INLINE), cells)) or any(map(itemgetter(_V), cells)):
        return None
    return [""] * len(cells)


def _bools(cells: list[tuple[bytes, ...]], _: Context) -> list[Any] | None:
    raws = list(map(itemgetter(_V), cells))
    if any(map(itemgetter(_INLINE), cells)) or not set(raws) <= {b"", b"0", b"1"}:
        return None
    return [raw == b"1" if raw else "" for raw in raws]


def _shared(cells: list[tuple[bytes, ...]], context: Context) -> list[str] | None:
    raws = list(map(itemgetter(_V), cells))
    if any(map(itemgetter(_INLINE), cells)):
        return None
    indexes = list(filter(None, raws))
    if not indexes:
        return [""] * len(raws)
    strings = context.strings
    if strings is None or not b"".join(indexes).isdigit():
        return None
    if max(map(int, indexes)) >= len(strings):
        return None
    return [strings[int(raw)] if raw else "" for raw in raws]


_READ = {"inlineStr": _inline, "str": _strings, "number": _numbers,
         "maybe date": _maybe_dates, "b": _bools, "s": _shared}


def _texts(raws: list[bytes]) -> list[str] | None:
    """Many texts' XML content at once (joined by NUL, which no XML text holds)."""
    joined = b"\0".join(raws)
    if joined.count(b"\0") != len(raws) - 1:
        return None
    text = _text(joined)
    return None if text is None else text.split("\0")


def _column_of(letters: bytes) -> int:
    """Column number of ``b\"AB\"``."""
    number = 0
    for char in letters:
        number = number * 26 + char - 64
    return number
