"""Issues found in returned workbooks and the report of them.

Every problem the collector finds is an :class:`Issue` with a stable kebab-case
``code`` from :data:`CATALOGUE` (:mod:`.issue_catalogue`), a severity (``error``:
the file contributes no ratings until it is fixed; ``warning``: the ratings are used,
but someone should look), a message that says what to do, and where it is (file,
sheet, cell, rater, case, label, dimension). The checks on a file's content that take
plain data are in :mod:`.content_checks`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .issue_catalogue import CATALOGUE, ERROR, WARNING


@dataclass(frozen=True, order=True)
class Issue:
    """One problem found in one returned file (or, ``journal-damaged``, in the study's
    mail journal).

    Attributes
    ----------
    file : str
        The file name (as given to collect).
    code : str
        A key of :data:`CATALOGUE`.
    severity : str
        ``"error"`` or ``"warning"``.
    message : str
        What is wrong and what to do, for a rater or coordinator.
    sheet, cell : str
        Sheet name and A1 address ("" when not about a cell).
    rater, case, label, dimension : str
        Who and what the issue is about ("" when unknown or not applicable).
    value : str
        The offending raw value, as text.
    read : str
        For an issue of :data:`MARKED_READ`: when the coordinator marked the file
        read, and where that is recorded (:mod:`.text_read`); "" while unread.
    """

    file: str
    code: str
    severity: str = field(compare=False)
    message: str = field(compare=False)
    sheet: str = ""
    cell: str = ""
    rater: str = ""
    case: str = ""
    label: str = ""
    dimension: str = ""
    value: str = ""
    read: str = field(default="", compare=False)

    def sort_key(self) -> tuple:
        """Order: file, sheet, row, column, code (so reports read top to bottom)."""
        return (self.file, self.sheet, *cell_order(self.cell), self.code, self.case,
                self.label, self.dimension, self.message)

    def to_dict(self) -> dict[str, str]:
        """The issue as a flat dict of strings (for JSON and tables)."""
        return asdict(self)


def issue(code: str, *, file: str = "", sheet: str = "", cell: str = "", rater: str = "",
          case: str = "", label: str = "", dimension: str = "", value: Any = "",
          **fields: Any) -> Issue:
    """Make an :class:`Issue` of catalogue type ``code``, filling its message template.

    Parameters
    ----------
    code : str
        A key of :data:`CATALOGUE` (KeyError otherwise).
    file, sheet, cell, rater, case, label, dimension : str
        Where the issue is.
    value : object
        The offending raw value (shown in the message and kept as text).
    **fields
        Extra template fields: ``detail``, ``expected``, ``accepted``, ``what``,
        ``beside``, ``caveat`` (a whole sentence of sheetflow's own), ``versions`` (how
        a workbook's spec differs from the study's, in sheetflow's words), ``collect`` (the
        whole command that collects the study again, e.g. ``sheetflow collect my-study``,
        for the codes whose message says to run it), ``verb``, ``noun``, ``it`` (the
        words of a column issue, singular or plural: :mod:`.columns`).

    Returns
    -------
    Issue
    """
    kind = CATALOGUE[code]
    shown = show_value(value)
    context = {"file": file, "sheet": sheet, "cell": cell, "rater": rater, "case": case,
               "label": label, "dimension": dimension, "value": shown, "detail": "",
               "expected": "", "accepted": "", "what": cell or dimension or "cell"}
    # the rater's values are cut (a pasted essay); sheetflow's own words are not: a
    # question's description cut at 80 characters lost "response A" off its end
    context.update({k: str(v) if k in _OWN_WORDS and v is not None else show_value(v)
                    for k, v in fields.items()})
    return Issue(file=file, code=code, severity=kind.severity,
                 message=kind.template.format_map(context), sheet=sheet, cell=cell,
                 rater=rater, case=case, label=label, dimension=dimension, value=shown)


_OWN_WORDS = ("what", "expected", "beside", "caveat", "collect", "versions")
"""Message fields that hold sheetflow's own words (never cut, unlike a cell's value)."""


def show_value(value: Any) -> str:
    """A raw value as text for a message: whole floats without '.0', long text cut."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def sort_issues(issues: Iterable[Issue]) -> list[Issue]:
    """Issues in a stable reading order."""
    return sorted(issues, key=Issue.sort_key)


def errors_first(issues: Iterable[Issue]) -> list[Issue]:
    """Issues with every error before every warning, each part in :func:`sort_issues`'s
    order (file, sheet, row, column): the Issues sheet's order, so that what stops a
    file heads the sheet instead of sitting among warnings."""
    return sorted(issues, key=lambda i: (i.severity != ERROR, i.sort_key()))


