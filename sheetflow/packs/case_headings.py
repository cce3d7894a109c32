"""The lines that name a card's case where a printed page of a tall card starts.

A card taller than a page is cut into parts (see :func:`.pages.page_breaks`): before
each response, whose band names the case, and before its answer lines, under a heading
naming the case; answer lines that would run past a page get another such heading
where the page ends. So every printed page of the Scoring sheet says which case it
holds. A mixin of :class:`.writer.PackWriter`, which provides the sheet and row cursor.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..spec.rubric import Dimension
from ..workbook import layout as L
from . import pages
from .guides import answer_label, question_label
from .text import LINE_POINTS


class CaseHeadings:
    """Case-naming bands and headings, and where the answer lines need one."""

    # provided by PackWriter
    row: int
    row_points: list[float]
    blocks: list[int]
    cuts: list[int]
    widths: dict[str, float]
    helpers: list[str]

    def _response_field(self, heading: str, text: str, title: str) -> dict[str, Any]:
        """A response whose band names the case too: a card taller than a page is cut
        before it (see pages.page_breaks), and the page it starts says which case."""
        self.cuts.append(self.row)
        return self._locked_field("response", heading, text, band=f"{heading} ({title})")

    def _scores_heading(self, text: str) -> None:
        """A heading over a card's answer lines naming the case: a card taller than a
        page is cut before it (see pages.page_breaks), so a printed page of scores is
        matched to its case."""
        self.cuts.append(self.row)
        self._column_heads(self._next(18.0), text, "")

    def _part_full(self, height: float, room: float) -> bool:
        """Whether lines ``height`` points tall would run past the page the card's
        answer lines have reached, as pages.page_breaks will pack the card's parts on
        landscape pages (the orientation of any card taller than a page) of ``room``
        points (:meth:`_landscape_room`). Never right under a heading: the heading and
        its first line move to a new page together."""
        if self.cuts[-1] == self.row - 1:
            return False
        start = self.blocks[-1]
        # the card's rows alone, its cuts found by bisection (the cuts rise with the
        # rows): asked once per answer line, a pass over the whole sheet each time made
        # writing a pack quadratic in its cards
        cuts = self.cuts[bisect.bisect_right(self.cuts, start):]
        parts = pages.block_sizes(self.row_points[start:self.row],
                                  [0, *(c - start for c in cuts)])
        used = pages.last_page_used(parts, room)
        return used + height > room

    def _lines_height(self, dim: Dimension) -> float:
        """The height of ``dim``'s answer lines, as :meth:`_value_line` and
        :meth:`_checklist_lines` will set them."""
        if dim.kind == "checklist":
            return sum(self._line_height(dim, question_label(dim, i, q),
                                         self._hint(dim) if i == 0 else "")
                       for i, q in enumerate(dim.questions))
        points = LINE_POINTS if dim.kind == "count" else 0.0
        return self._line_height(dim, answer_label(dim), self._hint(dim)) + points

    def _landscape_room(self) -> float:
        """Sheet points of rows on a landscape page under the repeated header: asked
        once the header is written (the columns and the header rows it is worked out
        from stay the same after)."""
        shown = [w for c, w in self.widths.items()
                 if c not in self._hidden_columns() | set(self.helpers)]
        header = sum(self.row_points[:L.HEADER_ROWS])  # the rows repeated on each page
        return pages.page_room(pages.print_scale(shown), header)
