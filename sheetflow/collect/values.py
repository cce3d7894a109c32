"""Turn one raw answer cell into the value it stands for, per dimension kind.

The collector reads cells as the spreadsheet stored them: a number (always a float
after a LibreOffice save), a string, a bool, a date, a formula, or nothing. This
module decides, for one dimension, what that cell means and whether the rater must
fix it. It does no I/O and knows nothing about workbooks.

Policy (documented in ``docs/issue-codes.md``):

- A number stored as text (``'5'``, ``'+5'``, ``'5.0'``, ``'5 '``, fullwidth ``'５'``:
  ASCII digits, an optional sign and decimal point, trailing spaces, tabs and line
  breaks; full-width forms only, not circled or superscript digits) is read as that
  number with the warning ``number-stored-as-text`` (``'5.5'`` in a whole-number field
  is then ``value-not-whole``); the same after a space (``' 5'``) is
  ``number-after-space``, as the pack marks it red; anything else in text
  (``' five'``, ``'3,0'``, ``'1_0'``, ``'1e3'``) is ``value-not-a-number``: Python's
  number syntax (underscores, exponents, ``inf``) is not read.
- A text answer keeps its tabs and line breaks but not other control characters (a
  pasted NUL or bell; a vertical tab or form feed becomes a line break): the warning
  ``text-control-characters`` names the cell. Blank is what the pack's blank test
  leaves nothing of: spaces (plain, non-breaking, ideographic), zero-width spaces and
  control characters; an em space or a line separator alone is filled there and here.
- A number cell is read as a spreadsheet shows it, to 15 significant digits
  (``3.0000000000000004`` is 3).
- A number beyond :data:`MAX_WHOLE` (10^9; ``1E+308`` is one) is ``value-too-large``.
- An Excel error value (``#DIV/0!``, ``#N/A``) is ``error-value``, never a blank.
- ``5.5`` in a whole-number field is ``value-not-whole``; ``3.14159`` in a field that
  allows 2 decimals is ``too-many-decimals`` (at the 15 digits shown, so
  ``12.2500000001`` too); outside the allowed range it is ``value-out-of-domain``.
- A label that differs from an allowed one only in letter case, spacing, hyphens or
  underscores for spaces, or invisible characters (``'high '``, ``'a>b'``,
  ``'A > B'``, ``'Over refusal'``, ``'A\\u200b>B'``), or a yes/no word where the labels
  are yes/no words (``'yes'`` for the flag ``Y``), is accepted as that label with the
  warning ``label-normalised`` when no other label reads the same
  (:mod:`sheetflow.spec.labels`): the meaning is unambiguous, and rejecting it would
  cost a whole round trip. Any other label is ``value-out-of-domain``.
- Dates, booleans and formulas are never answers: ``date-in-answer``,
  ``bool-in-answer``, ``formula-in-answer`` (a formula's cached value cannot be
  trusted, see EXCEL-FACTS finding 3).
- A batch start or end time (:func:`parse_time`) is a date and time as the spreadsheet
  stores it (a date-time, or a serial day number with its fraction) or text such as
  ``2026-11-02 14:05``. A time of day alone (``14:05``, a fraction of a day) is still
  read, but the caller warns (``batch-time-no-date``): without the date the 24 hours
  between sittings (protocol 001) cannot be checked. Anything else is
  ``batch-time-invalid``.
- A message quotes a number formatted as a percentage as one (:func:`percent_text`):
  the rater typed or sees ``3%``, not the ``0.03`` stored; a date or time as it
  shows (:func:`date_text`): ``2026-01-05`` and ``12:30``, not ``2026-01-05T00:00:00``
  and ``12:30:00``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..spec.labels import label_key, loose_keys
from ..spec.rubric import CONFIDENCE_LEVELS, YES_NO, Dimension
from ..words import counted

_INVISIBLE_CHARS = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_INVISIBLE = dict.fromkeys(map(ord, _INVISIBLE_CHARS))
_CONTROLS = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
# blank is what the pack's blank test (packs/rules.py ``_cleaned``) leaves nothing of:
# spaces (plain, non-breaking, ideographic), the zero-width space, and the control
# characters its CLEAN drops (0x00-0x1F in Excel, DEL and 0x80-0x9F too in
# LibreOffice). Other spaces and invisible characters (an em space, a line separator,
# a soft hyphen) are filled there, so they are not blank here either
_BLANK_CHARS = " \u00a0\u3000\u200b" + _CONTROLS
_BLANK = dict.fromkeys(map(ord, _BLANK_CHARS))
# the spaces the pack reads around a number or a label (``loose_text``: tab, line
# breaks, non-breaking space made spaces, then TRIM): an em space or a line separator
# after a number is red there, so it is not forgiven here
_PACK_SPACES = " \t\n\r\u00a0"
# full-width ASCII (Ｕ+FF01-FF5E: an East Asian input method's digits, signs and
# letters), what the pack's ASC reads as ASCII; NFKC would also read circled,
# superscript and mathematical digits (③ ³ 𝟑), which the pack shows red
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
# control characters a text answer loses (CLEAN's), keeping tab and line breaks; a
# vertical tab or form feed is Word's line break, pasted, and stays one
_TEXT_CONTROLS: dict[int, str | None] = {
    **dict.fromkeys(map(ord, _CONTROLS)), 9: "\t", 10: "\n", 13: "\r", 11: "\n", 12: "\n"}
_WHOLE_TEXT = re.compile(r"[+-]?\d+(?:\.0*)?", re.ASCII)
_DECIMAL_TEXT = re.compile(r"[+-]?\d*\.\d+", re.ASCII)
MAX_WHOLE = 10**9
"""The largest whole number an answer may hold: no count or score in a rating comes
near it, so a larger cell (1E+308, a pasted id) is a slip, not a value."""
_TIME_TEXT = re.compile(r"\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*", re.ASCII)
_DATETIME_TEXT = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*", re.ASCII)
_EXCEL_EPOCH = dt.datetime(1899, 12, 30)  # serial 1 = 1900-01-01 (1900 date system)
_EPOCH_1904 = dt.datetime(1904, 1, 1)  # serial 0 in the 1904 date system


class Formula:
    """A cell that holds a formula (``text`` without the leading ``=``).

    Parameters
    ----------
    text : str or bytes
        The formula's text, as openpyxl shows it; or, with ``unescape``, the
        ``<f>`` element's XML text as written.
    unescape : callable, optional
        Turns the XML text into the shown text, on first use: a 500-case pack has
        some 9,000 formula cells (its own helper formulas), of which the checks read
        a handful.
    """

    __slots__ = ("_text", "_unescape")

    def __init__(self, text: str | bytes, unescape: Callable[[bytes], str] | None = None):
        self._text = text
        self._unescape = unescape

    @property
    def text(self) -> str:
        """The formula's text without the leading ``=``."""
        if self._unescape is not None:
            self._text, self._unescape = self._unescape(self._text), None
        return self._text

    def __eq__(self, other: object) -> bool:
        return type(other) is Formula and other.text == self.text

    def __hash__(self) -> int:
        return hash((Formula, self.text))

    def __repr__(self) -> str:
        return f"Formula(text={self.text!r})"

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return Formula, (self.text,)  # pickled as its shown text (sent to the parent)