def has_errors(issues: Iterable[Issue]) -> bool:
    """Whether any issue is an error."""
    return any(i.severity == ERROR for i in issues)


UNREAD_TEXT = frozenset({"text-outside-answers", "sent-text-changed", "content-outside-window",
                         "sheet-added",
                         "cell-comment", "drawing-text", "property-text",
                         "header-footer-text", "extra-part"})
"""Warnings of a return holding something its rater wrote that sheetflow does not read:
named where it is, and ``collect`` and ``status`` exit 1 while a return used holds any
the coordinator has not marked read (:mod:`.text_read`: then :attr:`Issue.read` says so).
The other warnings about a file keep exit 0: what they name was read (a sheet renamed,
hidden or shown, a word count out of range) or holds nothing written (a sheet of
instructions deleted)."""
SENDER_CHECK = frozenset({"sender-unknown", "sender-not-rater"})
"""Warnings of a return carried by a message from another rater's address or from no
rater's: the one sign that someone returned a workbook for someone else. ``collect``
and ``status`` exit 1 while a return used came so and the coordinator has not marked
it read (:mod:`.text_read`), as for :data:`UNREAD_TEXT`."""
MARKED_READ = UNREAD_TEXT | SENDER_CHECK
"""The codes ``collect --mark-read FILE`` acknowledges (:mod:`.text_read`)."""
SET_ASIDE = frozenset({"superseded", "pack-as-sent-again", "blank-copy-again"})
"""Codes of a file not used because the rater's other file stands for them."""


LEFT_OUT_BESIDE = "unusable-beside-used"
"""Code of a file that could not be read or identified, tied to a rater whose return is
used (:func:`.links.beside_used`): left out, it asks nothing of the rater, yet it is
named, and its error keeps the exit code 1, until the coordinator removes it."""


def left_out_files(issues: Iterable[Issue]) -> set[str]:
    """Files left out beside their rater's return used (:data:`LEFT_OUT_BESIDE`)."""
    return set(left_out_messages(issues))


def left_out_messages(issues: Iterable[Issue]) -> dict[str, str]:
    """Each file left out beside its rater's return used (:data:`LEFT_OUT_BESIDE`) ->
    its warning's message: whose return is used and what to do."""
    return {i.file: i.message for i in issues if i.code == LEFT_OUT_BESIDE}


def not_the_raters(issues: Iterable[Issue]) -> set[str]:
    """Files whose problems are not the rater's to fix: set aside for their other file
    (:func:`set_aside_files`) or left out beside the return used (:func:`left_out_files`).
    Unlike the first, the second still makes the report invalid: the file is to remove."""
    return set_aside_files(issues) | left_out_files(issues)


def set_aside_files(issues: Iterable[Issue]) -> set[str]:
    """Files not used because the rater's other file stands for them (:data:`SET_ASIDE`)."""
    return {i.file for i in issues if i.code in SET_ASIDE}


def counted_files(files: list[FileStatus], set_aside: set[str]) -> list[FileStatus]:
    """A pack's files whose problems are the rater's: all but those set aside for
    their other file (:func:`set_aside_files`; these stay on the Issues sheet)."""
    return [f for f in files if f.file not in set_aside] or files


def cell_order(cell: str) -> tuple[int, int]:
    """(row, column) of an A1 address for sorting; (0, 0) when none."""
    letters = "".join(ch for ch in cell if ch.isalpha())
    digits = "".join(ch for ch in cell if ch.isdigit())
    col = 0
    for ch in letters.upper():
        col = col * 26 + ord(ch) - 64
    return (int(digits) if digits else 0, col)


# --------------------------------------------------------------------------- report


