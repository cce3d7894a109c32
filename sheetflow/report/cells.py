"""Cells and tables of the analysis workbook: formats, typed writes, table sheets."""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from ..words import P_STEPS
from ..workbook.printing import fitted_widths, row_points, set_print, text_width
from .body import BodySheet, ColumnCells, typed
from .paging import keep_last_rows

if TYPE_CHECKING:  # a worker process writing feedback needs no analysis
    from ..analysis import Analysis

BAND_COLOURS = ("#C6EFCE", "#E2F0D9", "#FFEB9C", "#FFC7CE")  # best band first

OPTIONS = {"strings_to_formulas": False, "strings_to_urls": False,
            "strings_to_numbers": False, "nan_inf_to_errors": False}

def created(analysis: Analysis) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(analysis.study.date)
    except ValueError:
        return dt.datetime(2000, 1, 1)

FORMAT_PROPERTIES: dict[str, dict[str, Any] | list[dict[str, Any]]] = {
    "title": {"bold": True, "font_size": 14},
    "head": {"bold": True, "bg_color": "#D9E1F2", "border": 1, "text_wrap": True,
             "valign": "top"},
    "bold": {"bold": True, "valign": "top"},
    "wrap": {"text_wrap": True, "valign": "top"},
    # every cell of a table row sits at its top: a row made tall by one wrapped cell
    # keeps its other cells level with the first line
    "text": {"valign": "top"},
    "centre": {"text_wrap": True, "valign": "top", "align": "center"},
    "num": {"num_format": "0.000", "valign": "top"},
    "count": {"num_format": "0", "valign": "top"},
    "share": {"num_format": "0.0%", "valign": "top"},
    "tiny": {"num_format": "0.00E+00", "valign": "top"},
    # p-values to 3 significant digits, "< 0.001" below (the number stays exact)
    "p": [{"num_format": f, "valign": "top"} for f in
          ('"< 0.001"', "0.00000", "0.0000", "0.000")],
    # wrapped: the alpha block's band cell may carry a note beside the band
    "bands": [{"bg_color": c, "num_format": "0.000", "valign": "top", "text_wrap": True}
              for c in BAND_COLOURS],
    "pass": {"bg_color": "#C6EFCE", "valign": "top"},
    "fail": {"bg_color": "#FFC7CE", "valign": "top"},
    "grey": {"font_color": "#666666", "italic": True},
    "grey_wrap": {"font_color": "#666666", "italic": True, "text_wrap": True,
                  "valign": "top"},
    "status_pass": {"bold": True, "font_size": 14, "bg_color": "#C6EFCE", "text_wrap": True,
                    "valign": "top"},
    "status_fail": {"bold": True, "font_size": 14, "bg_color": "#FFC7CE", "text_wrap": True,
                    "valign": "top"},
    "status_other": {"bold": True, "font_size": 14, "bg_color": "#FFEB9C", "text_wrap": True,
                     "valign": "top"},
}
"""The workbooks' formats by name (a list: formats picked by a value, see
:func:`number_format`)."""


class Formats(dict):
    """The formats of :data:`FORMAT_PROPERTIES` for one workbook, each added to it when
    first asked for (``fmt[name]`` or ``fmt.get(name)``); others may be set as in a
    dict. A feedback workbook uses a third of them, and adding a format costs as much
    as writing a few dozen cells; a format never used leaves the file as it is
    (xlsxwriter writes the formats cells use, in the order they were first used)."""

    def __init__(self, wb: xlsxwriter.Workbook) -> None:
        super().__init__()
        self._wb = wb
        # each format made here, by its id, with its properties and its padded twin
        # (the formats are held here, so no id is reused)
        self._properties: dict[int, dict[str, Any]] = {}
        self._padded: dict[int, Any] = {}

    def __missing__(self, name: str) -> Any:
        properties = FORMAT_PROPERTIES[name]
        made = [self._made(p) for p in properties] \
            if isinstance(properties, list) else self._made(properties)
        self[name] = made
        return made

    def _made(self, properties: dict[str, Any]) -> Any:
        made = self._wb.add_format(properties)
        self._properties[id(made)] = properties
        return made

    def padded(self, made: Any) -> Any:
        """``made`` (a format this object made by name) with :data:`PAD` after its
        number; made once per format."""
        key = id(made)
        if key not in self._padded:
            properties = dict(self._properties[key])
            properties["num_format"] = with_room(str(properties.get("num_format", "General")))
            self._padded[key] = self._wb.add_format(properties)
        return self._padded[key]

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self or name in FORMAT_PROPERTIES else default


