"""Checks on a returned file before any spreadsheet parser sees it.

The first of two defences, both measured in EXCEL-FACTS.md (R4); the second is
:mod:`sheetflow.collect.sandbox`:

1. :func:`inspect_file` looks at the bytes and the zip directory only (plus a bounded
   decompression of each XML part) and names what is wrong: empty, an OLE container
   (encrypted .xlsx or .xls), not a zip (CSV, HTML), truncated, ODS, macros, too many
   or too large parts, a compression ratio typical of zip bombs, or a DTD or entity
   declaration. It also scans each sheet's XML, without a parser, for the extent of
   its cells (content far outside the area sheetflow reads; a bound for readers that
   build a dense grid) and for its formula cells. What would act if the file were
   opened in Excel (a formula calling WEBSERVICE, a link to another workbook, a data
   connection, an embedded object) is listed by :mod:`.hazards` from the same pass.
2. :class:`~sheetflow.collect.sandbox.Sandbox` runs a parser in child processes with
   an address-space limit and a timeout. python-calamine aborts the whole process
   (SIGABRT) on a cell at XFD1048576 and openpyxl can exhaust memory; in the sandbox
   that costs one file, not the batch.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path

import defusedxml.ElementTree as SafeET

from .hazards import Hazard, name_hazards, part_hazards, sheet_hazards

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"
_ENCRYPTED_MARKERS = ("EncryptionInfo".encode("utf-16-le"), "EncryptedPackage".encode("utf-16-le"))
_DTD = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_NS = rb"(?:[A-Za-z_][\w.-]*:)?"  # an optional namespace prefix
_Q = rb"[\"']"  # XML attributes may be single- or double-quoted
# a cell with content (not a self-closing, style-only <c r="X9" s="1"/>); groups: column
# letters, row digits, then for a first child "f" (not "v"/"is"): "f", its attributes
# and text (a group for "v"/"is" would be 20,000 more objects to make on a big sheet)
# (the rest of the start tag is taken whole, "*+": a lazy "*?" could only stop at
# the same first ">", trying every character on the way)
_CELL_TAIL = (rb"c\b[^>]*?\br=" + _Q + rb"([A-Z]{1,3})([0-9]{1,7})" + _Q
              + rb"[^>]*+(?<!/)>\s*<" + _NS
              + rb"(?:(?:v|is)\b|(f)\b([^>]*?)(?:/>|>(.*?)</" + _NS + rb"f>))")
_CELL_REF = re.compile(rb"<" + _NS + _CELL_TAIL, re.DOTALL)
# the same for a sheet without ":c" anywhere (no prefixed cell tag can match): its
# literal start "<c" lets the search skip ahead (a third faster on a 5 MB sheet)
_PLAIN_CELL_REF = re.compile(rb"<" + _CELL_TAIL, re.DOTALL)
# the same for a sheet whose every "<c" cell tag starts '<c r="' (what Excel,
# LibreOffice, openpyxl and xlsxwriter write; see _ODD_CELL): the same matches, as
# "[^>]*?" must take the space anyway, found a quarter faster from the longer literal
_SPACED_CELL_REF = re.compile(rb"<c " + _CELL_TAIL.removeprefix(rb"c\b"), re.DOTALL)
# the same again where every formula's text runs to its "</f>" without another "<" (as
# XML escapes it; see _cell_pattern): "[^<]*" finds the same end as the lazy
# ".*?" without trying "</f>" at every character (40% of the scan's time)
_SPACED_FLAT_CELL_REF = re.compile(
    _SPACED_CELL_REF.pattern.replace(rb">(.*?)</", rb">([^<]*)</"), re.DOTALL)
_FORMULA_TAG = re.compile(rb"<f\b")  # (a regex counts them faster than bytes.count)
_ANY_FORMULA_TAG = re.compile(rb"<" + _NS + rb"f\b")
_ERROR_CELL_TYPE = re.compile(rb"t=(?:\"e\"|'e')")
_PREFIXED_C_OR_F = re.compile(rb":[cf]")
# a cell tag that does not start '<c r="' (its absence also rules out a cell without
# "r=", in a third of the time _NO_ADDRESS takes)
_ODD_CELL = re.compile(rb'<c\b(?! r=")')
_MACRO_SHEETS = ("xl/macrosheets/", "xl/dialogsheets/")
_STRICT_NS = b"http://purl.oclc.org/ooxml/spreadsheetml/main"  # "Strict Open XML"
# any cell or row start tag (for the positional scan); groups: tag name, attributes, "/"
_TAG = re.compile(rb"<" + _NS + rb"(row|c)\b([^>]*?)(/?)>")
_CONTENT = re.compile(rb"\s*<" + _NS + rb"(?:(v|is)\b|(f)\b([^>]*?)(?:/>|>(.*?)</" + _NS
                      + rb"f>))", re.DOTALL)
# one attribute after another, each value taken whole (a value may hold "r='J9'")
_ATTRIBUTE = re.compile(rb"""\s*([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_REF = re.compile(rb"([A-Z]{0,3})([0-9]{0,7})")
_NO_ADDRESS = re.compile(rb"<c[\s>/](?![^>]*?\br=)")  # literal start: a fast search
_NO_ADDRESS_NS = re.compile(rb"<[A-Za-z_][\w.-]*:c[\s>/](?![^>]*?\br=)")
_ERROR_TYPE = re.compile(rb"\bt=" + _Q + rb"e" + _Q)
_VALUE = re.compile(rb"\s*<" + _NS + rb"v>([^<]*)</" + _NS + rb"v>")
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_MAIN_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
# where Excel and LibreOffice (xl/comments1.xml) and openpyxl (xl/comments/comment1.xml)
# keep cell comments; Excel's threaded comments come with such a part too
_COMMENT_PART = re.compile(r"xl/comments[^/]*\.xml|xl/comments/[^/]+\.xml", re.IGNORECASE)
# where text boxes and shapes drawn on a sheet are kept (a comment's box is in a .vml
# part beside them, a chart's text in xl/charts/: neither matches)
_DRAWING_PART = re.compile(r"xl/drawings/[^/]+\.xml", re.IGNORECASE)
# a sheet's page headers and footers (:mod:`sheetflow.collect.part_text` reads them)
_HEADER_FOOTER = re.compile(rb"<(?:\w+:)?headerFooter\b.*?</(?:\w+:)?headerFooter>", re.S)


@dataclass(frozen=True)
class Limits:
    """Bounds on what a returned workbook may contain and cost to read.

    The defaults are far above any rating workbook (a 500-case paired pack is about
    1 MB) and far below what hurts a laptop.
    """

    max_file_bytes: int = 20 * 2**20
    max_members: int = 500
    max_member_bytes: int = 50 * 2**20
    max_total_bytes: int = 150 * 2**20
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 2**20
    xml_head_bytes: int = 64 * 2**10
    max_rows: int = 100_000  # a sheet with content beyond these is read with openpyxl,
    max_columns: int = 64  # bounded, never with python-calamine
    memory_bytes: int = 1536 * 2**20
    timeout_seconds: float = 60.0


@dataclass(frozen=True)
class Problem:
    """A reason to refuse a file: an issue ``code`` and a short ``detail``."""

    code: str
    detail: str = ""


@dataclass(frozen=True)
class SheetScan:
    """What :func:`scan_sheet` found in one worksheet's XML.

    Attributes
    ----------
    extent : (int, int)
        Last row and column of any cell with content (a value, string or formula).
        Style-only cells do not count: no reader gives them a value, and
        python-calamine does not grow its grid for them.
    formulas : dict
        (row, column) -> (``<f>`` attributes, ``<f>`` text) of each formula cell, raw
        bytes as written.
    errors : dict
        (row, column) -> the error value (``#DIV/0!``) of each error cell without a
        formula (readers such as python-calamine show these as blank).
    unplaced : int
        ``<f>`` tags the scan could not place in a cell: written where no spreadsheet
        program writes one (after an XML comment, after the cell's value), so a
        reader would take the cell's stored value for what the formula shows.
    cells : int
        How many cells hold content (those ``extent`` bounds; a cell holding "" too):
        set beside the count generate records for a sheet of a pack, it tells whether
        the rater typed anything there (:mod:`sheetflow.collect.outside_answers`).
    """

    extent: tuple[int, int] = (0, 0)
    formulas: dict[tuple[int, int], tuple[bytes, bytes]] = field(default_factory=dict)
    errors: dict[tuple[int, int], str] = field(default_factory=dict)
    unplaced: int = 0
    cells: int = 0


@dataclass
class Inspection:
    """What :func:`inspect_file` found.

    Attributes
    ----------
    problem : Problem or None
        Why the file must not be parsed (None: safe to parse).
    sheets : dict
        Sheet name -> :class:`SheetScan` of its XML.
    hazards : list of Hazard
        What would fetch or send data, or run, if the file were opened in Excel
        (:mod:`.hazards`): reported, never a reason not to read the file.
    comments : tuple of str
        The zip members that hold cell comments (notes), by name alone: a file
        without any, the usual return, needs no further look
        (:mod:`sheetflow.collect.sheet_changes`).
    drawings : tuple of str
        The zip members that hold drawings (text boxes, shapes, pictures), by name
        alone, the same way (:mod:`sheetflow.collect.drawings`; a pack has none).
    header_footers : dict
        Sheet name -> its ``<headerFooter>`` block (None: it has none), taken while
        the sheet's XML is at hand, so that :mod:`sheetflow.collect.part_text` need
        not decompress the sheets again.
    """

    problem: Problem | None = None
    sheets: dict[str, SheetScan] = field(default_factory=dict)
    hazards: list[Hazard] = field(default_factory=list)
    comments: tuple[str, ...] = ()
    drawings: tuple[str, ...] = ()
    header_footers: dict[str, bytes | None] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        """Whether a parser may open the file."""
        return self.problem is None

    @property
    def extents(self) -> dict[str, tuple[int, int]]:
        """Sheet name -> (last row, last column) of any cell with content."""
        return {name: scan.extent for name, scan in self.sheets.items()}


def inspect_file(path: str | Path, limits: Limits | None = None) -> Inspection:
    """Check a file's bytes and zip directory before any spreadsheet parser opens it.

    Parameters
    ----------
    path : str or Path
        The returned file (opened read-only, never modified).
    limits : Limits, optional

    Returns
    -------
    Inspection
        ``problem`` names the first reason to refuse the file, with an issue code
        from :data:`sheetflow.collect.validate.CATALOGUE`; ``extents`` gives each sheet's
        real extent for the bounded read.
    """
    limits = limits or Limits()
    data = read_whole(path, limits)
    return Inspection(data) if isinstance(data, Problem) else inspect_bytes(data, limits)


def read_whole(path: str | Path, limits: Limits) -> bytes | Problem:
    """The file's bytes, read once (never more than the size limit), or why not."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        return Problem("empty-file")
    if size > limits.max_file_bytes:
        return Problem("file-too-large", f"{size / 2**20:.1f} MB")
    with path.open("rb") as fh:
        data = fh.read(limits.max_file_bytes + 1)  # it may have grown since the stat
    if len(data) > limits.max_file_bytes:
        return Problem("file-too-large", f"more than {limits.max_file_bytes / 2**20:.1f} MB")
    return data if data else Problem("empty-file")


def inspect_bytes(data: bytes, limits: Limits | None = None) -> Inspection:
    """:func:`inspect_file` on bytes already read (the bytes hashed are those parsed)."""
    limits = limits or Limits()
    if not data:
        return Inspection(Problem("empty-file"))
    problem = _check_magic(data)
    if problem is not None:
        return Inspection(problem)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return _inspect_zip(zf, limits)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        return Inspection(Problem("corrupt-file", short_message(exc)))
    except (OSError, RuntimeError, NotImplementedError) as exc:
        # zlib errors surface as OSError/zlib.error; encrypted members as RuntimeError
        return Inspection(Problem("corrupt-file", short_message(exc)))


def _check_magic(data: bytes) -> Problem | None:
    if data.startswith(OLE_MAGIC):
        if any(marker in data for marker in _ENCRYPTED_MARKERS):
            return Problem("encrypted-workbook")
        return Problem("legacy-xls")
    if not data.startswith(ZIP_MAGIC):
        return Problem("not-a-workbook", _sniff(data))
    return None


WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xltx", ".xltm", ".xlsb", ".xls", ".xlt", ".ods",
                     ".ots", ".fods", ".numbers")
"""Extensions that claim a spreadsheet workbook."""


def problem_fields(problem: Problem, name: str) -> dict[str, str]:
    """The message fields of ``problem``, found in the file named ``name``: its detail,
    and for a file that is no workbook whether its name claims one. A workbook's name
    on a CSV is worth pointing out; a CSV named ``.csv`` says what it is already."""
    claims = name.lower().endswith(WORKBOOK_SUFFIXES)
    return {"detail": problem.detail,
            "name_says": ", whatever its name says" if claims else ""}


_MAGIC = ((b"%PDF-", "a PDF"), (b"\x89PNG\r\n\x1a\n", "a PNG image"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"GIF87a", "a GIF image"),
          (b"GIF89a", "a GIF image"))
_HEIC_BRANDS = (b"ftypheic", b"ftypheix", b"ftyphevc", b"ftypmif1")
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f]")


def _sniff(data: bytes) -> str:
    """A guess at what a non-zip file is, for the message the rater reads: never "text"
    for bytes that are not (a photo's bytes hold commas too)."""
    head = data[:512]
    known = next((what for magic, what in _MAGIC if head.startswith(magic)), None)
    if known or head[4:12] in _HEIC_BRANDS:
        return f"it is {known or 'a HEIC photo'}"
    text = _as_text(head)
    if text is None:
        return "it is not a spreadsheet"
    text = text.lstrip().lower()
    if text.startswith(("<!doctype html", "<html")) or "<table" in text:
        return "it is an HTML page"
    if text.startswith("<?xml"):
        return "it is an XML file"
    if "," in text or ";" in text or "\t" in text:
        return "it is a text/CSV file"
    return "it is a text file"


def _as_text(head: bytes) -> str | None:
    """The start of a file as text, None when it is not: UTF-16 with its byte order
    mark, else UTF-8 or a one-byte code page (read as Latin-1, one character a byte);
    either way no control codes but tabs and line breaks."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = head[:len(head) // 2 * 2].decode("utf-16", "replace")
    else:
        text = head.decode("latin-1")
    return None if _CONTROLS.search(text) else text


def _inspect_zip(zf: zipfile.ZipFile, limits: Limits) -> Inspection:
    infos = zf.infolist()
    names = {info.filename for info in infos}
    problem = (_check_ods(zf, names) or _check_sizes(infos, limits)
               or _check_parts(zf, names) or _check_xml_heads(zf, infos, limits))
    if problem is not None:
        return Inspection(problem)
    members = sheet_members(zf, names)
    twice = sorted({name for name, _ in members if [n for n, _ in members].count(name) > 1})
    if twice:  # a reader takes one of the two, the scan would check the other
        return Inspection(Problem("corrupt-file", f"two sheets are named '{twice[0]}'"))
    hazards = part_hazards(zf, infos) + name_hazards(zf.read("xl/workbook.xml"))
    sheets, header_footers = {}, {}
    for name, member in members:
        data = zf.read(member)
        sheets[name] = scan_sheet(data)
        header_footers[name] = header_footer_block(data)
        hazards += sheet_hazards(name, sheets[name].formulas, data)
    odd = next((name for name, scan in sheets.items() if scan.unplaced), None)
    if odd is not None:
        return Inspection(Problem("formula-hidden", f"sheet '{odd}'"))
    comments = tuple(sorted(n for n in names if _COMMENT_PART.fullmatch(n)))
    drawings = tuple(sorted(n for n in names if _DRAWING_PART.fullmatch(n)))
    return Inspection(None, sheets, hazards, comments, drawings, header_footers)


def header_footer_block(xml: bytes) -> bytes | None:
    """The ``<headerFooter>...</headerFooter>`` block of a sheet's XML (None: none)."""
    if xml.find(b"eaderFooter") < 0:  # the usual sheet: no search for the block
        return None
    block = _HEADER_FOOTER.search(xml)
    return block[0] if block else None


def _check_ods(zf: zipfile.ZipFile, names: set[str]) -> Problem | None:
    if "mimetype" in names:
        mimetype = zf.read("mimetype")[:200]
        if b"opendocument" in mimetype:
            return Problem("ods-file")
    return None


def _check_sizes(infos: Sequence[zipfile.ZipInfo], limits: Limits) -> Problem | None:
    if len(infos) > limits.max_members:
        return Problem("zip-bomb", f"{len(infos)} parts (limit {limits.max_members})")
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > limits.max_member_bytes:
            return Problem("zip-bomb", f"{info.filename} expands to "
                           f"{info.file_size / 2**20:.0f} MB")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > limits.ratio_floor_bytes and ratio > limits.max_ratio:
            return Problem("zip-bomb", f"{info.filename} is compressed {ratio:.0f}:1")
    if total > limits.max_total_bytes:
        return Problem("zip-bomb", f"the parts expand to {total / 2**20:.0f} MB")
    return None


def _check_parts(zf: zipfile.ZipFile, names: set[str]) -> Problem | None:
    if "[Content_Types].xml" not in names or "xl/workbook.xml" not in names:
        return _zip_not_workbook(names)
    lowered = {n.lower() for n in names}
    # a VBA project, or Excel 4.0 macro (and dialog) sheets, which run as a VBA macro does
    if any(n.endswith("vbaproject.bin") or n.startswith(_MACRO_SHEETS) for n in lowered):
        return Problem("macro-workbook")
    content_types = zf.read("[Content_Types].xml")[:2**20]
    if b"macroEnabled" in content_types:
        return Problem("macro-workbook")
    with zf.open("xl/workbook.xml") as fh:
        if _STRICT_NS in fh.read(2**16):
            return Problem("strict-ooxml")
    return None


def _zip_not_workbook(names: set[str]) -> Problem:
    """What a zip archive that is no workbook is: a zipped workbook, or something else.

    Only the archive's list of names is looked at: what is inside is never read (a
    workbook in it is checked once it is unzipped into the returns folder).
    """
    # a Mac's "Compress" adds __MACOSX/._name for each file: no workbook of the rater's
    held = sorted(n for n in names if n.lower().endswith(".xlsx")
                  and not n.startswith("__MACOSX/"))
    if held:
        return Problem("zipped-workbook", ", ".join(f"'{n}'" for n in held))
    return Problem("not-a-workbook", "a zip archive without a workbook in it")


def _check_xml_heads(zf: zipfile.ZipFile, infos: Sequence[zipfile.ZipInfo],
                     limits: Limits) -> Problem | None:
    """Any DOCTYPE/ENTITY in the first bytes of an XML part (Excel never writes one)."""
    for info in infos:
        if not info.filename.lower().endswith((".xml", ".rels", ".vml")):
            continue
        with zf.open(info) as fh:
            head = fh.read(limits.xml_head_bytes)
        if _DTD.search(head):
            return Problem("xml-dtd", info.filename)
    return None


def scan_sheet(data: bytes) -> SheetScan:
    """Scan one worksheet's XML without parsing it (bounded by the zip checks).

    Parameters
    ----------
    data : bytes
        The worksheet part.

    Returns
    -------
    SheetScan
    """
    # each search is a pass over the sheet (4 ms on a 500-case one): each done once
    prefixes = set(_PREFIXED_C_OR_F.findall(data))
    tags = len((_ANY_FORMULA_TAG if b":f" in prefixes else _FORMULA_TAG).findall(data))
    scan = _scan(data, prefixes, tags)
    if len(scan.formulas) != tags:
        return replace(scan, unplaced=tags - len(scan.formulas))
    return scan


def _scan(data: bytes, prefixes: set[bytes], tags: int) -> SheetScan:
    """:func:`scan_sheet` by the fastest pattern that gives the same cells."""
    if _ERROR_CELL_TYPE.search(data):
        return _scan_by_position(data)
    # a cell tag that does not start '<c r="' (what every spreadsheet program writes):
    # its attributes are read one by one, as a parser reads them (a decoy "r=" inside
    # another attribute, a prefixed q:r, spaces around "=" mislead a pattern)
    if b":c" in prefixes or _ODD_CELL.search(data) is not None:
        return _scan_by_position(data)
    found = _cell_matches(data, True, prefixes, tags)
    # column by column with C-level maps: a 500-case answer sheet has some 60,000 cells
    last_row = max(map(int, set(map(itemgetter(1), found))), default=0)
    columns = {c: column_number(c.decode("ascii")) for c in set(map(itemgetter(0), found))}
    formulas = {(int(row), columns[col]): (attrs, text)
                for col, row, _f, attrs, text in filter(itemgetter(2), found)}
    return SheetScan((last_row, max(columns.values(), default=0)), formulas,
                     cells=len(found))


def _cell_matches(data: bytes, leading_r: bool, prefixes: set[bytes],
                  tags: int) -> list[tuple]:
    """What ``_CELL_REF.findall(data)`` gives, by the fastest pattern that gives it.

    ``leading_r``: every cell tag starts ``<c r="``; ``prefixes``: which of ":c" and
    ":f" occur in ``data``; ``tags``: how many ``<f`` tags it holds. The flat pattern
    differs from the others only on a formula whose text holds a "<" (the lazy
    pattern runs on to a later "</f>", the flat one does not match it): if it matched
    fewer formulas than there are ``<f`` tags, the sheet is read again with the lazy
    one.
    """
    if b":c" in prefixes:
        return _CELL_REF.findall(data)
    if not leading_r:
        return _PLAIN_CELL_REF.findall(data)
    if b":f" not in prefixes:
        found = _SPACED_FLAT_CELL_REF.findall(data)
        if sum(map(bool, map(itemgetter(2), found))) == tags:
            return found
    return _SPACED_CELL_REF.findall(data)


def _cells_without_address(data: bytes, leading_r: bool = False,
                           prefixed: bool = True) -> bool:
    """Whether some cell lacks ``r=`` (allowed: it is then the next cell of its row).

    ``leading_r``: every unprefixed cell tag is known to start ``<c r="``;
    ``prefixed``: False when ":c" is known not to occur in ``data``.
    """
    if not leading_r and _NO_ADDRESS.search(data):
        return True
    return prefixed and (b":c " in data or b":c>" in data) and \
        bool(_NO_ADDRESS_NS.search(data))


def _scan_by_position(data: bytes) -> SheetScan:
    """The slower scan: every row and cell in order, placed where Excel places them.

    A cell with ``r=`` is where its address says (its own row digits, as readers take
    it, whatever its row's); a row or cell without follows the one before it; error
    cells are noted.
    """
    row = col = last_row = last_col = cells = 0
    formulas: dict[tuple[int, int], tuple[bytes, bytes]] = {}
    errors: dict[tuple[int, int], str] = {}
    for tag in _TAG.finditer(data):
        name, attrs, closed = tag.groups()
        ref = _attribute_r(attrs)
        if name == b"row":
            row = int(ref[2]) if ref and ref[2] else row + 1
            col = 0
            continue
        col = column_number(ref[1].decode("ascii")) if ref and ref[1] else col + 1
        at = int(ref[2]) if ref and ref[2] else row
        content = None if closed else _CONTENT.match(data, tag.end())
        if content is None:
            continue  # a style-only cell: no value
        cells += 1
        last_row, last_col = max(last_row, at), max(last_col, col)
        if content[2]:
            formulas[(at, col)] = (content[3], content[4] or b"")
        elif _ERROR_TYPE.search(attrs):
            value = _VALUE.match(data, tag.end())
            errors[(at, col)] = value[1].decode("utf-8", "replace") if value else "#N/A"
    return SheetScan((last_row, last_col), formulas, errors, cells=cells)


def _attribute_r(attrs: bytes) -> re.Match[bytes] | None:
    """The ``r`` attribute's column letters and row digits (groups 1 and 2), read as an
    XML parser reads it: attribute by attribute, so neither ``x="r='J9'"``, nor a
    prefixed ``q:r``, nor spaces around "=" place a cell anywhere else."""
    for attribute in _ATTRIBUTE.finditer(attrs):
        if attribute[1] == b"r":
            value = attribute[2] if attribute[2] is not None else attribute[3]
            return _REF.fullmatch(value)
    return None


def sheet_members(zf: zipfile.ZipFile, names: set[str]) -> list[tuple[str, str]]:
    """(sheet name, zip member of its XML), in workbook order, from workbook.xml and its
    relationships."""
    rels_name = "xl/_rels/workbook.xml.rels"
    if rels_name not in names:
        return []
    targets = {}
    for rel in SafeET.fromstring(zf.read(rels_name)):
        target = rel.get("Target", "")
        target = target.lstrip("/") if target.startswith("/") else "xl/" + target
        targets[rel.get("Id")] = target
    out = []
    workbook = SafeET.fromstring(zf.read("xl/workbook.xml"))
    for sheet in workbook.iter(f"{_MAIN_NS}sheet"):
        member = targets.get(sheet.get(_REL_NS))
        if member in names:
            out.append((sheet.get("name", ""), member))
    return out


def column_number(letters: str) -> int:
    """1-based column number of column ``letters`` (``"A"`` -> 1, ``"XFD"`` -> 16384)."""
    number = 0
    for ch in letters.upper():
        number = number * 26 + ord(ch) - 64
    return number


def short_message(exc: BaseException) -> str:
    """An exception's message for a report line (at most 120 characters)."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 120 else text[:117] + "..."
