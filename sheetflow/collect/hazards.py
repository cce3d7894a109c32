"""Things in a returned workbook that act when someone opens the file in Excel.

sheetflow never calculates a formula, follows a link or runs an object of a returned
file (python-calamine reads the values stored with it), but the coordinator or an
analyst may later open the returned original in Excel. A workbook can carry, outside
the answer cells, what then fetches or sends data or starts a program:

- a formula that calls WEBSERVICE, FILTERXML, IMAGE, HYPERLINK, RTD, CALL or
  REGISTER, or asks another program for data (DDE, ``cmd|' /c calc'!A0``), in any cell
  of any sheet (the hidden ``_sheetflow`` sheet too), in a conditional format or data
  validation rule, or in a defined name a harmless-looking cell refers to;
- a reference to another workbook (``'[other.xlsx]Sheet1'!A1``), and the
  ``xl/externalLinks/`` parts that hold such links;
- a data connection or query (``xl/connections.xml``, ``xl/queryTables/``, a data
  model), an embedded OLE object or package (``xl/embeddings/``), an ActiveX control
  (``xl/activeX/``), or any relationship to a target outside the file but a plain
  cell hyperlink (a linked picture is fetched when the file is opened).

Each is a :class:`Hazard` with an issue code of
:data:`~sheetflow.collect.validate.CATALOGUE`. The checks are cheap: zip member names,
the small relationship parts and ``xl/workbook.xml``, the formulas the sheet scan of
:mod:`.safety` already found (one C-level search over all of a sheet's formula texts
at once; only a sheet where it finds something is looked at formula by formula) and
the short part of each sheet's XML after its cells, where rules are kept.

A typed URL that Excel turned into a cell hyperlink is not reported: its address is
fixed text, and it does nothing until clicked.
"""

from __future__ import annotations

import html
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from .validate import Issue, cell_name, issue

FORMULA_REACHES_OUT = "formula-reaches-out"
EXTERNAL_REFERENCE = "external-reference"
DATA_CONNECTION = "data-connection"
EMBEDDED_OBJECT = "embedded-object"
ACTIVEX_CONTROL = "activex-control"


@dataclass(frozen=True)
class Hazard:
    """One thing in a returned file that acts when the file is opened in Excel.

    Attributes
    ----------
    code : str
        Its issue code.
    where : str
        Where it is, in words ("Cell Scoring!M10", "The part xl/connections.xml").
    sheet, cell : str
        The sheet and A1 address ("" when it is not in a cell).
    detail : str
        What it does (for a formula).
    value : str
        The formula, link target or part name.
    """

    code: str
    where: str
    sheet: str = ""
    cell: str = ""
    detail: str = ""
    value: str = ""


def hazard_issues(hazards: Iterable[Hazard], file: str, rater: str = "") -> list[Issue]:
    """The issues of ``hazards`` found in ``file``."""
    return [issue(h.code, file=file, sheet=h.sheet, cell=h.cell, rater=rater,
                  value=h.value, what=h.where, detail=h.detail) for h in hazards]


# --------------------------------------------------------------------------- zip parts