PAD = "_0"
"""The room a number keeps after it, a digit wide, where the column on its right holds
text: right-aligned against left-aligned text, a count of 1 beside "0 (R-3MD)" printed
as "1 0 (R-3MD)"."""


def with_room(num_format: str) -> str:
    """``num_format`` with :data:`PAD` after the number: after an exponent, two spaces
    (LibreOffice reads "_0" there as a digit of the exponent, printing 1.00E-9)."""
    return num_format + ('"  "' if "E+" in num_format else PAD)


def before_text(kinds: list[str]) -> list[bool]:
    """Per column (each its dtype's kind), whether it holds numbers and the column on
    its right does not: its numbers keep :data:`PAD` after them. A flag (kind "b") is
    text on the sheet (Yes, No)."""
    numeric = [kind in "fiu" for kind in kinds]
    return [here and not right for here, right in zip(numeric, [*numeric[1:], True],
                                                     strict=True)]


def formats(wb: xlsxwriter.Workbook) -> Formats:
    """The workbook's formats by name (see :class:`Formats`)."""
    return Formats(wb)


# column names of the analysis's tables in the words a reader of the sheet knows
HEADER_WORDS = {
    "ci_low": "95% CI low", "ci_high": "95% CI high", "n": "count",
    "n_units": "units", "n_raters": "raters", "n_ratings": "ratings",
    "n_boot": "bootstrap resamples", "n_boot_used": "resamples in interval",
    "n_pairable_units": "pairable units",
    "n_pairable_values": "pairable values", "p": "p", "p_o": "observed agreement",
    "p_e": "chance agreement", "se": "standard error", "df": "degrees of freedom",
    "df1": "degrees of freedom 1", "df2": "degrees of freedom 2", "f": "F",
    "z": "z", "rho": "Spearman rho", "icc": "ICC", "ac": "Gwet AC", "diff": "difference",
    "err_plus": "interval above", "err_minus": "interval below",
    "mcgraw_wong": "McGraw-Wong form", "shrout_fleiss": "Shrout-Fleiss form",
    "arm_x": "arm 1", "arm_y": "arm 2", "mean_x": "mean arm 1", "mean_y": "mean arm 2",
    "w_plus": "W+ (signed-rank sum)",
    # position bias: decisive judgements, those that chose the response under label A
    "n_chose_a": "chose A (count)", "share_a": "share chose A",
    # the position-free preference's two strata: the arm shown under label A, under B
    "n_first": "arm under A (count)", "k_first": "arm under A, chosen",
    "share_first": "arm under A, share chosen", "n_second": "arm under B (count)",
    "k_second": "arm under B, chosen", "share_second": "arm under B, share chosen",
    "rater1": "rater 1", "rater2": "rater 2",
    "sitting1": "sitting 1", "sitting2": "sitting 2", "total_sd": "total SD",
}
_COUNT_WORDS = ("n", "count", "errors", "refusal", "df", "df1", "df2", "internal", "seed")
_SHARE_WORDS = ("share", "rate", "yield", "pairwise_agreement", "within")


