"""Text a rater writes outside every sheet's cells: named, never lost.

Besides cells, comments and drawings, a workbook holds text no sheet shows, and
sheetflow would use the file without a word about it:

- ``property-text``: a document property a rater fills in (File > Properties: Title,
  Subject, Keywords, Comments, Category, Status, Manager, Company; a custom property
  beyond sheetflow's own identity properties), named with its text;
- ``header-footer-text``: a page header or footer of a sheet (Page Setup), named by
  its sheet and quoted (its formatting codes left out, its fields such as ``&P``, the
  page number, kept);
- ``extra-part``: a ``customXml/`` part of the file holding text, named by the part.

Text equal to what generate writes in the pack (the title and comments it gives the
workbook, :func:`sheetflow.workbook.layout.pack_properties`, while the study is the
one the packs were generated from) is sheetflow's own and is not named, without
reading the pack. Any other text is compared with the pack as generated
(``packs/<file>``, its bytes checked against the sha256 its manifest entry records):
text equal to the pack's is not named either. What
a spreadsheet program writes by itself is no rater's text and is never read: the
dates, revision, language, application and user names of the properties, an empty
header or footer (LibreOffice writes one for every sheet), a field alone (a page
number), a page label beside a page number (``Page &P``, which LibreOffice puts in
the footer of every sheet it adds, ``Seite &P`` in German: one word beside ``&P`` or
``&N``), and the custom properties Office writes for a sensitivity label. Every other
text is a warning of the file: the ratings are used, and collect exits 1 until the
file is marked read, as for a comment on a cell.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import defusedxml.ElementTree as SafeET

from ..packs.manifest import PackHead
from ..workbook import layout as L
from .reader import CORE_PART, CUSTOM_PART, Book
from .safety import header_footer_block, sheet_members
from .validate import show_value

PROPERTY_TEXT = "property-text"
HEADER_FOOTER_TEXT = "header-footer-text"
EXTRA_PART = "extra-part"
SHOWN = 20
"""Things named one by one per code in a file; the rest are counted in one line."""

APP_PART = "docProps/app.xml"
_CP = "{http://schemas.openxmlformats.org/package/2006/metadata/core-properties}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_EP = "{http://schemas.openxmlformats.org/officeDocument/2006/extended-properties}"
# the properties a person fills in, by the names Excel's and LibreOffice's dialogs give
_CORE = {f"{_DC}title": "Title", f"{_DC}subject": "Subject", f"{_CP}keywords": "Keywords",
         f"{_DC}description": "Comments", f"{_CP}category": "Category",
         f"{_CP}contentStatus": "Status"}
_APP = {f"{_EP}Manager": "Manager", f"{_EP}Company": "Company"}
_OWN_PREFIX = "sheetflow_"  # the identity properties: a changed one is an identity issue
_LABEL_PREFIX = "MSIP_Label_"  # written by Office for a sensitivity label, not typed
_SECTIONS = re.compile(rb"<(?:\w+:)?(odd|even|first)(Header|Footer)\b[^>]*?(?:/>|>(.*?)"
                       rb"</(?:\w+:)?\1\2>)", re.S)
_ENTITY = re.compile(r"&(amp|lt|gt|quot|apos|#x[0-9A-Fa-f]+|#[0-9]+);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
# codes of a header or footer: formatting (a font, a size, bold...) and sections are
# left out of the text shown; fields (page, pages, date, time, path, file, sheet,
# picture) are kept where shown and left out where deciding whether anything was written
_FORMAT = re.compile(r'&"[^"]*"|&\d+|&K[0-9A-Fa-f]{6}|&K\d\d[+-]\d{3}|&[LCRBIUESXYOH]')
_FIELD = re.compile(r"&[PNDTZFAG]")
# a page label: one word beside a page field, "Page &P" as LibreOffice puts in the
# footer of every new sheet ("Seite &P", "Página &P", "&P ページ" in other languages)
_OTHER_FIELD = re.compile(r"&[DTZFAG]")
_PAGE_LABEL = re.compile(r"[^\W\d_]+\.?:?\s*&[PN]|&[PN]\s*[^\W\d_]+\.?")
_PLACE = {"odd": "", "even": "even-page ", "first": "first-page "}
# xlsxwriter's names of the properties a person fills in -> the names in the issues
_SET_AS = {"title": "Title", "subject": "Subject", "keywords": "Keywords",
           "comments": "Comments", "category": "Category", "status": "Status",
           "manager": "Manager", "company": "Company"}


class FileChecker(Protocol):
    """What the checks need of :class:`.file_check.FileChecker` (named here without
    importing it: that module imports this one)."""

    study: Any  # the study (its ``title``)
    job: Any  # the file's job: ``study_dir``, ``spec_current``
    head: PackHead
    book: Book
    renamed: dict[str, str]  # pack sheet -> its name in the return

    def add(self, code: str, **fields: Any) -> None: ...


class Text(NamedTuple):
    """One piece of text found outside the cells."""

    key: str
    """What it is compared by with the pack's (a property, a sheet's header, a part)."""
    label: str
    """Its name for the issue: the property, ``header``/``footer``, the part."""
    sheet: str
    """The sheet of a header or footer ("" for the others)."""
    text: str
    """The text as quoted."""


class _Found(NamedTuple):
    properties: list[Text]
    headers: list[Text]
    parts: list[Text]


def check_part_text(checker: FileChecker) -> None:
    """Name the text of ``checker``'s return outside every sheet's cells that the pack
    as generated did not hold (see the module notes), as warnings of its file."""
    try:
        found = read_part_text(checker.book.data, checker.renamed,
                               blocks=checker.book.header_footers)
    except (SyntaxError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        checker.add(PROPERTY_TEXT, what="The workbook's document properties, headers and "
                    f"footers could not be read ({type(exc).__name__}); open it to read "
                    "them (File > Properties, Page Setup)")
        return
    if not any(found) or _as_generated(checker, found):
        return
    pack = _pack_found(checker, headers=bool(found.headers))
    for code, mine, theirs in zip((PROPERTY_TEXT, HEADER_FOOTER_TEXT, EXTRA_PART), found,
                                  pack if not isinstance(pack, str) else ([], [], []),
                                  strict=True):
        was = {t.key: t.text for t in theirs}
        new = [t for t in mine if was.get(t.key) != t.text]
        _report(checker, code, new, pack if isinstance(pack, str) else "")


def read_part_text(data: bytes, renamed: dict[str, str] | None = None, *,
                   headers: bool = True,
                   blocks: dict[str, bytes | None] | None = None) -> _Found:
    """The text of a workbook's properties, headers and footers and ``customXml/``
    parts (what a program writes by itself left out); a header's key names its sheet
    by its name in the pack (``renamed``: pack sheet -> its name in ``data``). Without
    ``headers`` no sheet is read (the headers and footers are left out); with
    ``blocks`` (sheet -> its ``<headerFooter>`` block, as the safety inspection found
    them, in workbook order) the sheets are not decompressed again.

    Raises
    ------
    SyntaxError, ValueError, KeyError, zipfile.BadZipFile
        When a part cannot be read.
    """
    pack_name = {now: was for was, now in (renamed or {}).items()}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        properties = list(_properties(zf, names))
        if blocks is None:
            blocks = {sheet: header_footer_block(zf.read(member))
                      for sheet, member in (sheet_members(zf, names) if headers else [])}
        found = [h for sheet, block in blocks.items()
                 for h in _headers(block, sheet, pack_name.get(sheet, sheet))]
        parts = [t for name in sorted(names) if _is_extra(name)
                 for t in _part(name, zf.read(name))]
    return _Found(properties, found, parts)


def _properties(zf: zipfile.ZipFile, names: set[str]) -> Iterator[Text]:
    """Each document property a person fills in that holds text."""
    for part, wanted in ((CORE_PART, _CORE), (APP_PART, _APP)):
        if part in names:
            for element in SafeET.fromstring(zf.read(part)):
                text = " ".join((element.text or "").split())
                if element.tag in wanted and text:
                    yield Text(wanted[element.tag], wanted[element.tag], "", text)
    if CUSTOM_PART in names:
        for prop in SafeET.fromstring(zf.read(CUSTOM_PART)):
            name = prop.get("name", "")
            text = " ".join("".join(prop.itertext()).split())
            if text and not name.startswith((_OWN_PREFIX, _LABEL_PREFIX)):
                yield Text(f"custom:{name}", f"{name} (custom)", "", text)


def _headers(block: bytes | None, sheet: str, pack_sheet: str) -> Iterator[Text]:
    """Each header or footer of a sheet's ``<headerFooter>`` block holding more than
    fields and formatting."""
    if block is None:  # the usual sheet: none (LibreOffice writes empty ones)
        return
    for place, kind, body in _SECTIONS.findall(block):
        shown = _unescape(body.decode("utf-8", "replace"))
        shown = " ".join(_FORMAT.sub(" ", shown.replace("&&", "\0")).split())
        if _written(shown):
            label = f"{_PLACE[place.decode()]}{kind.decode().lower()}"
            yield Text(f"{pack_sheet}:{label}", label, sheet, shown.replace("\0", "&"))


def _written(shown: str) -> bool:
    """Whether a header or footer (its formatting left out) holds text a person wrote:
    more than fields, and more than a page label beside a page field."""
    if not _FIELD.sub("", shown).replace("\0", "").strip():
        return False
    return not _PAGE_LABEL.fullmatch(" ".join(_OTHER_FIELD.sub("", shown).split()))


def _unescape(text: str) -> str:
    """XML's five entities and character references, as a header's text holds them."""
    def one(m: re.Match[str]) -> str:
        name = m[1]
        if name.startswith("#"):
            return chr(int(name[2:], 16) if name[1] in "xX" else int(name[1:]))
        return _ENTITIES[name]
    return _ENTITY.sub(one, text)


def _is_extra(name: str) -> bool:
    """Whether zip member ``name`` is a ``customXml/`` part (not its relationships)."""
    return name.lower().startswith("customxml/") and "/_rels/" not in name.lower() \
        and not name.endswith("/")


def _part(name: str, data: bytes) -> list[Text]:
    """The part's text on one line, when it holds any."""
    text = " ".join(" ".join(SafeET.fromstring(data).itertext()).split()) if data.strip() \
        else ""
    return [Text(f"part:{name}", name, "", text)] if text else []