@dataclass(frozen=True)
class ExcelError:
    """A cell that holds an Excel error value (``#DIV/0!``, ``#N/A``, ``#VALUE!``...)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ParsedValue:
    """What one cell means for one dimension.

    Attributes
    ----------
    value : int, str or None
        The accepted value (None when blank or rejected).
    code : str or None
        An issue code from :data:`sheetflow.collect.validate.CATALOGUE`, or None when clean.
    expected : str
        What the cell allows, in words (used in the issue message).
    """

    value: Any
    code: str | None = None
    expected: str = ""

    @property
    def blank(self) -> bool:
        """Whether the cell was empty (and nothing is wrong with it)."""
        return self.value is None and self.code is None


def is_blank(raw: Any) -> bool:
    """Whether a raw cell counts as empty (None, or text with only spaces, the
    zero-width space and control characters, as the pack's blank test reads it)."""
    if raw is None:
        return True
    if not isinstance(raw, str):
        return False
    # a visible first character settles it without translating a long text
    if raw and raw[0] not in _BLANK_CHARS:
        return False
    return not raw.translate(_BLANK)


def parse_value(dimension: Dimension, raw: Any) -> ParsedValue:
    """Parse the raw cell ``raw`` as an answer to ``dimension``.

    Parameters
    ----------
    dimension : Dimension
        The rubric dimension (any kind in :data:`sheetflow.spec.rubric.KINDS`). For a
        checklist, ``raw`` is one question's Yes/No cell.
    raw : object
        The cell as read: None, str, int, float, bool, date/datetime/time or
        :class:`Formula`.

    Returns
    -------
    ParsedValue
        ``value`` is an int for count/scale/number (or the N/A label of a scale),
        the allowed label for label kinds and checklists, the text for text.
        A blank cell gives ``ParsedValue(None)``; whether blank is allowed is the
        caller's decision (``Dimension.required``, ``blank_means``).

    Examples
    --------
    >>> from sheetflow.spec.rubric import Dimension
    >>> likert = Dimension("q", "Q", "scale", minimum=1, maximum=5)
    >>> parse_value(likert, "5 ")
    ParsedValue(value=5, code='number-stored-as-text', expected='a whole number from 1 to 5')
    >>> parse_value(likert, 5.5).code
    'value-not-whole'
    """
    cache = _clean_cache(dimension) if type(raw) in _PLAIN else None
    if cache is not None and raw in cache:
        return cache[raw]
    parsed = _parse_value(dimension, raw)
    if cache is not None and parsed.code is None and parsed.value is not None \
            and len(cache) < _CACHE_SIZE:
        cache[raw] = parsed
    return parsed


# Most answer cells hold one of a few clean values (a label, a small number); their
# ParsedValue is kept per dimension, by id, for cells of an exact plain type (a bool
# equals 1 as a dict key, so it never comes this way).
_PLAIN = (str, int, float)
_CACHE_SIZE = 256
_CLEAN: dict[int, tuple[Dimension, dict[Any, ParsedValue]]] = {}


def _clean_cache(dimension: Dimension) -> dict[Any, ParsedValue] | None:
    if dimension.kind == "text":
        return None
    entry = _CLEAN.get(id(dimension))
    if entry is None or entry[0] is not dimension:
        if len(_CLEAN) > 1024:
            _CLEAN.clear()
        entry = _CLEAN[id(dimension)] = (dimension, {})
    return entry[1]


def _parse_value(dimension: Dimension, raw: Any) -> ParsedValue:
    kind_error = _reject_kind(raw)
    if kind_error is not None:
        return ParsedValue(None, kind_error, describe_domain(dimension))
    if is_blank(raw):
        return ParsedValue(None)
    if dimension.kind in ("count", "scale", "number"):
        return _parse_whole(dimension, raw)
    if dimension.kind == "text":
        return _parse_text(raw)
    return _parse_label(raw, _labels(dimension), describe_domain(dimension))


def parse_confidence(raw: Any) -> ParsedValue:
    """Parse a Low/Medium/High confidence cell (same rules as a label)."""
    if type(raw) is str and raw in _CONFIDENCE_CLEAN:
        return _CONFIDENCE_CLEAN[raw]
    kind_error = _reject_kind(raw)
    expected = CONFIDENCE_DOMAIN
    if kind_error is not None:
        return ParsedValue(None, kind_error, expected)
    if is_blank(raw):
        return ParsedValue(None)
    return _parse_label(raw, CONFIDENCE_LEVELS, expected)


def parse_time(raw: Any, date1904: bool = False) -> ParsedValue:
    """Parse a batch start or end time cell.

    Parameters
    ----------
    raw : object
        The cell as read.
    date1904 : bool
        Whether the workbook counts dates from 1904: a serial day number (a date-time
        whose format was lost) then counts from 1904-01-01.

    Returns
    -------
    ParsedValue
        ``value`` is a :class:`datetime.datetime` when the cell holds a date and time,
        a :class:`datetime.time` when it holds a time of day alone; blank gives
        ``ParsedValue(None)``; anything else has the code ``batch-time-invalid``.

    Examples
    --------
    >>> parse_time("2026-11-02 14:05").value
    datetime.datetime(2026, 11, 2, 14, 5)
    >>> parse_time(46328.5).value
    datetime.datetime(2026, 11, 2, 12, 0)
    >>> parse_time("14:05").value
    datetime.time(14, 5)
    >>> parse_time("after lunch").code
    'batch-time-invalid'
    """
    expected = "a date and time such as 2026-11-02 14:05"
    if is_blank(raw):
        return ParsedValue(None)
    value = _time_of(raw, date1904)
    if value is None:
        return ParsedValue(None, "batch-time-invalid", expected)
    return ParsedValue(value, None, expected)


def _time_of(raw: Any, date1904: bool = False) -> dt.time | dt.datetime | None:
    if isinstance(raw, (Formula, ExcelError, bool)):
        return None
    if isinstance(raw, (dt.time, dt.datetime)):
        return raw
    if isinstance(raw, dt.timedelta):
        raw = raw.total_seconds() / 86400
    if isinstance(raw, dt.date):
        return dt.datetime(raw.year, raw.month, raw.day)
    if isinstance(raw, (int, float)) and math.isfinite(raw) and 0 <= raw < 1:
        seconds = round(raw * 86400)
        return None if seconds >= 86400 else dt.time(seconds // 3600, seconds // 60 % 60,
                                                     seconds % 60)
    low, epoch = (35064, _EPOCH_1904) if date1904 else (36526, _EXCEL_EPOCH)
    if isinstance(raw, (int, float)) and math.isfinite(raw) and low <= raw < low + 36525:
        # a date-time serial (2000-2099) whose number format was lost
        return epoch + dt.timedelta(seconds=round(raw * 86400))
    if isinstance(raw, str):
        # full-width digits and colons read as ASCII (an ideographic space as a space),
        # as for a number; circled or superscript digits (③ ³) are no time
        return _time_text(raw.translate(_FULL_WIDTH).replace("\u3000", " "))
    return None


def _time_text(text: str) -> dt.time | dt.datetime | None:
    """``2026-11-02 14:05`` (or with ``T``) or ``14:05`` typed as text."""
    full = _DATETIME_TEXT.fullmatch(text)
    if full:
        try:
            return dt.datetime(*(int(g or 0) for g in full.groups()))
        except ValueError:
            return None
    match = _TIME_TEXT.fullmatch(text)
    if match:
        hour, minute, second = (int(g or 0) for g in match.groups())
        if hour < 24 and minute < 60 and second < 60:
            return dt.time(hour, minute, second)
    return None


CONFIDENCE_DOMAIN = "one of " + ", ".join(repr(c) for c in CONFIDENCE_LEVELS)
"""What a confidence cell accepts, in a rater's words."""


_CONFIDENCE_CLEAN = {c: ParsedValue(c, None, CONFIDENCE_DOMAIN) for c in CONFIDENCE_LEVELS}


def describe_domain(dimension: Dimension) -> str:
    """What a cell of ``dimension`` accepts, in a rater's words."""
    cached = _DOMAINS.get(id(dimension))
    if cached is not None and cached[0] is dimension:
        return cached[1]
    if len(_DOMAINS) > 1024:
        _DOMAINS.clear()
    text = _describe_domain(dimension)
    _DOMAINS[id(dimension)] = (dimension, text)
    return text


# id -> (dimension, text): every answer cell asks, and the text never changes
_DOMAINS: dict[int, tuple[Dimension, str]] = {}


def _describe_domain(dimension: Dimension) -> str:
    kind = dimension.kind
    if kind == "count" or (kind == "number" and dimension.maximum is None):
        top, low = dimension.maximum, dimension.minimum or 0
        return f"a whole number {low} or more" if top is None \
            else f"a whole number from 0 to {top}"
    if kind == "number" and dimension.decimals:
        return (f"a number from {dimension.minimum} to {dimension.maximum} with at most "
                f"{counted(dimension.decimals, 'decimal')}")
    if kind in ("scale", "number"):
        text = f"a whole number from {dimension.minimum} to {dimension.maximum}"
        if dimension.na_choices:
            text += " or " + " or ".join(repr(c) for c in dimension.na_choices)
        return text
    if kind == "text":
        return "text"
    if kind == "flag":  # a single mark, optional: "one of 'Y'" read as a riddle
        return f"{dimension.choices[0]}, or leave it blank"
    return _one_of(_labels(dimension))


# --------------------------------------------------------------------------- helpers


def _labels(dimension: Dimension) -> tuple[str, ...]:
    if dimension.kind == "checklist":
        return YES_NO
    return dimension.choices


def _one_of(labels: tuple[str, ...]) -> str:
    return "one of " + ", ".join(repr(c) for c in labels)


def _reject_kind(raw: Any) -> str | None:
    """The code for a cell type that is never an answer, else None."""
    if isinstance(raw, Formula):
        return "formula-in-answer"
    if isinstance(raw, ExcelError):
        return "error-value"
    if isinstance(raw, bool):
        return "bool-in-answer"
    if isinstance(raw, (dt.date, dt.datetime, dt.time, dt.timedelta)):
        return "date-in-answer"
    return None


def _parse_whole(dimension: Dimension, raw: Any) -> ParsedValue:
    expected = describe_domain(dimension)
    if isinstance(raw, str):
        label = _match_label(raw, dimension.na_choices)
        if label is not None:
            return ParsedValue(label[0], label[1], expected)
        number, code = _number_from_text(raw)
        if number is None:
            return ParsedValue(None, code, expected)
    else:
        number, code = _as_shown(float(raw)), None
    if not math.isfinite(number):
        return ParsedValue(None, "value-not-a-number", expected)
    if abs(number) > MAX_WHOLE:
        return ParsedValue(None, "value-too-large", expected)
    if not number.is_integer():
        places = dimension.decimals
        if not places:
            return ParsedValue(None, "value-not-whole", expected)
        # at the 15 digits shown, exactly: a looser tolerance took 12.2500000001 as
        # 12.25, a value the pack marks red (its ROUND test is exact to 15 digits)
        if round(number, places) != _as_shown(number):
            return ParsedValue(None, "too-many-decimals", expected)
        if not _in_range(dimension, number):
            return ParsedValue(None, "value-out-of-domain", expected)
        return ParsedValue(round(number, places), code, expected)
    whole = int(number)
    if not _in_range(dimension, whole):
        return ParsedValue(None, "value-out-of-domain", expected)
    return ParsedValue(whole, code, expected)


def _as_shown(number: float) -> float:
    """A number cell as a spreadsheet shows it: to 15 significant digits.

    A file may store 17 (``3.0000000000000004``, the sum of a paste or a formula
    turned into its value); Excel and LibreOffice show ``3``, and the rater who sees
    3 must not be told it is not a whole number.
    """
    return float(f"{number:.15g}") if math.isfinite(number) else number


def _in_range(dimension: Dimension, whole: float) -> bool:
    low = 0 if dimension.kind == "count" else dimension.minimum
    high = dimension.maximum
    return (low is None or whole >= low) and (high is None or whole <= high)


def _number_from_text(text: str) -> tuple[float | None, str]:
    """A number typed as text: ASCII digits, an optional sign and decimal point.

    '5', '+5', '5 ', '5.0', '.5', '５' parse (full-width digits are the ASCII ones,
    as the pack's ASC reads them); '5.5' parses (and is then not whole); ' five',
    '3,0', '1_0', '1e3', 'inf', digits of other scripts and other digit forms
    ('③', '³', '𝟑', '₂': red in the pack) do not: Python's own number syntax is not
    a spreadsheet's. Trailing spaces, tabs and line breaks are forgiven (a common
    slip); other spaces and invisible characters are not, as the pack. A leading
    space is not (``number-after-space``): the pack's highlight marks ' 5' red, by
    the same rule, in the packs already sent, and collect must not accept what the
    rater was shown as refused.
    """
    normal = text.translate(_FULL_WIDTH).rstrip(_PACK_SPACES)
    number = normal.lstrip()
    if not (_WHOLE_TEXT.fullmatch(number) or _DECIMAL_TEXT.fullmatch(number)):
        return None, "value-not-a-number"
    if number != normal:
        return None, "number-after-space"
    return float(number), "number-stored-as-text"


def _parse_label(raw: Any, labels: tuple[str, ...], expected: str) -> ParsedValue:
    text = _as_text(raw)
    found = _match_label(text, labels)
    if found is None:
        return ParsedValue(None, "value-out-of-domain", expected)
    return ParsedValue(found[0], found[1], expected)


def _match_label(text: str, labels: tuple[str, ...]) -> tuple[str, str | None] | None:
    """(label, code) when ``text`` is a label exactly (None) or loosely (a warning)."""
    if text in labels:
        return text, None
    if any(c.isspace() and c not in _PACK_SPACES and c not in _CONTROLS for c in text):
        # an em space, ideographic space or line separator in or around a label is red
        # in the pack (it reads only spaces, tabs and line breaks as spaces), where NFKC
        # and Python's split would make it a space
        return None
    key = _loose(text)
    matches = [label for label in labels if _loose(label) == key]
    if len(matches) == 1:
        return matches[0], "label-normalised"
    found = loose_keys(labels).get(label_key(text))  # spacing, hyphens, yes/no words
    return None if found is None else (found, "label-normalised")


def _loose(text: str) -> str:
    """Case-, width- and spacing-insensitive form of a label."""
    normal = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return " ".join(normal.split()).casefold()


def _parse_text(raw: Any) -> ParsedValue:
    """A text answer, without the control characters (NUL, a bell, a unit separator)
    a paste can bring: they show nothing, the pack's CLEAN drops them, and they break
    the programs that read ratings.csv. The rater's text is changed, so it is said
    (``text-control-characters``, a warning naming the cell)."""
    text = _as_text(raw)
    kept = text.translate(_TEXT_CONTROLS)
    return ParsedValue(kept, None if kept == text else "text-control-characters", "text")


def _as_text(raw: Any) -> str:
    """A cell as text; whole floats lose their '.0' (Excel stores every number as float)."""
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw)