def header_words(column: Any) -> str:
    """A table column's header in words: ``ci_low`` -> "95% CI low", ``n_units`` ->
    "units", ``n_known`` -> "known (count)", any other ``a_b`` -> "a b"."""
    name = str(column)
    if name in HEADER_WORDS:
        return HEADER_WORDS[name]
    if name.startswith("n_"):
        return name[2:].replace("_", " ") + " (count)"
    return name.replace("_", " ")


def column_meaning(column: Any, values: pd.Series) -> str:
    """How a column's numbers read: "count", "share", "p" (a p-value) or "num"."""
    return _meaning(column, values.dtype.kind, _floats(values))


def _meaning(column: Any, kind: str, numbers: np.ndarray | None) -> str:
    """:func:`column_meaning` from the column's dtype kind and, for floats, its values."""
    by_name = _meaning_by_name(str(column).lower())
    if by_name in ("p", "count"):
        return by_name
    if kind in "iu":
        return "count"
    if numbers is None:
        return "num"
    if by_name == "share":
        defined = numbers[~np.isnan(numbers)]
        if bool(((defined >= 0) & (defined <= 1)).all()):
            return "share"
    if _whole_beyond_one(numbers):
        return "count"  # rank sums, scores, totals: "145", not "145.000"
    return "num"


@functools.lru_cache(maxsize=1024)
def _meaning_by_name(name: str) -> str:
    """What a column's (lower-case) name alone says of its numbers: "p", "count",
    "share" (if its values lie in [0, 1]) or "" (its values say). Cached: a feedback
    workbook per rater asks again for the same few names."""
    words = name.split("_")
    if name == "p" or name.startswith("p_fixed") or name.endswith("_p"):
        return "p"
    if words[0] == "n" or any(w in _COUNT_WORDS for w in words):
        return "count"
    return "share" if any(w in name for w in _SHARE_WORDS) else ""


def _whole_beyond_one(numbers: np.ndarray) -> bool:
    """Whether every finite value is a whole number and one is 2 or more in size: an
    estimate bounded by 1 (alpha, kappa, rho, ICC) that lands on 0 or 1 keeps its
    decimals."""
    finite = numbers[np.isfinite(numbers)]
    return bool(finite.size) and bool(np.all(finite == np.round(finite))) and \
        bool(np.abs(finite).max() >= 2)


# a p-value at or above each step takes the next of fmt["p"]: "< 0.001", then 5, 4 and 3
# decimals, as p_text writes it (one p form in cells and lines)
TINY = 0.0005  # a number below it (not 0) is shown as 1.00E-09: a tolerance is not 0.000


def number_format(meaning: str, value: float, fmt: dict[str, Any]) -> Any:
    """The format showing ``value`` by its column's meaning (see :func:`column_meaning`)."""
    if meaning == "p":
        # counted from the top so that a missing p (NaN) takes the last, as ever
        return fmt["p"][len(P_STEPS) - sum(abs(value) < step for step in P_STEPS)]
    if meaning == "num" and 0 < abs(value) < TINY:
        return fmt["tiny"]
    return fmt.get(meaning, fmt["num"])


def number_formats(meaning: str, values: np.ndarray,
                   fmt: dict[str, Any]) -> tuple[list[Any], list[int] | None]:
    """:func:`number_format` of each of ``values`` (finite), a column at a time: the
    formats, and which of them each value takes (None: the first, for all)."""
    if meaning == "p":
        size = np.abs(values)
        steps = len(P_STEPS) - sum((size < step).astype(np.int8) for step in P_STEPS)
        return list(fmt["p"]), steps.tolist()
    if meaning == "num":
        tiny = (np.abs(values) > 0) & (np.abs(values) < TINY)
        return [fmt["num"], fmt["tiny"]], tiny.astype(np.int8).tolist() if tiny.any() else None
    return [fmt.get(meaning, fmt["num"])], None


