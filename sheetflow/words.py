"""Counts in words: a number with its noun in the number the count takes."""

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