# --------------------------------------------------------------------------- shown form


def percent_text(number: float, number_format: str) -> str | None:
    """``number`` as a cell with ``number_format`` shows it, when that is a percentage;
    None for any other format (the number is then quoted as stored).

    Typing ``3%`` stores 0.03 and formats the cell as a percentage, and so does pasting
    a cell formatted so: the rater sees 3%, and a message quoting "0.03" names a value
    they never saw. The percentage quoted is the stored number times 100, exactly;
    with a plain format (``0%``, ``0.00%``, ``#,##0.0%``) it has the format's
    decimals, and where those round it the shown form is given too.

    Parameters
    ----------
    number : float
        The cell's stored number.
    number_format : str
        The cell's number format code ("" when unknown).

    Returns
    -------
    str or None

    Examples
    --------
    >>> percent_text(0.03, "0%")
    '3%'
    >>> percent_text(0.5, "0.00%")
    '50.00%'
    >>> percent_text(0.035, "0%")
    '3.5% (shown as 4%)'
    >>> percent_text(0.03, "General") is None
    True
    """
    section = _format_section(number_format, number)
    if "%" not in section or not math.isfinite(number) or abs(number) >= MAX_WHOLE:
        return None
    percent = Decimal(repr(float(number))).scaleb(2)  # the shortest repr: what was typed
    exact = f"{percent.normalize():f}"
    simple = _SIMPLE_PERCENT.fullmatch(section.strip())
    if simple is None:  # literals, colours, conditions: the value, not its look
        return f"{exact}%"
    places = len(simple.group(2) or "")
    shown = percent.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)  # as Excel rounds
    text = f"{shown:,f}" if simple.group(1) else f"{shown:f}"
    return f"{text}%" if shown == percent else f"{exact}% (shown as {text}%)"


