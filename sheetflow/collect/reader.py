"""Read a returned workbook into plain data: identity stores and bounded cell windows.

Runs inside a :class:`~sheetflow.collect.sandbox.Sandbox` child. :func:`open_book`
first runs :func:`~sheetflow.collect.safety.inspect_file` (bytes and zip checks, no
parser, and a scan of every sheet's XML for its extent and its formula cells); only a
file that passes is opened. Then:

- the sheet list, custom document properties and defined names (which hold the
  identity) are parsed straight from ``xl/workbook.xml`` and ``docProps/custom.xml``
  with defusedxml: python-calamine cannot see them, and openpyxl would parse every
  sheet's styles first;
- cell values come from python-calamine, 11-17x faster than openpyxl (EXCEL-FACTS
  finding 10), but only for a sheet whose cells with content all lie within the
  limits: calamine builds a dense grid of the used range and aborts the process on a
  cell at XFD1048576 (finding 1). Any other sheet is read with openpyxl in read-only
  mode, strictly inside the window. A sheet crafted to hide a cell's position from
  the scan (a cell with no ``r`` reference, or with spaces around its ``=``, far
  down) can still make calamine abort; the sandbox then reports that one file as
  ``read-aborted``;
- calamine shows a formula's cached value only, so every cell the scan found a
  ``<f>`` in is replaced by a :class:`~sheetflow.collect.values.Formula` (a typed ``="High"``
  must not pass as ``High``; finding 3).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import io
import re
import zipfile
from collections.abc import Iterable
from itertools import chain, compress, product, repeat
from operator import ne
from pathlib import Path
from typing import IO, Any

import defusedxml.ElementTree as SafeET

from .mailbox import read_member
from .safety import (
    Inspection,
    Limits,
    Problem,
    SheetScan,
    inspect_bytes,
    read_whole,
    sheet_members,
)
from .values import ExcelError, Formula

_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_ATTR = re.compile(rb"\b(t|ref|si)\s*=\s*[\"']([^\"']*)[\"']")
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
CUSTOM_PART = "docProps/custom.xml"  # where openpyxl looks for custom properties too
CORE_PART = "docProps/core.xml"
_LAST_SAVED_BY = "{http://schemas.openxmlformats.org/package/2006/metadata/core-properties}" \
    "lastModifiedBy"
_INT_TYPES = {"i1", "i2", "i4", "i8", "int", "ui1", "ui2", "ui4", "ui8", "uint"}
_FLOAT_TYPES = {"r4", "r8", "decimal"}

Cells = dict[tuple[int, int], Any]


class Book:
    """One inspected workbook, read lazily and only inside windows.

    Attributes
    ----------
    sheets : list of (name, state)
        Sheet names in workbook order with ``visible``/``hidden``/``veryHidden``.
    properties : dict
        Custom document properties, values as text.
    names : dict
        Workbook-level defined names -> their value (string constants unquoted).
    extents : dict
        Sheet name -> (last row, last column) with content, from the inspection.
    hazards : list of Hazard
        What would act if the file were opened in Excel, from the inspection.
    date1904 : bool
        Whether the file counts dates from 1904 (``<workbookPr date1904="1"/>``, as
        Excel for Mac once did): a date-time serial then means a day 1,462 later.
    saved_by : str
        The user name the program that last saved the file wrote (core properties'
        ``lastModifiedBy``; "" when none: a fresh pack carries none).
    comment_parts : tuple of str
        The zip members holding cell comments, from the inspection (none in a pack).
    drawing_parts : tuple of str
        The zip members holding drawings (text boxes, shapes), from the inspection
        (none in a pack).
    header_footers : dict
        Sheet name -> its ``<headerFooter>`` block (None: none), from the inspection.
    """

    def __init__(self, data: bytes, inspection: Inspection, limits: Limits):
        self.data = data  # the file as read once: every part is parsed from these bytes
        self.scans: dict[str, SheetScan] = inspection.sheets
        self.limits = limits
        self.extents = inspection.extents
        self.hazards = inspection.hazards
        self.comment_parts = inspection.comments
        self.drawing_parts = inspection.drawings
        self.header_footers = inspection.header_footers
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
            self.sheets, self.names, self.date1904 = _workbook_part(zf.read("xl/workbook.xml"))
            self.properties = (_custom_properties(zf.read(CUSTOM_PART))
                               if CUSTOM_PART in names else {})
            self.saved_by = _last_saved_by(zf.read(CORE_PART)) if CORE_PART in names else ""
        self._calamine: Any = None
        self._cache: dict[tuple[str, int, int], Cells] = {}
        self._styles: tuple[list[int], dict[int, str]] | None = None
        self._sheet_xml: dict[str, bytes] = {}
        self._style_lookups: dict[str, int] = {}
        self._style_index: dict[str, dict[bytes, int | None]] = {}

    def cells(self, sheet: str, rows: int, cols: int) -> Cells:
        """Non-empty cells of ``sheet`` in rows 1..rows, columns 1..cols.

        Parameters
        ----------
        sheet : str
            The sheet name ({} when there is no such sheet).
        rows, cols : int
            The window; nothing outside it is returned.

        Returns
        -------
        dict
            (row, column) -> value: str, float, bool, datetime/time/timedelta, or
            :class:`~sheetflow.collect.values.Formula`.
        """
        key = (sheet, rows, cols)
        if key not in self._cache:
            self._cache[key] = self._read(sheet, rows, cols) if rows and cols else {}
        return self._cache[key]

    def _read(self, sheet: str, rows: int, cols: int) -> Cells:
        if sheet not in {name for name, _ in self.sheets}:
            return {}
        scan = self.scans.get(sheet)
        if scan is None or not self._fits(scan):
            return _openpyxl_window(io.BytesIO(self.data), sheet, rows, cols)
        out = self._calamine_window(sheet, rows, cols)
        for (r, c), text in scan.errors.items():  # calamine reads them as blank
            if r <= rows and c <= cols:
                out[(r, c)] = ExcelError(text)
        for (r, c), formula in _formulas(scan, rows, cols).items():
            out[(r, c)] = formula
        return out

    def _fits(self, scan: SheetScan) -> bool:
        """Whether calamine's dense grid of this sheet stays small."""
        last_row, last_col = scan.extent
        return last_row <= self.limits.max_rows and last_col <= self.limits.max_columns

    def _calamine_window(self, sheet: str, rows: int, cols: int) -> Cells:
        from python_calamine import CalamineWorkbook

        if self._calamine is None:
            self._calamine = CalamineWorkbook.from_filelike(io.BytesIO(self.data))
        grid = self._calamine.get_sheet_by_name(sheet).to_python(skip_empty_area=False,
                                                                 nrows=rows)
        out = _non_empty(grid, cols)
        if dt.date in set(map(type, out.values())):
            for key, value in out.items():
                if type(value) is dt.date:  # openpyxl gives a datetime at midnight
                    out[key] = dt.datetime(value.year, value.month, value.day)
        return out

    def number_format(self, sheet: str, ref: str) -> str:
        """The number format code of cell ``ref`` (A1) of ``sheet``; "" when it cannot
        be known (no such sheet, no tag for the cell, a cell written without its
        address, a style the styles part does not have).

        Read from the XML for the few cells a message quotes (python-calamine gives no
        formats): a number formatted as a percentage is shown as one (3% for 0.03).
        """
        try:
            ids, codes = self._number_formats()
            style = self._style_of(sheet, ref)
        except (SyntaxError, ValueError, KeyError, zipfile.BadZipFile):
            return ""  # ParseError is a SyntaxError; defusedxml's refusals ValueErrors
        if style is None or not 0 <= style < len(ids):
            return ""
        return codes.get(ids[style], _BUILTIN_FORMATS.get(ids[style], ""))

    def _number_formats(self) -> tuple[list[int], dict[int, str]]:
        """The styles part's cell formats (each one's number format id) and its
        custom number formats (id -> code), read once."""
        if self._styles is None:
            with zipfile.ZipFile(io.BytesIO(self.data)) as zf:
                member = _styles_member(zf)
                self._styles = _number_formats(zf.read(member)) if member else ([], {})
        return self._styles

    def _style_of(self, sheet: str, ref: str) -> int | None:
        """Cell ``ref``'s style index: searched for the first few cells a message
        quotes, then from an index of the whole sheet built once (a return with
        thousands of numbers in the wrong place would otherwise search its XML for
        each: 3 ms apiece on a 500-case pack)."""
        index = self._style_index.get(sheet)
        if index is not None:
            return index.get(ref.encode("ascii"))
        self._style_lookups[sheet] = self._style_lookups.get(sheet, 0) + 1
        if self._style_lookups[sheet] <= _SEARCHED_LOOKUPS:
            return _cell_style(self._sheet_part(sheet), ref)
        index = self._style_index[sheet] = _cell_styles(self._sheet_part(sheet))
        return index.get(ref.encode("ascii"))

    def _sheet_part(self, sheet: str) -> bytes:
        """The XML of ``sheet`` (b"" when there is no such sheet), read once."""
        if sheet not in self._sheet_xml:
            with zipfile.ZipFile(io.BytesIO(self.data)) as zf:
                members = dict(sheet_members(zf, set(zf.namelist())))
                self._sheet_xml[sheet] = zf.read(members[sheet]) if sheet in members else b""
        return self._sheet_xml[sheet]

    def close(self) -> None:
        """Release the calamine reader (the file is never written)."""
        if self._calamine is not None:
            self._calamine.close()
            self._calamine = None