def _as_generated(checker: FileChecker, found: _Found) -> bool:
    """Whether all ``found`` is what generate writes in the pack (its title and
    comments; no header, footer or part), known without reading the pack: only while
    the study is the one the packs were generated from (its spec hash the manifest's),
    since the title comes from it."""
    if found.headers or found.parts:
        return False
    title = L.pack_title(checker.study.title, checker.head.sitting)
    own = {_SET_AS[key]: " ".join(text.split())
           for key, text in L.pack_properties(title).items() if key in _SET_AS}
    # the parent compared the spec hash with the manifest's once, for every file
    return all(own.get(t.key) == t.text for t in found.properties) and \
        bool(checker.job.spec_current)


def _pack_found(checker: FileChecker, *, headers: bool) -> _Found | str:
    """What the pack as generated holds outside its cells (its headers and footers
    only when ``headers``: its sheets are read for nothing when the return has none);
    or why it cannot be told, worded to follow its file name."""
    path = Path(checker.job.study_dir) / L.PACKS_DIR / checker.head.file
    if not checker.head.sha256:
        return f"{L.PACKS_DIR}/{checker.head.file} has no sha256 in the manifest to check it by"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return f"{L.PACKS_DIR}/{checker.head.file} is missing"
    except OSError as exc:
        return (f"{L.PACKS_DIR}/{checker.head.file} could not be read "
                f"({exc.strerror or type(exc).__name__})")
    if hashlib.sha256(data).hexdigest() != checker.head.sha256:
        return (f"{L.PACKS_DIR}/{checker.head.file} is not the workbook generate wrote (its "
                "sha256 differs from the manifest's)")
    try:
        return read_part_text(data, headers=headers)
    except (SyntaxError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        return f"{L.PACKS_DIR}/{checker.head.file} could not be read ({type(exc).__name__})"


_WORDS = {
    PROPERTY_TEXT: "The document property {label} holds '{text}' (File > Properties)",
    HEADER_FOOTER_TEXT: "The {label} of sheet '{sheet}' (Page Setup) holds '{text}'",
    EXTRA_PART: "The part {label} of the workbook file, which no sheet shows, holds '{text}'",
}
_MORE = {
    PROPERTY_TEXT: "{count} more document properties hold text",
    HEADER_FOOTER_TEXT: "From the {label} of sheet '{sheet}' on, {count} more headers or "
                        "footers hold text",
    EXTRA_PART: "From the part {label} on, {count} more parts of the workbook file hold text",
}


def _report(checker: FileChecker, code: str, found: list[Text], unknown: str) -> None:
    """One warning of ``code`` per text found (the first :data:`SHOWN`, then one line
    counting the rest); ``unknown``: why the pack could not be compared, said in each."""
    tail = (f"; whether the workbook as sent held it cannot be told, as {unknown}"
            if unknown else "")
    for t in found[:SHOWN]:
        checker.add(code, sheet=t.sheet, label=t.label, value=t.text,
                    what=_WORDS[code].format(label=t.label, sheet=t.sheet,
                                             text=show_value(t.text)) + tail)
    if found[SHOWN:]:
        first = found[SHOWN]
        checker.add(code, sheet=first.sheet, label=first.label,
                    what=_MORE[code].format(label=first.label, sheet=first.sheet,
                                            count=len(found) - SHOWN))