def write_cell(ws: Worksheet, row: int, col: int, value: Any, fmt: Any = None) -> None:
    """One cell by type (:func:`typed`); text only through write_string, missing
    numbers left blank."""
    kind, held = typed(value)
    if kind == "blank":
        ws.write_blank(row, col, None, fmt)
    elif kind == "number":
        ws.write_number(row, col, held, fmt)
    else:
        ws.write_string(row, col, held, fmt)


def table_worksheet(wb: xlsxwriter.Workbook, name: str) -> BodySheet:
    """A new sheet that :func:`write_table` can write into."""
    return wb.add_worksheet(name, worksheet_class=BodySheet)


class Column(NamedTuple):
    """One column of a table as plain values, read from pandas once (a feedback
    workbook's tables are small and many: reading a column costs more than writing
    its cells)."""

    label: Any
    """The table's column label (its header in words, its meaning, its own format)."""
    dtype: Any
    """The column's dtype (a categorical's, not its categories')."""
    listed: list[Any]
    """The values as Python objects (a categorical's as its categories' values)."""
    numbers: np.ndarray | None
    """For a float column, its values as a float array (missing as NaN)."""

    @property
    def values_dtype(self) -> Any:
        """The dtype of :attr:`listed` (a categorical's: its categories')."""
        return self.dtype.categories.dtype if isinstance(self.dtype, pd.CategoricalDtype) \
            else self.dtype

    @property
    def value_kind(self) -> str:
        """The kind of :attr:`values_dtype`, as pandas gives it."""
        return self.values_dtype.kind

    @property
    def kind(self) -> str:
        """:attr:`value_kind` for a numpy dtype, else "O" (text, mixed, or pd.NA)."""
        return plain_kind(self.dtype)


def plain_kind(dtype: Any) -> str:
    """A column's kind as :attr:`Column.kind` gives it, from its pandas dtype."""
    if isinstance(dtype, pd.CategoricalDtype):
        dtype = dtype.categories.dtype
    return dtype.kind if isinstance(dtype, np.dtype) else "O"


def plain_columns(table: pd.DataFrame) -> list[Column]:
    """Each column of ``table`` as a :class:`Column`."""
    out = []
    for label, values in table.items():
        dtype = values.dtype
        if isinstance(dtype, pd.CategoricalDtype):  # text kept as categories
            values = values.astype(dtype.categories.dtype)  # written as that text
        out.append(Column(label, dtype, values.tolist(), _floats(values)))
    return out


def _floats(values: pd.Series) -> np.ndarray | None:
    """A float column's values as a float array (missing as NaN); None for another."""
    if values.dtype.kind != "f":
        return None
    if isinstance(values.dtype, np.dtype):
        return values.to_numpy()  # itself: asking for NaN as missing copies it, slowly
    return values.to_numpy(dtype=float, na_value=np.nan)


def write_table(ws: BodySheet, top: int, table: pd.DataFrame, fmt: dict[str, Any], *,
                number_formats: dict[str, Any] | None = None, words: bool = True,
                widths: list[float] | None = None, padded: bool = False) -> int:
    """Write ``table`` with a header at row ``top``; return the next free row.

    Cells hold what :func:`write_cell` would write; the body (the rows under the
    header) is rendered a column at a time and handed to the sheet whole
    (:class:`~.body.BodySheet`: feedback workbooks for hundreds of raters write about
    a million cells). Numbers are formatted by their column's meaning
    (:func:`column_meaning`); ``number_formats`` gives some columns (by name) a format
    of their own. Headers are in words (:func:`header_words`) unless ``words`` is
    False. With ``widths`` (characters per column), text wider than its column wraps
    and its row is made tall enough. With ``padded`` (``fmt`` a :class:`Formats`, every
    format it holds made by name), the numbers of a column with text on its right keep
    :data:`PAD` after them (:func:`before_text`).
    """
    write_columns(ws, top, plain_columns(table), fmt, number_formats=number_formats,
                  words=words, widths=widths, padded=padded)
    return top + len(table) + 1