def _non_empty(grid: list[list[Any]], cols: int) -> Cells:
    """(row, column) -> value of the grid's non-empty cells within the first ``cols``.

    Built by C-level iterators, not a loop over the cells: the grid of a 500-case
    pack has some 90,000 of them, and this runs once per file.
    """
    width = {len(row) for row in grid}
    if len(width) != 1:  # ragged rows (not from calamine's dense grid): cell by cell
        return {(r, c): value for r, row in enumerate(grid, 1)
                for c, value in enumerate(row[:cols], 1) if value != ""}
    full = width.pop()
    used = min(full, cols)
    flat = list(chain.from_iterable(grid if used == full else (row[:used] for row in grid)))
    places = _places(len(grid), used)
    # the places may run on past the grid (kept from a longer one): the pairs stop with it
    return dict(compress(zip(places, flat, strict=False), map(ne, flat, repeat(""))))


def _places(rows: int, cols: int) -> Iterable[tuple[int, int]]:
    """(row, column) of each cell of a grid ``cols`` wide, row by row, for at least
    ``rows`` rows (zip them with the grid's cells: the pairs stop with the grid).

    Kept per width while small: the packs of a study have grids of much the same
    size, and making the 30,000 pairs of a 350-case Scoring sheet took 60% of
    building its cells.
    """
    if rows * cols > _PLACES_KEPT:
        return product(range(1, rows + 1), range(1, cols + 1))
    known = _PLACES.get(cols, ())
    if len(known) < rows * cols:
        known = _PLACES[cols] = tuple(product(range(1, rows + 1), range(1, cols + 1)))
    return known


