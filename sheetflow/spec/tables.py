"""Reading the study's text files and tables (CSV or XLSX) with clear errors."""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import SpecError

_FEW_CELLS = "give the row a cell for each column (an empty one as nothing between commas)"
_MANY_CELLS = "put a cell that holds a comma in double quotes, or remove the extra cells"

def read_text_file(path: Path, max_bytes: int | None = None) -> str:
    """A UTF-8 text file with CRLF/CR turned into LF; clear errors for BOM or encoding.

    A file larger than ``max_bytes`` is refused before it is read.
    """
    data = read_capped(path, max_bytes)
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError(
            "starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM",
            file=str(path),
        )
    text = _decode(data, path, "utf-8", "UTF-8 (without BOM)")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_capped(path: Path, max_bytes: int | None = None) -> bytes:
    """A file's bytes, read once; one larger than ``max_bytes`` is refused unread."""
    _check_size(path, max_bytes)
    return path.read_bytes()


def _decode(data: bytes, path: Path, codec: str, save_as: str, *,
            check_only: bool = False) -> str:
    """``data`` decoded, or one line saying how to save the file instead.

    ``check_only``: only refuse a UTF-16 start (``data`` is the file's first bytes).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError(f"is UTF-16; save it as {save_as}", file=str(path))
    if check_only:
        return ""
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        where = _where_not_utf8(_chunks(path, data))
        raise SpecError(f"is not UTF-8 ({where}); save it as {save_as}",
                        file=str(path)) from None


_CHUNK = 1 << 20


def _where_not_utf8(chunks: Iterable[bytes]) -> str:
    """Where the first byte that is not UTF-8 lies in the bytes ``chunks`` make up, as
    ``"byte 0xe9 on line 465, as a text editor numbers lines"``.

    The line is the physical one: line breaks (LF, CRLF or a lone CR) are counted in the
    raw bytes before the bad byte, so a quoted CSV field spanning several lines counts
    each of them, as an editor shows them (not the CSV record the byte belongs to).
    """
    found = _first_bad_byte(chunks)
    if found is None:  # cannot happen for bytes that failed to decode; kept general
        return "a byte that is not UTF-8"
    byte, line = found
    return f"byte 0x{byte:02x} on line {line}, as a text editor numbers lines"


def _first_bad_byte(chunks: Iterable[bytes]) -> tuple[int, int] | None:
    """The first byte that is not UTF-8 and its physical line (1-based), or None.

    The bytes are decoded one chunk at a time, so a large file is scanned in bounded
    memory; a sequence cut by the end of a chunk waits in the decoder for the next.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    breaks, after_cr = 0, False
    for chunk in itertools.chain(chunks, [b""]):
        pending = len(decoder.getstate()[0])  # bytes held back from the chunk before
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            # the bad byte may be a held-back one; those are never line breaks
            before = chunk[:max(0, exc.start - pending)]
            return exc.object[exc.start], breaks + _line_breaks(before, after_cr) + 1
        if chunk:
            breaks += _line_breaks(chunk, after_cr)
            after_cr = chunk.endswith(b"\r")
    return None


def _line_breaks(data: bytes, after_cr: bool) -> int:
    """How many line breaks (LF, CRLF, lone CR) ``data`` holds; ``after_cr``: the bytes
    before it ended in CR, so a leading LF ends that line rather than a new one."""
    count = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    return count - 1 if after_cr and data.startswith(b"\n") else count


def _chunks(path: Path, data: bytes | None = None) -> Iterator[bytes]:
    """``data``, or the file's bytes when it is None, in slices of at most ``_CHUNK``."""
    if data is not None:
        yield from (data[i:i + _CHUNK] for i in range(0, len(data), _CHUNK))
        return
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def _check_size(path: Path, max_bytes: int | None) -> None:
    size = path.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise SpecError(f"is {size:,} bytes; sheetflow reads at most {max_bytes:,} bytes here "
                        "(split the study or shorten the file)", file=str(path))