def write_columns(ws: BodySheet, top: int, columns: list[Column], fmt: dict[str, Any], *,
                  number_formats: dict[str, Any] | None = None, words: bool = True,
                  widths: list[float] | None = None, padded: bool = False) -> int:
    """:func:`write_table` for a table already read as :func:`plain_columns`; the next
    free row."""
    tall: dict[int, float] = {}
    bodies = []
    roomy = before_text([c.kind for c in columns]) if padded else [False] * len(columns)
    for j, col in enumerate(columns):
        ws.write_string(top, j, header_words(col.label) if words else str(col.label),
                        fmt["head"])
        own = (number_formats or {}).get(col.label)
        meaning = "own" if own is not None else _meaning(col.label, col.value_kind,
                                                          col.numbers)
        width = widths[j] if widths else None
        pad = fmt.padded if roomy[j] else _same  # padded: fmt is a Formats
        bodies.append(_column_cells(ColumnCells(ws, j), top + 1, col, meaning, fmt, own,
                                    width, tall, pad))
    ws.add_body(top + 1, 0, bodies)
    for row, points in tall.items():
        ws.set_row(row, points)
    return top + len(columns[0].listed if columns else ()) + 1


def _same(made: Any) -> Any:
    """A format as it is (a column that keeps no room after its numbers)."""
    return made


def _column_cells(cells: ColumnCells, first: int, col: Column, meaning: str,
                  fmt: dict[str, Any], own: Any, width: float | None,
                  tall: dict[int, float], pad: Callable[[Any], Any] = _same) -> list[str]:
    """One column's cells, from row ``first`` down (``own``: its format, for meaning
    "own"; ``pad``: each number format as the column uses it); rows that wrapped text
    makes tall are noted in ``tall`` (row -> points)."""
    kind, listed = col.kind, col.listed  # kind "O" for pd.NA-holding dtypes
    num = pad(own if meaning == "own" else fmt["p"][3] if meaning == "p" else
              fmt.get(meaning, fmt["num"]))
    rows = range(first, first + len(listed))
    array = col.numbers if kind == "f" else None
    if array is not None and np.isfinite(array).all():
        if meaning == "own":
            return cells.numbers(first, listed, [num])
        made, choice = number_formats(meaning, array, fmt)
        return cells.numbers(first, listed, [pad(f) for f in made], choice)
    if kind == "f":  # with blanks or infinities: cell by cell
        return [cells.blank(r, num) if v != v else
                cells.number(r, v, num if meaning == "own" else
                             pad(number_format(meaning, v, fmt)))
                if math.isfinite(v) else cells.string(r, str(v), num)
                for r, v in zip(rows, listed, strict=True)]
    if kind in "iu":
        return cells.numbers(first, list(map(float, listed)), [pad(fmt["text"])])
    if kind == "b":
        return cells.strings(first, ["Yes" if v else "No" for v in listed], fmt["text"])
    if set(map(type, listed)) == {str} or all(isinstance(v, str) for v in listed):
        # text without blanks (plain str the common case, at C speed): the whole
        # column wraps when one value is wider than it; rows measure the regular-weight
        # text letter by letter (a digit a letter left blank lines under it)
        wrap = width is not None and max(map(len, listed), default=0) > width
        for r, v in zip(rows, listed, strict=True) if wrap else ():
            if len(v) > width:
                tall[r] = max(tall.get(r, 0.0), row_points([(v, width)], proportional=True))
        return cells.strings(first, listed, fmt["wrap"] if wrap else fmt["text"])
    out = []
    for r, v in zip(rows, listed, strict=True):
        long = width is not None and isinstance(v, str) and len(v) > width
        out.append(cells.typed(r, v, num if isinstance(v, float) else
                               fmt["wrap"] if long else fmt["text"]))
        if long:
            tall[r] = max(tall.get(r, 0.0), row_points([(v, width)], proportional=True))
    return out


