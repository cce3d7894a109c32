"""The sizes a study may have, so a hostile or mistaken spec is refused at ``check``.

Each limit is far above what a human-rating study needs and low enough that ``generate``
stays within a laptop's memory: a rater's pack holds every item given to that rater, and
one pack of 10,000 paired cases with 150-word responses takes about 27 s of CPU and
0.8 GB at peak to write (``bench/bench_generate.py --raters 2 --cases 10000``: 53 s of
CPU, peak RSS 783 MiB); packs are written one at a time, so memory does not grow with
the number of raters. Larger item sets are refused at ``check`` (the items file is read
row by row and given up as soon as it passes :data:`MAX_ITEMS`).
"""

from __future__ import annotations

from typing import Any

MAX_SPEC_BYTES = 1_000_000
"""``study.toml`` and the instructions file: at most 1 MB each."""
MAX_TABLE_BYTES = 200_000_000
"""The items file: at most 200 MB."""
MAX_RATERS_BYTES = 1_000_000
"""The raters file: at most 1 MB."""
MAX_ITEMS = 10_000
"""Items (rows of the items file) in one study."""
MAX_RATERS = 1_000
"""Raters (rows of the raters file) in one study."""
MAX_DIMENSIONS = 200
"""``[[dimensions]]`` in one rubric."""
MAX_DEPTH = 10
"""Nesting of tables and arrays in ``study.toml`` (the templates use at most 5)."""


def nesting_depth(doc: Any) -> int:
    """How deeply tables and arrays nest in ``doc`` (a scalar is 0), without recursion.

    Stops counting at ``MAX_DEPTH + 1``, so a hostile document costs no more than a
    legal one of the same size.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            stack.extend((child, depth) for child in children)
    return deepest