@dataclass
class FileStatus:
    """The outcome for one input file.

    Attributes
    ----------
    file : str
        File name as given.
    sha256 : str
        Hex digest of its bytes.
    rater : str
        The rater it belongs to ("" when unknown).
    pack_id : str
        The pack (rater and sitting) it was identified as.
    used : bool
        Whether its ratings are in the ratings table.
    errors, warnings : int
        Counts of its issues.
    answered, required, marks_held, marks : int
        Required answer cells filled in, and in total (the pack's progress line's N);
        marks whose blank is an answer (``blank_means``) holding one (not refused), and
        in total: percent complete counts both.
    entered : int
        Answer cells of any kind holding anything (0: nothing was filled in).
    path : str
        Where it was read: relative to the study folder when inside it (``returns/...``).
    linked, linked_raters, link : list of str, list of str, str
        For a file identified as no pack: the packs (and raters) evidence ties it to,
        and that evidence in words (see :mod:`.links`).
    sender, sender_rater : str
        The address the file's message came from, when known (a saved message's
        ``From``, or the mail journal's record of a file ``fetch`` saved), and the
        rater whose address that is ("" when none).
    """

    file: str
    sha256: str
    rater: str = ""
    pack_id: str = ""
    used: bool = False
    errors: int = 0
    warnings: int = 0
    answered: int = 0
    required: int = 0
    marks_held: int = 0
    marks: int = 0
    entered: int = 0
    answers_read: bool = True
    path: str = ""
    linked: list[str] = field(default_factory=list)
    linked_raters: list[str] = field(default_factory=list)
    link: str = ""
    sender: str = ""
    sender_rater: str = ""

    @property
    def no_answers(self) -> bool:
        """Whether the file is a pack whose answers were read and not one answer cell
        holds anything (often the blank copy sent instead of the filled one)."""
        return bool(self.pack_id) and self.answers_read and not self.entered

    @property
    def percent_complete(self) -> float | None:
        """Share of answers given, 0-100, of the required answers and the marks whose
        blank stands for an answer (100 when there are none, 0 for a file that is not a
        known pack: an empty or foreign file is not complete); None when the pack's
        answers could not be read (its sheet missing, its lines moved): nothing is
        known of them, and "100%" of nothing read was shown."""
        if not self.pack_id:
            return 0.0
        if not self.answers_read:
            return None
        given, asked = self.answered + self.marks_held, self.required + self.marks
        return 100.0 if not asked else round(100.0 * given / asked, 1)

    def to_dict(self) -> dict[str, Any]:
        """The status as a plain dict."""
        data = asdict(self)
        data["percent_complete"] = self.percent_complete
        return data


@dataclass
class ValidationReport:
    """Every issue of every file, and each file's status.

    Attributes
    ----------
    files : list of FileStatus
        One per input file, sorted by file name.
    issues : list of Issue
        Sorted with :func:`sort_issues`.
    """

    files: list[FileStatus]
    issues: list[Issue]

    @property
    def valid(self) -> bool:
        """True when no file has an error, but a file set aside for the rater's newer
        one (:data:`SET_ASIDE`: its errors were what the reply asked to fix)."""
        aside = set_aside_files(self.issues)
        return not has_errors(i for i in self.issues if i.file not in aside)

    def unread_text_files(self) -> list[str]:
        """The returns used that hold text sheetflow does not read (:data:`UNREAD_TEXT`)
        and the coordinator has not marked read (:mod:`.text_read`), in the report's
        order."""
        holding = {i.file for i in self.issues if i.code in UNREAD_TEXT and not i.read}
        return [f.file for f in self.files if f.used and f.file in holding]

    def unchecked_sender_files(self, used_only: bool = True) -> list[str]:
        """The returns used (without ``used_only``, every return of a pack, used or not)
        whose message came from another rater's address, from no rater's or with no
        single sender (:data:`SENDER_CHECK`) and the coordinator has not marked read
        (:mod:`.text_read`), in the report's order. A file of no pack is left out: it
        is named apart, with how to find who sent it."""
        holding = {i.file for i in self.issues if i.code in SENDER_CHECK and not i.read}
        return [f.file for f in self.files
                if (f.used or (f.pack_id and not used_only)) and f.file in holding]

    def text_read_files(self) -> list[str]:
        """The returns used the coordinator marked read (:mod:`.text_read`): their text
        sheetflow does not read, or who sent them, in the report's order."""
        marked = {i.file for i in self.issues if i.code in MARKED_READ and i.read}
        return [f.file for f in self.files if f.used and f.file in marked]

    @property
    def set_aside_error_count(self) -> int:
        """Errors in files set aside for the rater's newer one (history, not to fix)."""
        aside = set_aside_files(self.issues)
        return sum(i.severity == ERROR for i in self.issues if i.file in aside)

    @property
    def error_count(self) -> int:
        """Number of error issues."""
        return sum(i.severity == ERROR for i in self.issues)

    @property
    def warning_count(self) -> int:
        """Number of warning issues."""
        return sum(i.severity == WARNING for i in self.issues)

    def codes(self) -> Counter:
        """How often each code occurs."""
        return Counter(i.code for i in self.issues)

    def originals(self) -> dict[str, FileStatus]:
        """sha256 -> the file identified as a pack with those bytes: the original of any
        exact copy (collect reads a copy once; the copy is identified as no pack)."""
        return {f.sha256: f for f in self.files if f.pack_id and f.sha256}

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "valid": self.valid,
            "errors": self.error_count,
            "warnings": self.warning_count,
            "files": [f.to_dict() for f in self.files],
            "issues": [i.to_dict() for i in self.issues],
        }


def cell_name(row: int, col: int) -> str:
    """The A1 address of (row, column)."""
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row}"