MAX_TEXT_WIDTH = 40  # characters; longer text wraps


def column_widths(table: pd.DataFrame | list[Column], *, words: bool = True) -> list[float]:
    """A width per column: its header over at most three lines, its values (text up to
    :data:`MAX_TEXT_WIDTH`, then wrapped; numbers as their formats print them).

    ``table`` is a DataFrame, or the same table already read as :func:`plain_columns`
    (a feedback workbook reads its tables once); both give the same widths.
    """
    if isinstance(table, pd.DataFrame):
        read = [(col, values.dtype, values) for col, values in table.items()]
    else:
        read = [(col.label, col.dtype, col.listed) for col in table]
    return [_width(header_words(label) if words else str(label), dtype.kind,
                   lambda values=values: _longest_text(values))
            for label, dtype, values in read]


def _width(head: str, kind: str, longest: Callable[[], int]) -> float:
    """A column's width from its header, its dtype's kind and (text) its longest value."""
    width = _header_room(head)
    width = max(width, 9) if kind in "fiub" else max(width, min(longest(), MAX_TEXT_WIDTH))
    return float(width + 1)


@functools.lru_cache(maxsize=1024)
def _header_room(head: str) -> int:
    """The characters a header needs over at most three lines (at least 6); cached,
    as every feedback workbook has the same headers."""
    longest_word = max((len(w) for w in head.split()), default=4)
    return max(longest_word, math.ceil(len(head) / 3), 6)


def _longest_text(values: pd.Series | list[Any], sample: int = 500) -> int:
    """Characters of the longest of the first ``sample`` values that are not missing
    (as text); in plain Python when those are the column's first values, which is
    cheap for the many small tables of feedback workbooks. ``values``: a column, or
    its values as a list (read as pandas reads an object column)."""
    if isinstance(values, list):
        head = values[:sample]
    else:  # only the first rows made Python values: the Data sheet's column is long
        head = (values if len(values) <= sample else values.iloc[:sample]).tolist()
    quick = _longest_plain(head)
    if quick is not None:
        return quick
    column = pd.Series(values, dtype=object) if isinstance(values, list) else values
    lengths = column.dropna().astype(str).head(sample).str.len()
    return int(lengths.max()) if len(lengths) else 0


def _longest_plain(head: list[Any]) -> int | None:
    """The longest of ``head`` as text, or None when one of them is missing (pandas
    then reads on past the first values)."""
    if set(map(type, head)) <= {str}:  # the common case, at C speed
        return max(map(len, head), default=0)
    if not any(_missing(v) for v in head):
        return max((len(str(v)) for v in head), default=0)
    return None


def _missing(value: Any) -> bool:
    """What :func:`pandas.isna` calls missing, for one value of a table's column."""
    return value is None or value is pd.NA or value is pd.NaT or \
        (isinstance(value, float) and value != value)


def table_sheet(wb: xlsxwriter.Workbook, title: str, table: pd.DataFrame,
                fmt: dict[str, Any], *, top: int = 0, words: bool = True,
                number_formats: dict[str, Any] | None = None) -> Worksheet:
    """A sheet holding ``table`` from row ``top``: frozen header, filters, printed one
    page wide (:func:`~sheetflow.workbook.printing.set_print`, header repeated), its
    columns narrowed first where they would print too small to read
    (:func:`~sheetflow.workbook.printing.fitted_widths`: text wraps, numbers keep
    the room they print in), its last page holding at least two rows of the table
    (:func:`~.paging.keep_last_rows`). ``number_formats``: as for :func:`write_table`.
    A column of numbers with text on its right keeps :data:`PAD` after them, and the
    room for it."""
    ws = table_worksheet(wb, title)
    roomy = before_text([plain_kind(values.dtype) for _, values in table.items()])
    floors = [[f + 1 if r else f for f, r in zip(floor, roomy, strict=True)]
              for floor in column_floors(table, fmt, words=words,
                                         number_formats=number_formats)]
    widths = fitted_widths([max(w, f) if r else w for w, f, r in zip(
        column_widths(table, words=words), floors[1], roomy, strict=True)], *floors)
    ws.freeze_panes(top + 1, 0)
    for j, width in enumerate(widths):
        ws.set_column(j, j, width)
    ws.set_row(top, row_points([(header_words(c) if words else str(c), w)
                                for c, w in zip(table.columns, widths, strict=True)]))
    write_table(ws, top, table, fmt, words=words, widths=widths,
                number_formats=number_formats, padded=True)
    if len(table.columns):
        ws.autofilter(top, 0, top + max(len(table), 1), len(table.columns) - 1)
    set_print(ws, widths, header_rows=top + 1, one_page_wide=True)
    # rows made tall by wrapped text left the last one alone on a page under the header
    keep_last_rows(ws, top + 1, top + 1 + len(table), widths,
                   landscape=ws.orientation == 0)
    return ws