def date_text(value: dt.date | dt.time | dt.timedelta) -> str:
    """A date or time cell as a spreadsheet shows it, not as Python stores it.

    A date typed into a cell is stored as a date-time at midnight, a time of day as a
    time with seconds: quoting ``2026-01-05T00:00:00`` or ``12:30:00`` names a value
    the rater never saw. The date is given alone at midnight, the time without its
    seconds when they are 0, and never a fraction of a second.

    Parameters
    ----------
    value : datetime.date, datetime.time or datetime.timedelta
        The cell's stored value (a duration as some readers give a time).

    Returns
    -------
    str

    Examples
    --------
    >>> date_text(dt.datetime(2026, 1, 5))
    '2026-01-05'
    >>> date_text(dt.datetime(2026, 1, 5, 14, 5))
    '2026-01-05 14:05'
    >>> date_text(dt.time(12, 30))
    '12:30'
    >>> date_text(dt.timedelta(hours=26, seconds=7))
    '26:00:07'
    """
    if isinstance(value, dt.timedelta):
        minutes, seconds = divmod(int(value.total_seconds()), 60)
        return _clock(*divmod(minutes, 60), seconds)
    if isinstance(value, dt.datetime):
        if value.time() == dt.time():
            return value.date().isoformat()
        return f"{value.date().isoformat()} {date_text(value.time())}"
    if isinstance(value, dt.time):
        return _clock(value.hour, value.minute, value.second)
    return value.isoformat()


def _clock(hours: int, minutes: int, seconds: int) -> str:
    """``H:MM``, with ``:SS`` only when the seconds are not 0 (as a time is typed)."""
    return f"{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")


_SIMPLE_PERCENT = re.compile(r"[#0]*(,?)[#0]*0(?:\.(0+))?%")
# what a format section shows literally: quoted text, an escaped character, a colour or
# condition in brackets, the space of "_x" and the fill of "*x"
_FORMAT_LITERAL = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]|_.|\*.')


def _format_section(code: str, number: float) -> str:
    """The section of a number format that applies to ``number``, its literals (quoted
    text, escapes, brackets) removed: "pos;neg;zero;text", each part optional."""
    bare = _FORMAT_LITERAL.sub("", code)
    sections = bare.split(";")
    if number < 0 and len(sections) > 1:
        return sections[1]
    if number == 0 and len(sections) > 2:
        return sections[2]
    return sections[0]
