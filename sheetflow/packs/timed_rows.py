"""The Scoring sheet's rows that are not a case: each batch's start and end time
(protocol 001) and the Submission area answered once per pack. A mixin of
:class:`.writer.PackWriter`, which provides the sheet, formats and row cursor.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .guides import messages
from .text import LINE_POINTS

TIME_COLUMN = "C"  # the answer column: a time is typed where a single answer goes


class TimedRows:
    """Batch time rows and the Submission area; the writer provides the state."""

    # provided by PackWriter
    ws: Any
    fmt: dict[str, Any]
    spec: Any
    entries: list
    validations: Any
    blocks: list
    row: int
    what: str
    show_guides: bool
    guide_col: str
    text_cpl: float

    def _batch_start(self, batch: int, k: int, size: int, n: int) -> dict[str, Any]:
        last = min(n, k + size)
        r = self._next(20)
        text = f"Batch {batch} (cases {k + 1}-{last}): start time"
        self._string(self.ws, r, "B", text, self.fmt["batch"], "a batch line")
        cell = self._time_cell(r, f"Batch {batch} start")
        ids = [c.item_id for c in self.spec.cards[k:last]]
        return {"batch": batch, "row_ids": ids, "start": cell}

    def _batch_end(self, batch: int) -> dict[str, str]:
        r = self._next(20)
        self._string(self.ws, r, "B", f"Batch {batch}: end time", self.fmt["batch"],
                     "a batch line")
        cell = self._time_cell(r, f"Batch {batch} end")
        self._next(10)
        return cell

    def _time_cell(self, r: int, title: str) -> dict[str, str]:
        pos = (r, ord(TIME_COLUMN) - ord("A"))
        self.check(self.ws.write_blank(*pos, None, self.fmt["answer_time"]), title)
        self.entries.append(pos)
        # a date and time, never a time of day alone: protocol 001 needs 24 h between
        # sittings, which a time of day cannot show (a time alone is below the minimum)
        message = "Type the date and time as yyyy-mm-dd hh:mm, for example 2026-11-02 14:05."

        def build() -> tuple[dict[str, Any], dict[str, Any]]:
            return {"validate": "date", "criteria": "between",
                    "minimum": dt.datetime(2000, 1, 1),
                    "maximum": dt.datetime(2099, 12, 31, 23, 59),
                    **messages(title, message, message)}, {"type": "datetime"}

        self.validations.add(pos, ("datetime", title), build)
        self._require(pos, True)
        return self._ref(TIME_COLUMN, r)

    def _write_study_answers(self) -> dict[str, Any]:
        dims = [d for d in self.spec.dimensions if d.scope == "study"]
        if not dims:
            return {}
        self.blocks.append(self.row)
        self.what = "the Submission area"
        self.show_guides = True
        self._band(self._next(22), "Submission", self.fmt["card"])
        intro = ("Answer once, when you have scored every case: what the study asks for "
                 "beyond the scores.")
        self._merged_string(self.ws, self._next(), "B", self.guide_col, intro,
                            self.fmt["legend"], self.what)
        out = {}
        for dim in dims:
            room = 0.0
            if dim.kind == "text":  # room for the longest answer asked, up to Excel's cap
                words = dim.max_words or dim.min_words or 60
                room = min(409.0, max(120.0, words * 7 / self.text_cpl * LINE_POINTS))
            out[dim.id] = self._wide_answer(dim, room)
        return out