TEXT_FLOOR = 12  # characters: a text column narrowed to fit the page wraps at this width
# Gwet's sheet with its reason and note columns (16 in all, a dimension in full
# agreement) fitted a page at 70% only with its text at 9 characters: narrower text
# reads better than a whole sheet printed smaller
LAST_TEXT_FLOOR = 9
WORD_FLOOR = 24  # a text column keeps its longest word whole up to this width first


def column_floors(table: pd.DataFrame, fmt: dict[str, Any], *, words: bool = True,
                  number_formats: dict[str, Any] | None = None
                  ) -> tuple[list[float], list[float], list[float], list[float]]:
    """The floors :func:`~sheetflow.workbook.printing.fitted_widths` narrows ``table``'s
    columns to, in turn: text down to its longest word (up to :data:`WORD_FLOOR`), then
    numbers down to what their formats print (:func:`number_chars`), then text down to
    :data:`TEXT_FLOOR` (a longer word breaks), and last, for a table of many columns
    that still does not fit, text down to :data:`LAST_TEXT_FLOOR`. No column goes below
    its longest header word. A step leaves the columns it does not narrow as wide as
    they are."""
    words_whole, numbers, narrow, narrowest = [], [], [], []
    for col, values in table.items():
        head = header_words(col) if words else str(col)
        word = max((text_width(w) for w in head.split()), default=1) + 1
        if isinstance(values.dtype, np.dtype) and values.dtype.kind in "fiub":
            own = (number_formats or {}).get(col)
            meaning = "share" if own is not None and own is fmt.get("share") else \
                "count" if own is not None and own is fmt.get("count") else \
                column_meaning(col, values)
            numbers.append(float(max(word, number_chars(values, meaning) + 1)))
            words_whole.append(float("inf"))
            narrow.append(numbers[-1])
            narrowest.append(numbers[-1])
        else:
            longest = min(_longest_word(values) + 1, WORD_FLOOR)
            words_whole.append(float(max(word, TEXT_FLOOR, longest)))
            numbers.append(words_whole[-1])
            narrow.append(float(max(word, TEXT_FLOOR)))
            narrowest.append(float(max(word, LAST_TEXT_FLOOR)))
    return words_whole, numbers, narrow, narrowest


def _longest_word(values: pd.Series) -> int:
    """Characters of the longest word among ``values`` (as text)."""
    texts = [v for v in values.tolist() if isinstance(v, str)]
    return max((len(w) for t in texts for w in t.split()), default=0)