def read_table(path: Path, *, max_bytes: int | None = None, max_rows: int | None = None,
               data: bytes | None = None,
               ) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Read a CSV (UTF-8, BOM allowed) or XLSX table as text.

    With ``data``, the table is parsed from those bytes (already read, and hashed, by
    the caller) and ``path`` only names it: what was checked is what is used.

    A file over ``max_bytes`` is refused before it is read, and one with more than
    ``max_rows`` rows as soon as the next row is read, so the limits bound memory.

    Returns the header and ``(row number, {column: text})`` pairs, the row number
    counting the header as row 1. Cells are stripped of surrounding white space and
    line endings are normalised to LF; numbers from XLSX become their shortest text
    (``1`` not ``1.0``), so the same table gives the same values from either format.
    """
    suffix = path.suffix.lower()
    if data is None:
        _check_size(path, max_bytes)
    elif max_bytes is not None and len(data) > max_bytes:
        raise SpecError(f"is {len(data) / 2**20:.1f} MB, more than the "
                        f"{max_bytes / 2**20:.0f} MB a table may be", file=str(path))
    if suffix == ".csv":
        header, raw_rows = _bounded(path, _csv_rows(path, data), max_rows)
    elif suffix == ".xlsx":
        header, raw_rows = _read_xlsx(path, max_rows, data)
    else:
        raise SpecError(f"is a {suffix or 'file without extension'}; use .csv or .xlsx",
                        file=str(path))
    if not header or not any(h.strip() for h in header):
        raise SpecError("has no header row", file=str(path))
    header = [h.strip() for h in header]
    if suffix == ".csv" and len(header) == 1 and header[0].count(";") >= 1:
        raise SpecError(f"{SEMICOLONS} or as .xlsx", file=str(path), where="header")
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        raise SpecError(f"repeats column names {dupes}", file=str(path), where="header")
    # a CSV row short of the named columns lost cells (an e-mail, a role) in silence,
    # where one with too many was refused; "a,b," still has its 3 cells, the last empty,
    # and an XLSX row has no count of cells to fall short by
    named = max((j + 1 for j, h in enumerate(header) if h), default=0)
    least = named if suffix == ".csv" else 0
    rows = []
    for i, raw in enumerate(raw_rows, start=2):
        if not any(_cell_text(v) for v in raw):
            continue
        if len(raw) < least or (len(raw) > len(header) and
                                any(_cell_text(v) for v in raw[len(header):])):
            raise SpecError(f"has {len(raw)} cells but the header has {len(header)} columns: "
                            + (_FEW_CELLS if len(raw) < least else _MANY_CELLS),
                            file=str(path), where=f"row {i}")
        values = {h: _cell_text(raw[j]) if j < len(raw) else "" for j, h in enumerate(header)
                  if h}
        rows.append((i, values))
    return header, rows


def _bounded(path: Path, rows: Iterator[list[Any]], max_rows: int | None,
             ) -> tuple[list[str], list[list[Any]]]:
    """The header and the rows, refused as soon as non-blank rows exceed ``max_rows``."""
    header = next(rows, None)
    if header is None:
        return [], []
    out, filled = [], 0
    for raw in rows:
        out.append(raw)
        filled += any(_cell_text(v) for v in raw)
        if max_rows is not None and filled > max_rows:
            raise SpecError(f"has more than {max_rows:,} rows; a study holds at most "
                            f"{max_rows:,} (split it into several studies)", file=str(path))
    return [_cell_text(h) for h in header], out


def _csv_rows(path: Path, data: bytes | None = None) -> Iterator[list[str]]:
    """The CSV's rows, read as a stream (memory holds the rows kept, not the file), or
    parsed from ``data`` when the caller read the bytes."""
    if data is None:
        with path.open("rb") as fh:
            head = fh.read(2)
    else:
        head = data[:2]
    _decode(head, path, "ascii", "CSV UTF-8", check_only=True)
    with (path.open(encoding="utf-8-sig", newline="") if data is None else
          io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")) as fh:
        # strict: a quote left open would otherwise swallow every line after it into one
        # cell, and the rows it ate were simply not there (items lost in silence)
        reader = csv.reader(fh, strict=True)
        start = 1  # the line the row being read begins on
        try:
            for row in reader:
                yield row
                start = reader.line_num + 1
        except UnicodeDecodeError:
            # the text layer decodes ahead of the reader, in chunks: find the byte afresh
            where = _where_not_utf8(_chunks(path, data))
            raise SpecError(f"is not UTF-8 ({where}); save it as CSV UTF-8",
                            file=str(path)) from None
        except csv.Error as exc:
            if "end of data" in str(exc):
                raise SpecError(f"a quote (\") opened on line {start}, as a text editor "
                                "numbers lines, is never closed, so every line after it "
                                "would be one cell; close the quote or remove it",
                                file=str(path)) from None
            raise SpecError(f"is not valid CSV ({exc}) on line {reader.line_num}, as a text "
                            "editor numbers lines; fix that line or save the file again as "
                            "CSV UTF-8", file=str(path)) from None


SHEET_ROWS = 100_000
"""Rows an items or raters sheet is read to when the caller sets no limit."""
BLANK_ROWS = 1_000
"""Rows beyond the most a study may hold that a sheet may use (blank lines below)."""


def _read_xlsx(path: Path, max_rows: int | None, data: bytes | None = None,
               ) -> tuple[list[str], list[list[Any]]]:
    import openpyxl  # items files are small and trusted (the coordinator's own)

    try:
        wb = openpyxl.load_workbook(path if data is None else io.BytesIO(data),
                                    read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a broken file
        raise SpecError(f"cannot be read as an Excel workbook ({type(exc).__name__}); "
                        "save it again as .xlsx or use CSV", file=str(path)) from None
    try:
        ws = wb.worksheets[0]
        # a stray cell far below the items (row 1,048,576) made every command read a
        # million blank rows: 30 s and 1.7 GB; the rows read stop past the most a study
        # may hold, and a sheet used beyond them is refused by name
        last = (max_rows or SHEET_ROWS) + BLANK_ROWS
        extent = ws.max_row if isinstance(ws.max_row, int) else None  # <dimension>
        if extent is not None and extent > last:
            raise _used_below(path, extent)

        def rows() -> Iterator[list[Any]]:  # streamed, as the CSV rows are
            for n, row in enumerate(ws.iter_rows(values_only=True, max_col=200,
                                                 max_row=last + 1), start=1):
                if n > last:  # a sheet without a <dimension> saying how far it goes
                    raise _used_below(path, n)
                yield list(row)
        header, body = _bounded(path, _results_saved(path, rows(), data), max_rows)
        if not any(h.strip() for h in header):  # the table may be on another sheet
            raise SpecError(f"its first sheet {ws.title!r} has no header row; only the "
                            "first sheet is read: put the table there, with the column "
                            "names in row 1", file=str(path))
        return header, body
    finally:
        wb.close()


def _results_saved(path: Path, rows: Iterator[list[Any]], data: bytes | None,
                   ) -> Iterator[list[Any]]:
    """``rows`` (the cells' saved values), refused at the first formula that has no saved
    result: a workbook written by a program rather than saved by Excel holds the formula
    alone, which reads as an empty cell ("'item_id' is empty", untrue)."""
    import openpyxl
    from openpyxl.utils import get_column_letter

    wb = openpyxl.load_workbook(path if data is None else io.BytesIO(data), read_only=True)
    try:
        formulas = wb.worksheets[0].iter_rows(values_only=True, max_col=200)
        for n, row in enumerate(rows, start=1):
            written = next(formulas, ())
            for j, value in enumerate(row):
                typed = written[j] if j < len(written) else None
                if value is None and isinstance(typed, str) and typed.startswith("="):
                    raise SpecError(f"cell {get_column_letter(j + 1)}{n} holds the formula "
                                    f"{typed} with no saved result; open the file in Excel "
                                    "and save it (Excel saves each formula's result), or "
                                    "save it as CSV", file=str(path), where=f"row {n}")
            yield row
    finally:
        wb.close()


def _used_below(path: Path, row: int) -> SpecError:
    return SpecError(f"its first sheet is used down to row {row:,}, far below where items "
                     "can be: delete the rows under the last item (select them, Delete) and "
                     "save, or save the sheet as CSV", file=str(path))


SEMICOLONS = ("is separated by semicolons (Excel saves 'CSV' so where the comma is the "
              "decimal sign); save it as 'CSV UTF-8 (comma delimited)'")
"""What is said of a CSV file saved with semicolons (a table, a pilot)."""


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def control_char(text: str, allowed: str = "\t\n") -> str:
    """The first control character of ``text`` not in ``allowed``, as ``U+0007``; ""
    when there is none."""
    for ch in text:
        if ord(ch) < 32 and ch not in allowed:
            return f"U+{ord(ch):04X}"
    return ""


def invisible_char(text: str) -> str:
    """The first character of ``text`` that shows as nothing (``U+200B``), or ``""``.

    Format characters (zero-width spaces and joiners, direction marks, the BOM), line
    and paragraph separators, and any space other than the plain one."""
    for ch in text:
        kind = unicodedata.category(ch)
        if kind in ("Cf", "Zl", "Zp") or (kind == "Zs" and ch != " "):
            return f"U+{ord(ch):04X}"
    return ""


def as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None

