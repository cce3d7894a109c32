"""Counts in words (a number with its noun in the number the count takes), and
proportions as percentages."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: "1 error", "0 errors", "2 rating rows".

    Parameters
    ----------
    n : int
        The count (thousands are separated: "800,300 rating rows").
    noun : str
        The singular.
    plural : str, optional
        The plural where it is not the singular with "s" ("analyses").

    Returns
    -------
    str
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def percent(share: float, digits: int = 1) -> str:
    """A proportion as a percentage: 0.5833 -> "58.3%" (``digits`` decimals).

    Every proportion sheetflow reports (shares, agreement rates, yields, preferences
    and their intervals) is shown this way, in text and in cells alike.
    """
    return f"{100 * share:.{digits}f}%"