def number_chars(values: pd.Series, meaning: str) -> int:
    """Characters the longest of ``values`` prints in, shown as ``meaning`` (see
    :func:`column_meaning`): "< 0.001" for a p, "-33.6%" for a share, "0.917" or
    "1.00E-09" for another number, "20260916" for a count, "Yes" for a flag."""
    if values.dtype.kind == "b":
        return 3
    numbers = values.to_numpy(dtype=float)
    finite = numbers[np.isfinite(numbers)]
    if not finite.size:
        return 3  # blank, or "inf"
    sign = int(bool((finite < 0).any()))
    top = float(np.abs(finite).max())
    if meaning == "p":
        return 7
    if meaning == "share":
        return len(f"{100 * top:.1f}%") + sign
    if meaning == "count" or values.dtype.kind in "iu":
        return len(f"{top:.0f}") + sign
    tiny = bool(((finite != 0) & (np.abs(finite) < TINY)).any())
    return max(len(f"{top:.3f}"), 8 if tiny else 0) + sign

def whole_number_formats(table: pd.DataFrame, fmt: dict[str, Any]) -> dict[str, Any]:
    """The count format for each float column whose values are all whole numbers.

    Scores are floats once a column holds a blank (NaN); shown as "0.000" a score of 5
    reads as a measurement, not the point the rater chose.
    """
    out = {}
    for col, values in table.items():
        kind = values.dtype.kind if isinstance(values.dtype, np.dtype) else "O"
        if kind == "f":
            numbers = values.to_numpy()
        elif kind == "O":  # text and numbers mixed (the Data sheet's "value")
            numbers = np.array([v for v in values.tolist() if isinstance(v, (int, float))
                                and not isinstance(v, bool)], dtype=float)
        else:
            continue
        finite = numbers[np.isfinite(numbers)]
        if finite.size and bool(np.all(finite == np.round(finite))):
            out[col] = fmt["count"]
    return out


PROPORTIONS = ("agreement", "preference", "share_a", "yield", "p_o", "p_e", "gap",
               "gap_ci_low", "gap_ci_high")
"""Columns holding a proportion, or a difference of two, by their name alone."""
ESTIMATED_PROPORTIONS = ("agreement", "preference", "share_a", "yield")
COEFFICIENTS = ("alpha", "kappa", "icc", "rho", "ac", "coef")
INTERVALS = ("ci_low", "ci_high", "err_plus", "err_minus")


def proportion_formats(table: pd.DataFrame, fmt: dict[str, Any],
                       also: tuple[str, ...] = ()) -> dict[Any, Any]:
    """The percentage format for each number column of ``table`` that holds a
    proportion: :data:`PROPORTIONS` and ``also`` by name, and the interval columns
    (:data:`INTERVALS`) of a table whose estimate is a proportion (one of
    :data:`ESTIMATED_PROPORTIONS`, and no coefficient of :data:`COEFFICIENTS`)."""
    names = {str(c) for c in table.columns}
    interval = bool(names & set(ESTIMATED_PROPORTIONS)) and not names & set(COEFFICIENTS)
    shares = {*PROPORTIONS, *also, *(INTERVALS if interval else ())}
    return {col: fmt["share"] for col, values in table.items()
            if str(col) in shares and pd.api.types.is_float_dtype(values)}


NAMED_COLUMNS = ("measure", "dimension")
"""Columns of the analysis's tables that hold a dimension's or total's id."""


def labelled(table: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """``table`` with each id in :data:`NAMED_COLUMNS` given its name in the rubric
    (``names``: :meth:`~sheetflow.spec.rubric.Rubric.names`), for a sheet a reader
    reads; any other value kept. A small table's copy (large ones are digested first)."""
    columns = [c for c in NAMED_COLUMNS if c in table.columns]
    if not columns or not names:
        return table
    out = table.copy()
    for col in columns:
        values = out[col]
        if isinstance(values.dtype, pd.CategoricalDtype):
            out[col] = values.cat.rename_categories(
                [names.get(c, c) for c in values.cat.categories.tolist()])
        elif not pd.api.types.is_numeric_dtype(values):
            out[col] = pd.Series([names.get(v, v) if isinstance(v, str) else v
                                  for v in values.tolist()], index=values.index,
                                 dtype=values.dtype)
    return out

