"""Long texts as display chunks that concatenate back exactly, and their row heights.

Text is split into chunks of at most :data:`~.layout.CHUNK_CHARS` characters (and about
26 wrapped lines, so a row never needs more than 409 points), broken at white space
where possible. Nothing is lost: the chunks concatenate back to the original exactly.
"""

from __future__ import annotations

import math
import re

from ..errors import SheetflowError
from ..workbook import layout as L
from ..workbook.printing import text_width

MAX_LINES = 26  # 26 lines x 15 pt stays under Excel's 409-point row height
LINE_POINTS = 15.0
MAX_ROW_POINTS = 409.0

_TOKEN = re.compile(r"\S+[^\S\n]*\n?|[^\S\n]+\n?|\n")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as Excel counts."""
    return len(text.encode("utf-16-le")) // 2


def split_text(text: str, chars_per_line: int, limit: int = L.CHUNK_CHARS,
               max_lines: int = MAX_LINES) -> tuple[str, ...]:
    """Split ``text`` into display chunks that concatenate back to it exactly.

    Parameters
    ----------
    text : str
    chars_per_line : int
        Estimated characters per wrapped line of the target cell.
    limit : int
        Most characters per chunk.
    max_lines : int
        Most estimated wrapped lines per chunk.

    Returns
    -------
    tuple of str
        At least one chunk (``("",)`` for empty text).
    """
    chunks: list[str] = []
    current: list[str] = []
    size, closed, open_len = 0, 0, 0
    for token in _tokens(text, min(limit, chars_per_line * max_lines)):
        t_closed, t_open = _advance(closed, open_len, token, chars_per_line)
        lines = t_closed + max(1, math.ceil(t_open / chars_per_line))
        if current and (size + len(token) > limit or lines > max_lines):
            chunks.append("".join(current))
            current, size, closed, open_len = [], 0, 0, 0
            t_closed, t_open = _advance(0, 0, token, chars_per_line)
        current.append(token)
        size += len(token)
        closed, open_len = t_closed, t_open
    chunks.append("".join(current))
    if "".join(chunks) != text:  # a guard on the promise that nothing is lost
        raise SheetflowError("internal error: text split lost characters")
    return tuple(chunks)


def _tokens(text: str, longest: int) -> list[str]:
    """Words with their trailing blanks (at most one newline each), long ones cut."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        out.extend(token[i:i + longest] for i in range(0, len(token), longest))
    return out


def _advance(closed: int, open_len: int, token: str, cpl: int) -> tuple[int, int]:
    """Wrapped-line counters after appending ``token`` (closed lines, open length)."""
    if token.endswith("\n"):
        return closed + max(1, math.ceil((open_len + len(token) - 1) / cpl)), 0
    return closed, open_len + len(token)


def estimate_lines(text: str, chars_per_line: int) -> int:
    """Wrapped lines ``text`` needs in a cell ``chars_per_line`` wide (a full-width
    character, Chinese, Japanese or Korean, takes two: :func:`text_width`)."""
    return sum(max(1, math.ceil((len(part) if part.isascii() else text_width(part))
                                / chars_per_line)) for part in text.split("\n"))


def row_points(text: str, chars_per_line: int, minimum: float = LINE_POINTS,
               line: float = LINE_POINTS) -> float:
    """A row height that shows ``text`` whole (capped at Excel's maximum).

    ``line`` is the height of one wrapped line (15 points at 11 pt, 12 at 9 pt).
    """
    return min(MAX_ROW_POINTS, max(minimum, estimate_lines(text, chars_per_line) * line + 3))


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-16 units (with an ellipsis when cut)."""
    if utf16_len(text) <= limit:
        return text
    out = text
    while utf16_len(out) > limit - 1:
        out = out[: max(0, len(out) - max(1, utf16_len(out) - limit + 1))]
    return out + "\u2026"


class TextCache:
    """Display chunks, row heights and hashes of texts, each computed once.

    The packs of one study show the same item texts to every rater, in other orders and
    under other labels. One cache shared by all packs of a ``generate`` run splits and
    hashes each text once instead of once per rater; drop it when the run ends.
    """

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, int], tuple[tuple[str, float], ...]] = {}
        self._sha256: dict[str, str] = {}

    def chunks(self, text: str, chars_per_line: int) -> tuple[tuple[str, float], ...]:
        """``text``'s :func:`split_text` chunks, each with its :func:`row_points` height.

        Parameters
        ----------
        text : str
        chars_per_line : int
            Estimated characters per wrapped line of the target cell.

        Returns
        -------
        tuple of (str, float)
        """
        key = (text, chars_per_line)
        found = self._chunks.get(key)
        if found is None:
            found = tuple((chunk, row_points(chunk, chars_per_line))
                          for chunk in split_text(text, chars_per_line))
            self._chunks[key] = found
        return found

    def sha256(self, text: str) -> str:
        """:func:`~.layout.text_sha256` of ``text``."""
        found = self._sha256.get(text)
        if found is None:
            found = self._sha256[text] = L.text_sha256(text)
        return found


WORD_HINT = "(purple; allowed, please check)"
"""How the progress line qualifies texts outside their word range: collect uses them."""
TIME_HINT = "not a date and time (purple; allowed, please check)"
"""How the progress line names batch times that are not a date and time: collect uses
the file and warns (``batch-time-invalid``, ``batch-time-no-date``)."""


def progress_text(done: int, total: int, to_correct: int = 0,
                  marks: tuple[int, int, str] | None = None, notes: int = 0,
                  off_range: int = 0, times: int = 0, first_bad: str = "",
                  first_blank: str = "") -> str:
    """The progress line as the pack shows it (its formula gives the same text).

    ``marks`` is (set, of, what a blank means) for marks whose blank is an answer;
    ``notes`` the notes a marked flag needs and still lacks; ``off_range`` the texts
    outside their word range; ``times`` the batch times that are not a date and time.
    "All ... done" only when every required answer is filled, none is refused and no
    such note is missing; a text outside its word range or a time without its date is
    a hint named after it (collect uses the file and warns), never a value to correct.
    ``first_bad`` and ``first_blank`` say where the first red cell and the first blank
    required one are ("case 2, row 40"), so a rater finds them on a long sheet.
    """
    filled = f"{done} of {total} required answers filled"
    if first_blank and done < total:
        filled += f" (first blank: {first_blank})"
    if notes:
        filled += f"; {notes} note{'s' if notes != 1 else ''} to write (orange)"
    if to_correct:
        where = f", first: {first_bad}" if first_bad else ""
        line = f"{to_correct} to correct (red cells{where}); {filled}"
    else:
        line = f"All {total} answers done" if done >= total and not notes else filled
    if off_range:
        texts = ("1 text outside its word range" if off_range == 1
                 else f"{off_range} texts outside their word range")
        line += f"; {texts} {WORD_HINT}"
    if times:
        line += (f"; 1 batch time that is {TIME_HINT}" if times == 1
                 else f"; {times} batch times that are {TIME_HINT}")
    if marks is not None:
        line += f"; {marks[0]} of {marks[1]} marks set ({marks[2]})"
    return line
