"""The name a misspelt one was meant to be: a column, a key, a setting.

A column of the raters file named 'E-mail', a ``[itemz]`` table, an ``[analysis.params]``
setting spelt wrong: each is reported with the name it looks like, so the message
says what to type instead of leaving the user to compare it with the list allowed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


def close_match(name: str, known: Iterable[str]) -> str:
    """The one of ``known`` that ``name`` looks like a misspelling of, or ``""``.

    Case, spaces, ``-`` and ``_`` are ignored first ('E-mail', 'Last Name'); then a
    close spelling counts ('emial', 'mail', 'itemz').

    Parameters
    ----------
    name : str
        The name as written.
    known : iterable of str
        The names it may have been meant to be.

    Returns
    -------
    str
        The closest of ``known``, or ``""`` when none is close.
    """
    def bare(text: str) -> str:
        return re.sub(r"[\s_\-]", "", text.casefold())

    known = list(known)
    same = [k for k in known if bare(k) == bare(name)]
    if same:
        return same[0]
    close = difflib.get_close_matches(bare(name), [bare(k) for k in known], n=1,
                                      cutoff=0.75)
    return next((k for k in known if close and bare(k) == close[0]), "")


def unknown_key(key: str, allowed: Iterable[str], what: str = "key") -> str:
    """The message for ``key`` not in ``allowed``: the key meant when it looks like
    a misspelling of one, then every key allowed.

    Parameters
    ----------
    key : str
        The key as written.
    allowed : iterable of str
        The keys the table may hold.
    what : str
        What a key is called there ("key", "setting").

    Returns
    -------
    str
        e.g. ``"unknown key 'itemz'; did you mean 'items'? allowed: analysis, ..."``,
        or ``"unknown key 'x'; allowed: analysis, ..."`` when none is close.
    """
    allowed = sorted(allowed)
    meant = close_match(key, allowed)
    hint = f"; did you mean {meant!r}?" if meant else ";"
    return f"unknown {what} {key!r}{hint} allowed: {', '.join(allowed)}"


def unknown_value(value: object, allowed: Iterable[str], what: str) -> str:
    """The message for a value outside a closed set (a design kind, a level): the value
    meant when it looks like a misspelling of one, then every value allowed, in the
    order given (levels read nominal to ratio, not alphabetically).

    Parameters
    ----------
    value : object
        The value as written (a number or list is shown as such and matched as text).
    allowed : iterable of str
        The values the setting may take.
    what : str
        What the value is ("design", "dimension kind", "level").

    Returns
    -------
    str
        e.g. ``"unknown level 'ordnial'; did you mean 'ordinal'? allowed: nominal,
        ordinal, interval, ratio"``.
    """
    allowed = list(allowed)
    meant = close_match(value, allowed) if isinstance(value, str) else ""
    hint = f"; did you mean {meant!r}?" if meant else ";"
    return f"unknown {what} {value!r}{hint} allowed: {', '.join(allowed)}"
