"""Whether a text the study shows its raters names a dimension or field by its id.

A rater sees a dimension, a shown field or a total under its label ("Note"), never
under the spec's id (``rater_note``): "one line in rater_note" sends them looking for
a line that is not there. :func:`id_mentions` finds such ids in the texts the spec's
author wrote for raters (the instructions, each dimension's help and questions), so
``check`` and ``generate`` can say which label to write instead.

Only ids that cannot be ordinary words are looked for (with ``_``, ``-`` or a digit),
case-sensitive and as whole words, and only where the id has a label of its own.
"""

from __future__ import annotations

import re
from typing import Any

from .model import SPEC_FILE

_ID_LIKE = re.compile(r"[_\-0-9]")


def labelled_ids(study: Any) -> dict[str, str]:
    """Id -> label of every dimension, shown field and total whose label differs from
    an id that is not a plain word."""
    named = {d.id: d.label for d in study.rubric.dimensions}
    named |= {f.column: f.label for f in study.shown}
    named |= {t.id: t.label for t in study.rubric.totals}
    return {i: label for i, label in named.items() if label != i and _ID_LIKE.search(i)}


def id_mentions(study: Any) -> list[str]:
    """One warning per text that names an id a rater knows by its label.

    Parameters
    ----------
    study : Study

    Returns
    -------
    list of str
        For example ``"my-study/study.toml: the help of 'gold_dispute' names 'rater_note'; raters
        see it as 'Note': write that instead"`` (empty when every text uses labels).
    """
    ids = labelled_ids(study)
    if not ids:
        return []
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, sorted(ids))) +
                         r")(?![A-Za-z0-9_])")
    texts = [("the instructions", study.instructions)]
    for dim in study.rubric.dimensions:
        texts.append((f"the help of {dim.id!r}", dim.help))
        texts += [(f"a question of {dim.id!r}", q) for q in dim.questions]
    out: dict[str, None] = {}
    spec = study.root / SPEC_FILE
    for where, text in texts:
        for found in pattern.findall(text or ""):
            out[f"{spec}: {where} names {found!r}; raters see it as {ids[found]!r}: "
                "write that instead"] = None
    return list(out)