_PLACES: dict[int, tuple[tuple[int, int], ...]] = {}
_PLACES_KEPT = 1 << 18  # pairs kept per width at most (some 16 MB)


def open_book(path: str | Path, limits: Limits | None = None,
              sha256: str | None = None, member: int = -1) -> Book | Problem:
    """Read ``path`` once, inspect its bytes and, when it is safe, open them for bounded
    reading.

    Parameters
    ----------
    path : str or Path
        The returned file (only ever read, and only once).
    limits : Limits, optional
    sha256 : str, optional
        The file's sha256 as the collector recorded it: the bytes read here must have
        it, so the rows recorded under that hash come from those bytes.
    member : int
        For a saved message (``.eml``, ``.mbox``): which of its spreadsheet attachments
        to read (:func:`~sheetflow.collect.mailbox.read_member`), in memory.

    Returns
    -------
    Book or Problem
        The problem (an issue code and detail) when the file must not be parsed.
    """
    limits = limits or Limits()
    data = read_whole(path, limits) if member < 0 else read_member(path, member, limits)
    if isinstance(data, Problem):
        return data
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        return Problem("file-changed-while-collecting",
                       f"sha256 {sha256[:12]}... when listed, "
                       f"{hashlib.sha256(data).hexdigest()[:12]}... when read")
    inspection = inspect_bytes(data, limits)
    if inspection.problem is not None:
        return inspection.problem
    return Book(data, inspection, limits)


# --------------------------------------------------------------------------- parts


def _workbook_part(data: bytes) -> tuple[list[tuple[str, str]], dict[str, str], bool]:
    """Sheets (name, state) in order, the workbook-level defined names, and whether the
    workbook sets the 1904 date system, from one parse of the part."""
    root = SafeET.fromstring(data)
    sheets = [(s.get("name", ""), s.get("state", "visible"))
              for s in root.iter(f"{_MAIN}sheet")]
    names = {}
    for defined in root.iter(f"{_MAIN}definedName"):
        if defined.get("localSheetId") is None:  # sheet-local names are not the identity
            names[defined.get("name", "")] = unquote_constant(defined.text or "")
    found = root.find(f"{_MAIN}workbookPr")
    date1904 = found is not None and found.get("date1904", "").strip().lower() in ("1", "true")
    return sheets, names, date1904


