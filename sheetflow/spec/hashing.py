"""The spec hash's building blocks: its format number and plain JSON-shaped data.

The canonical spec itself and its hash live beside the study they describe
(:func:`sheetflow.spec.model.canonical_spec`, :func:`sheetflow.spec.model.spec_hash`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SPEC_FORMAT = 1


def plain_data(obj: Any, leaf: Callable[[Any], Any] | None = None) -> Any:
    """Nested dicts, lists and tuples as JSON-shaped data.

    Keys become strings and tuples lists; every other value is passed through ``leaf``
    (kept as it is by default).

    Parameters
    ----------
    obj : Any
        Typically :func:`dataclasses.asdict` of a spec object, or analysis results.
    leaf : callable, optional
        Applied to each value that is not a dict, list or tuple.

    Returns
    -------
    Any
        The same structure with plain containers.
    """
    if isinstance(obj, dict):
        return {str(k): plain_data(v, leaf) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain_data(v, leaf) for v in obj]
    return obj if leaf is None else leaf(obj)
