"""How a typed label is matched to a dimension's labels beyond its letter case and
spaces: the one definition the pack's red highlight and collect's reading share.

A label typed with other spacing (``A > B`` for ``A>B``), a space for a hyphen or an
underscore (``Over refusal`` for ``Over-refusal``), or, where the labels are yes/no
words, another yes/no word (``yes`` for the flag ``Y``) means that label when no other
label reads the same: collect accepts it as that label (``label-normalised``) and the
pack does not turn it red. Two labels that read the same are both left to their
stricter reading (letter case and spaces around them only), so no typed value is ever
taken for the wrong one.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
"""Characters that do not show (zero-width spaces and joiners, a soft hyphen)."""
DROPPED = "-_"
"""Written between words as a space may be: a hyphen and an underscore."""
YES_WORDS = ("yes", "y")
NO_WORDS = ("no", "n")
_DROP = dict.fromkeys(map(ord, INVISIBLE + DROPPED))


def label_key(text: str) -> str:
    """``text`` without letter case, width, spaces of any kind, hyphens, underscores and
    invisible characters: ``"A > B"`` and ``"a>b"`` give ``"a>b"``, ``"Over refusal"``
    and ``"over-refusal"`` give ``"overrefusal"``."""
    normal = unicodedata.normalize("NFKC", text).translate(_DROP)
    return "".join(normal.split()).casefold()


@lru_cache(maxsize=256)
def loose_keys(labels: tuple[str, ...]) -> dict[str, str]:
    """Each :func:`label_key` that names exactly one of ``labels`` -> that label.

    Where every label is a yes/no word (a flag's ``Y``, a checklist's ``Yes`` and
    ``No``), the other words of its kind name it too (``yes`` and ``y`` name ``Y``),
    when it is the only label of its kind.

    Examples
    --------
    >>> loose_keys(("A>B", "B>A", "Tied"))
    {'a>b': 'A>B', 'b>a': 'B>A', 'tied': 'Tied'}
    >>> loose_keys(("Y",))
    {'y': 'Y', 'yes': 'Y'}
    >>> loose_keys(("A-B", "A B"))
    {}
    """
    named: dict[str, set[str]] = {}
    for label in labels:
        named.setdefault(label_key(label), set()).add(label)
    keys = list(named)
    if all(k in YES_WORDS + NO_WORDS for k in keys):
        for words in (YES_WORDS, NO_WORDS):
            own = {label for k in keys if k in words for label in named[k]}
            if len(own) == 1:
                for word in words:
                    named.setdefault(word, set()).update(own)
    return {key: next(iter(found)) for key, found in named.items() if len(found) == 1}