def _custom_properties(data: bytes) -> dict[str, str]:
    """Custom document property name -> value as text (typed values as openpyxl reads them)."""
    out = {}
    for prop in SafeET.fromstring(data):
        if not prop.tag.endswith("property") or len(prop) == 0:
            continue
        value = prop[0]
        kind = value.tag.rsplit("}", 1)[-1]
        out[prop.get("name", "")] = _property_text(kind, value.text or "")
    return out


def _last_saved_by(data: bytes) -> str:
    """The ``lastModifiedBy`` of the core properties part, stripped ("" when absent)."""
    found = SafeET.fromstring(data).find(_LAST_SAVED_BY)
    return (found.text or "").strip()[:200] if found is not None else ""


def _property_text(kind: str, text: str) -> str:
    try:
        if kind in _INT_TYPES:
            return str(int(text))
        if kind in _FLOAT_TYPES:
            number = float(text)  # LibreOffice turns integer properties into floats
            return str(int(number)) if number.is_integer() else str(number)
    except ValueError:
        return text
    if kind == "bool":
        return str(text.strip().lower() in ("true", "1"))
    return text


def unquote_constant(text: str) -> str:
    """A defined name's string constant: ``="EV-01"`` or ``"EV-01"`` -> ``EV-01``."""
    text = text.strip().removeprefix("=")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('""', '"')
    return text


# --------------------------------------------------------------------------- formats

_STYLES_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
# the built-in number formats a file names by id alone (ECMA-376 part 1, 18.8.30)
_BUILTIN_FORMATS = {0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00",
                    9: "0%", 10: "0.00%", 11: "0.00E+00", 49: "@"}
