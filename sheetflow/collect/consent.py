"""A consent refused in one of a rater's files holds for all their files.

The consent question (a binary study question with ``consent`` in the spec) is asked
once, in sitting 1; a rater who refused it there refused it for their sitting 2 too,
whose ratings would otherwise go into the analysis on their own. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from .validate import Issue, issue

REFUSED = "consent-refused"
ELSEWHERE = "consent-refused-elsewhere"


class Return(Protocol):
    """What is needed of a returned file (:class:`.run._FileWork`)."""

    name: str
    head: Any
    issues: list[Issue]
    duplicate_of: str
    superseded_by: str


def spread_refusals(works: Iterable[Return]) -> None:
    """Give each file of a rater who refused consent in another of their files (one
    that stands: neither a copy nor replaced by a newer one) ``consent-refused-elsewhere``,
    an error: none of its ratings is used either."""
    works = [w for w in works if w.head is not None and not w.duplicate_of]
    refused = {w.head.rater_id: w.name for w in works if not w.superseded_by
               and any(i.code == REFUSED for i in w.issues)}
    for work in works:
        where = refused.get(work.head.rater_id)
        if where and where != work.name and not any(
                i.code in (REFUSED, ELSEWHERE) for i in work.issues):
            work.issues.append(issue(ELSEWHERE, file=work.name, rater=work.head.rater_id,
                                     detail=where))