# (lower-cased member name prefix, code); relationship parts are looked at apart
_PART_KINDS = (
    ("xl/externallinks/", EXTERNAL_REFERENCE),
    ("xl/connections.xml", DATA_CONNECTION),
    ("xl/querytables/", DATA_CONNECTION),
    ("xl/model/", DATA_CONNECTION),
    ("xl/embeddings/", EMBEDDED_OBJECT),
    ("xl/activex/", ACTIVEX_CONTROL),
)
_RELATIONSHIP = re.compile(rb"<(?:[\w.-]+:)?Relationship\b([^>]*)>")
_REL_ATTRIBUTE = re.compile(rb"""\b(Type|Target|TargetMode)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_HYPERLINK_TYPE = b"/hyperlink"


def part_hazards(zf: zipfile.ZipFile, infos: Sequence[zipfile.ZipInfo]) -> list[Hazard]:
    """Parts that link out, connect to data, embed objects or controls (by name), and
    relationships to targets outside the file (from the small ``.rels`` parts)."""
    found = []
    objects = set()  # an ActiveX control is two parts (.xml, .bin): named once
    for info in infos:
        name = info.filename
        lowered = name.lower()
        if "/_rels/" in lowered:
            if lowered.endswith(".rels") and not lowered.startswith("xl/externallinks/"):
                found += _external_targets(name, zf.read(info))
            continue
        code = next((code for prefix, code in _PART_KINDS if lowered.startswith(prefix)), "")
        if code and lowered.rsplit(".", 1)[0] not in objects:
            objects.add(lowered.rsplit(".", 1)[0])
            value = _link_target(zf, name) if code == EXTERNAL_REFERENCE else name
            found.append(Hazard(code, f"The part {name}", value=value))
    return found


def _link_target(zf: zipfile.ZipFile, part: str) -> str:
    """What an ``xl/externalLinks/`` part links to: the file its relationship names,
    or the program of a DDE link."""
    folder, _, base = part.rpartition("/")
    rels = f"{folder}/_rels/{base}.rels"
    if rels in zf.namelist():
        for relationship in _RELATIONSHIP.finditer(zf.read(rels)[:_LINK_HEAD]):
            target = _attributes(relationship[1]).get(b"Target")
            if target:
                return html.unescape(target.decode("utf-8", "replace"))
    service = _DDE_SERVICE.search(zf.read(part)[:_LINK_HEAD])
    if service is not None:
        return f"the program '{html.unescape(service[1].decode('utf-8', 'replace'))}' (DDE)"
    return "another workbook (its address is not given)"


_LINK_HEAD = 2**16  # an address is near the start of its part
_DDE_SERVICE = re.compile(rb"""<(?:[\w.-]+:)?ddeLink\b[^>]*?\bddeService\s*=\s*["']([^"']*)""")


def _attributes(tag: bytes) -> dict[bytes, bytes]:
    """Type, Target and TargetMode of a relationship's start tag."""
    return {m[1]: m[2] if m[2] is not None else m[3] for m in _REL_ATTRIBUTE.finditer(tag)}


def _external_targets(rels_name: str, data: bytes) -> list[Hazard]:
    """Relationships of one ``.rels`` part whose target lies outside the file (but
    cell hyperlinks); the links of an ``xl/externalLinks/`` part are that part's."""
    if b"xternal" not in data:
        return []
    source = rels_name.replace("_rels/", "").removesuffix(".rels") or "the package"
    found = []
    for relationship in _RELATIONSHIP.finditer(data):
        attributes = _attributes(relationship[1])
        if attributes.get(b"TargetMode", b"").lower() != b"external" or \
                attributes.get(b"Type", b"").endswith(_HYPERLINK_TYPE):
            continue
        target = attributes.get(b"Target", b"").decode("utf-8", "replace")
        found.append(Hazard(EXTERNAL_REFERENCE, f"The part {source}",
                            value=html.unescape(target)))
    return found


# --------------------------------------------------------------------------- formulas

# what each function does, for the message (names as Excel writes them, maybe with
# the "_xlfn." prefix of newer functions)
_CALLS = {
    "WEBSERVICE": "fetches a web address, which can send the workbook's contents out "
                  "(WEBSERVICE)",
    "FILTERXML": "reads XML such as a web page fetched by WEBSERVICE (FILTERXML)",
    "IMAGE": "fetches a picture from a web address (IMAGE)",
    "HYPERLINK": "opens a link, which can carry the workbook's contents, when clicked "
                 "(HYPERLINK)",
    "RTD": "asks a program on the computer for data (RTD)",
    "CALL": "calls code in a program library (CALL)",
    "REGISTER": "loads code from a program library (REGISTER)",
    "REGISTER.ID": "loads code from a program library (REGISTER.ID)",
}
_DDE = "asks another program for data or starts it (a DDE link, '|')"
_NAMES = b"|".join(re.escape(n.encode()) for n in sorted(_CALLS, key=len, reverse=True))
# (a newer function is written "_xlfn.IMAGE(": "." may come before the name)
_CALL = re.compile(rb"(?<!\w)(" + _NAMES + rb")\s*\(")
# [n]Sheet!A1, [n]!Name, '[book.xlsx]Sheet 1'!A1, 'C:\dir\[book.xlsx]Sheet'!A1; a
# table's [Column] is followed by no sheet name and "!"
_EXTERNAL = re.compile(rb"\[[^\]\x00]+\](?:[\w.]*|[^'\x00]*')!")
_STRING = re.compile(rb'"[^"\x00]*"')  # a string literal ("" inside one: two of them)
# what any of the above holds: the pre-filter over a sheet's formulas, each a search
# for a literal (one regex of them all takes 40 times as long on a 500-case sheet); a
# character reference (Excel writes none in a formula) may spell any of them
_SUSPECT = (*(n.encode() for n in _CALLS if "." not in n), b"[", b"|", b"&#")
_DIGITS = b"0123456789$"
# the rules after a sheet's cells: conditional formats (<formula>), data validations
# (<formula1>, <formula2>), and the same in an extension list (<xm:f>)
_RULE_FORMULA = re.compile(rb"<(?:[\w.-]+:)?(?:formula[12]?|f)\b[^>/]*>([^<]*)<")
_DEFINED_NAME = re.compile(rb"<(?:[\w.-]+:)?definedName\b([^>]*)>([^<]*)<")
_NAME_ATTRIBUTE = re.compile(rb"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def formula_hazard(raw: bytes) -> tuple[str, str] | None:
    """(code, what it does) of a formula's XML text that reaches out, else None."""
    text = _STRING.sub(b'""', _plain(raw)).upper()
    call = _CALL.search(text)
    if call is not None:
        return FORMULA_REACHES_OUT, _CALLS[call[1].decode("ascii")]
    if _EXTERNAL.search(text):
        return EXTERNAL_REFERENCE, ""
    if b"|" in text:
        return FORMULA_REACHES_OUT, _DDE
    return None


def _plain(raw: bytes) -> bytes:
    """XML text as the formula reads (a name may be spelt with character references)."""
    if b"&" not in raw:
        return raw
    if b"&#" in raw:
        return html.unescape(raw.decode("utf-8", "replace")).encode("utf-8")
    for entity, char in _ENTITIES:
        raw = raw.replace(entity, char)
    return raw


_ENTITIES = ((b"&quot;", b'"'), (b"&apos;", b"'"), (b"&lt;", b"<"), (b"&gt;", b">"),
             (b"&amp;", b"&"))  # "&amp;" last: "&amp;lt;" is the text "&lt;"


def sheet_hazards(sheet: str, formulas: dict[tuple[int, int], tuple[bytes, bytes]],
                  data: bytes) -> list[Hazard]:
    """The cells of one sheet whose formulas reach out, and its rules that do.

    Parameters
    ----------
    sheet : str
        The sheet's name.
    formulas : dict
        (row, column) -> (``<f>`` attributes, ``<f>`` text), as the sheet scan found.
    data : bytes
        The sheet's XML (only the part after its cells is searched here).
    """
    found = []
    if _suspect(b"\x00".join(map(itemgetter(1), formulas.values()))):
        # rare: formula by formula
        for (row, col), (_attrs, raw) in formulas.items():
            hazard = formula_hazard(raw)
            if hazard is not None:
                ref = cell_name(row, col)
                found.append(Hazard(hazard[0], f"Cell {_quoted(sheet)}!{ref}", sheet, ref,
                                    hazard[1], _shown(raw)))
    end = data.rfind(b"</sheetData>")
    for rule in _RULE_FORMULA.finditer(data, max(end, 0)):
        hazard = formula_hazard(rule[1])
        if hazard is not None:
            found.append(Hazard(hazard[0], f"A conditional format or data validation rule "
                                f"on sheet '{sheet}'", sheet, "", hazard[1],
                                _shown(rule[1])))
    return found


def _suspect(texts: bytes) -> bool:
    """Whether some formula of ``texts`` (joined by NUL) may reach out (never False
    when one does).

    A pack's own formulas differ mostly in their row numbers: without digits and "$"
    the 9,500 formulas of a 500-case pack are a few dozen distinct texts, searched
    in a hundredth of the time the 1.7 MB of them take.
    """
    distinct = b"\x00".join(set(texts.translate(None, _DIGITS).split(b"\x00")))
    distinct = distinct.upper()  # Excel reads "webservice(" as WEBSERVICE
    return any(literal in distinct for literal in _SUSPECT)


def name_hazards(workbook: bytes) -> list[Hazard]:
    """Defined names (``xl/workbook.xml``) whose formula reaches out: a cell ``=Leak``
    calls what the name holds."""
    found = []
    for defined in _DEFINED_NAME.finditer(workbook):
        hazard = formula_hazard(defined[2])
        if hazard is not None:
            name = _NAME_ATTRIBUTE.search(defined[1])
            shown = (name[1] if name[1] is not None else name[2]) if name else b""
            where = f"The defined name '{shown.decode('utf-8', 'replace')}'"
            found.append(Hazard(hazard[0], where, detail=hazard[1], value=_shown(defined[2])))
    return found


def _shown(raw: bytes) -> str:
    """A formula's XML text as Excel shows it, with its "="."""
    return "=" + _plain(raw).decode("utf-8", "replace")


def _quoted(sheet: str) -> str:
    """A sheet name as a formula writes it before "!" (quoted when not a plain word)."""
    return sheet if re.fullmatch(r"[A-Za-z_][\w.]*", sheet) else \
        "'" + sheet.replace("'", "''") + "'"