_CELL_START = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c\s")
_TAG_ATTRIBUTE = re.compile(rb"""([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _styles_member(zf: zipfile.ZipFile) -> str:
    """The zip member holding the styles part ("" when the workbook has none)."""
    names = set(zf.namelist())
    rels = "xl/_rels/workbook.xml.rels"
    if rels in names:
        for rel in SafeET.fromstring(zf.read(rels)):
            if rel.get("Type") == _STYLES_TYPE:
                target = rel.get("Target", "")
                member = target.lstrip("/") if target.startswith("/") else "xl/" + target
                return member if member in names else ""
    return "xl/styles.xml" if "xl/styles.xml" in names else ""


def _number_formats(data: bytes) -> tuple[list[int], dict[int, str]]:
    """Each cell format's number format id, in order (-1 when unreadable), and the
    custom number formats, id -> code."""
    root = SafeET.fromstring(data)
    codes = {int(f.get("numFmtId", "")): f.get("formatCode", "")
             for f in root.iter(f"{_MAIN}numFmt") if f.get("numFmtId", "").isdigit()}
    xfs = root.find(f"{_MAIN}cellXfs")
    ids = [int(x.get("numFmtId", "0")) if x.get("numFmtId", "0").isdigit() else -1
           for x in (xfs.findall(f"{_MAIN}xf") if xfs is not None else [])]
    return ids, codes


def _cell_style(xml: bytes, ref: str) -> int | None:
    """The style index of cell ``ref``'s tag in a sheet's XML (0 when it names none);
    None when no tag carries that address as its ``r``."""
    wanted = ref.encode("ascii")
    for quote in (b'"', b"'"):
        needle = b"r=" + quote + wanted + quote
        at = xml.find(needle)
        while at > 0:
            start, end = xml.rfind(b"<", 0, at), xml.find(b">", at)
            tag = xml[start:end] if start >= 0 and end > 0 else b""
            if xml[at - 1:at].isspace() and _CELL_START.match(tag):
                attrs = {m[1]: m[2] or m[3] for m in _TAG_ATTRIBUTE.finditer(tag)}
                if attrs.get(b"r") == wanted:
                    style = attrs.get(b"s", b"0")
                    return int(style) if style.isdigit() else None
            at = xml.find(needle, at + 1)
    return None


def _cell_styles(xml: bytes) -> dict[bytes, int | None]:
    """Address -> style index of every cell tag in a sheet's XML, as
    :func:`_cell_style` finds each (the first tag with an address wins; None for a
    style that is not a number)."""
    out: dict[bytes, int | None] = {}
    for tag in _CELL_TAG.finditer(xml):
        attrs = {m[1]: m[2] or m[3] for m in _TAG_ATTRIBUTE.finditer(tag[1])}
        ref = attrs.get(b"r")
        if ref is not None and ref not in out:
            style = attrs.get(b"s", b"0")
            out[ref] = int(style) if style.isdigit() else None
    return out


_CELL_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c\s([^>]*)>")
_SEARCHED_LOOKUPS = 16


# --------------------------------------------------------------------------- cells


def _formulas(scan: SheetScan, rows: int, cols: int) -> dict[tuple[int, int], Formula]:
    """The scan's formula cells inside the window, as openpyxl would show their text."""
    out = {}
    masters: dict[bytes, tuple[str, tuple[int, int]]] = {}
    for (r, c), (attrs, raw) in scan.formulas.items():
        found = dict(_ATTR.findall(attrs)) if attrs else {}
        if found.get(b"t") == b"shared" and b"si" in found:
            text = _shown(raw)
            if text:
                masters[found[b"si"]] = (text, (r, c))
            elif found[b"si"] in masters:
                text = _translate(*masters[found[b"si"]], (r, c))
            if r <= rows and c <= cols:
                out[(r, c)] = Formula(text)
        elif r <= rows and c <= cols:  # decoded only if a check reads it: most are
            out[(r, c)] = Formula(raw, _shown)  # the pack's own helper formulas
    return out


def _shown(raw: bytes) -> str:
    """A formula's XML text as openpyxl shows it."""
    text = raw.decode("utf-8", "replace")
    return xml_unescape(text) if "&" in text else text


_XML_ENTITIES = (("&quot;", '"'), ("&apos;", "'"), ("&lt;", "<"), ("&gt;", ">"),
                 ("&amp;", "&"))  # "&amp;" last: "&amp;lt;" is the text "&lt;"


def xml_unescape(text: str) -> str:
    """``html.unescape`` of a formula's XML text, by plain replacements when every
    ``&`` starts one of XML's five entities (what Excel and openpyxl write: a 500-case
    pack has some 9,000 formulas, each with quotes)."""
    if text.count("&") != sum(text.count(entity) for entity, _ in _XML_ENTITIES):
        return html.unescape(text)  # character references, HTML names: the full rules
    for entity, char in _XML_ENTITIES:
        text = text.replace(entity, char)
    return text


def _translate(text: str, origin: tuple[int, int], target: tuple[int, int]) -> str:
    """A shared formula's text as it reads in ``target`` (what openpyxl shows)."""
    from openpyxl.formula.translate import Translator
    from openpyxl.utils import get_column_letter

    def ref(cell: tuple[int, int]) -> str:
        return f"{get_column_letter(cell[1])}{cell[0]}"

    translated = Translator("=" + text, origin=ref(origin)).translate_formula(ref(target))
    return translated.removeprefix("=")


def _openpyxl_window(path: str | IO[bytes], sheet: str, rows: int, cols: int) -> Cells:
    """Non-empty cells of rows 1..rows, columns 1..cols (never an unbounded read)."""
    import warnings

    import openpyxl

    warnings.filterwarnings("ignore", module="openpyxl")  # print-area notes etc.
    wb = openpyxl.load_workbook(path, read_only=True, data_only=False, keep_links=False)
    try:
        if sheet not in wb.sheetnames:
            return {}
        out: Cells = {}
        ws = wb[sheet]
        if not hasattr(ws, "iter_rows"):  # a chart sheet has no cells
            return {}
        for r, row in enumerate(ws.iter_rows(min_row=1, max_row=rows, max_col=cols), 1):
            for c, cell in enumerate(row, 1):
                value = _openpyxl_value(cell)
                if value is not None:
                    out[(r, c)] = value
        return out
    finally:
        wb.close()


def _openpyxl_value(cell: Any) -> Any:
    value = getattr(cell, "value", None)
    if value is None or value == "":
        return None
    if getattr(cell, "data_type", None) == "f":
        text = getattr(value, "text", value)  # an ArrayFormula keeps its text there
        return Formula(str(text).removeprefix("="))
    if getattr(cell, "data_type", None) == "e":
        return ExcelError(str(value))
    if isinstance(value, str):
        return decode_escapes(value)
    return value


def decode_escapes(text: str) -> str:
    """Decode OOXML ``_xHHHH_`` escapes, which openpyxl leaves in cell text."""
    if "_x" not in text:
        return text
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
