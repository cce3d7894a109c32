"""Notes a marked flag makes required: counted by the progress line, orange while blank.

A flag dimension may name a text dimension as its ``note`` (protocol 003: "Put Y in
gold_dispute and one line in rater_note"), and collect refuses a marked flag whose note
is blank (``flag-note-missing``). Unmarked, the note is optional, so it is not one of the
required cells the progress line counts. Without more, the line said "All ... done" of
a pack collect refused, and the note never turned orange. A mixin of
:class:`.writer.PackWriter`: it pairs each such note cell with the flag cells of the
same card and answer column, then writes

- in the notes helper column, on the note's row, ``AND(marked, blank)`` (blank as
  collect reads it, :func:`.rules.blank_test`)
  (false where either holds an error value) added as a number (``0+(TRUE)`` is 1 in
  Excel and LibreOffice): the progress line adds them up and says "All ... done" only
  at 0;
- an orange highlight on the note cell while a flag is marked and the note is blank.

A flag counts as marked when its cell, read as collect reads a label
(:func:`.rules.loose_text`: tabs, line breaks and non-breaking spaces as spaces,
trimmed), equals one of its choices; both applications compare text ignoring case, as
collect reads ``y`` and `` Y `` as ``Y``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..spec.rubric import Dimension
from .rules import LETTERS, Pos, a1, blank_test, boxes, grouped_refs, loose_text

Offsets = tuple[tuple[int, int], ...]  # each flag cell relative to its note cell


class FlagNotes:
    """The pairing, counting and highlighting; the writer provides the workbook state."""

    # provided by PackWriter
    ws: Any
    fmt: dict[str, Any]
    blocks: list[int]
    notes_col: str
    note_flags: dict[str, tuple[Dimension, ...]]  # note id -> the flags needing it
    flag_note_cells: dict[tuple[int, int, str], Pos]  # (block, column, dim id) -> cell
    check: Callable[[int | None, str], None]

    def _keep_for_notes(self, dim: Dimension, pos: Pos) -> None:
        """Remember the cell of a note a flag needs, or of a flag needing a note."""
        if dim.id in self.note_flags or (dim.kind == "flag" and dim.note in self.note_flags):
            self.flag_note_cells[(len(self.blocks), pos[1], dim.id)] = pos

    def _note_pairs(self) -> list[tuple[Pos, list[tuple[Pos, Dimension]]]]:
        """Each note cell with the flag cells (and flags) of its card and column."""
        cells = self.flag_note_cells
        out = []
        for (block, column, dim_id), note in sorted(cells.items(), key=lambda kv: kv[1]):
            marks = [(cells[(block, column, f.id)], f)
                     for f in self.note_flags.get(dim_id, ())
                     if (block, column, f.id) in cells]
            if marks:
                out.append((note, marks))
        return out

    def _count_notes_to_write(self) -> bool:
        """Per note line, the notes still to write, in the notes helper column.

        Returns
        -------
        bool
            Whether the pack has any such note (else the progress line ignores them).
        """
        per_row: dict[int, list[str]] = {}
        for note, marks in self._note_pairs():
            ref = a1((*note, *note))
            # an error value in the flag or the note is red (to correct); here it
            # must not turn the count, and the whole progress line, into #N/A
            per_row.setdefault(note[0], []).append(
                f"IFERROR(AND({_marked(marks)},{blank_test(ref)}),FALSE)")
        column = ord(self.notes_col) - ord("A")
        for row, terms in per_row.items():
            self.check(self.ws.write_formula(row, column, "=0+" + "+".join(terms),
                                             self.fmt["count"], 0), "the progress line")
        return bool(per_row)

    def _highlight_notes(self) -> None:
        """Orange while a flag is marked and its note blank: one conditional format per
        layout of flags around the note, answer column and 250 ranges, its relative
        formula anchored on the top-left cell of its first range (as the blank
        highlight's)."""
        layouts: dict[tuple[Offsets, tuple[str, ...]], list[Pos]] = {}
        for note, marks in self._note_pairs():
            offsets = tuple((p[0] - note[0], p[1] - note[1]) for p, _ in marks)
            ids = tuple(f.id for _, f in marks)
            layouts.setdefault((offsets, ids), []).append(note)
        flags = {f.id: f for fs in self.note_flags.values() for f in fs}
        for (offsets, ids), notes in layouts.items():
            columns: dict[int, list[Any]] = {}
            for box in boxes(notes):
                columns.setdefault(box[1], []).append(box)
            for column in sorted(columns):
                for refs in grouped_refs(columns[column]):
                    top = refs[0].split(":")[0]
                    anchor = _position(top)
                    marks = [((anchor[0] + dr, anchor[1] + dc), flags[i])
                             for (dr, dc), i in zip(offsets, ids, strict=True)]
                    self.check(self.ws.conditional_format(refs[0], {
                        "type": "formula", "format": self.fmt["blank"],
                        "criteria": f"=AND({blank_test(top)},{_marked(marks)})",
                        "multi_range": " ".join(refs)}), "the note-needed highlight")


def _marked(marks: list[tuple[Pos, Dimension]]) -> str:
    """``OR(TRIM(..C12..)="Y",..)``: whether any flag of ``marks`` is marked."""
    tests = []
    for pos, flag in marks:
        for choice in flag.choices:
            quoted = choice.replace('"', '""')  # a quote inside an Excel string is doubled
            tests.append(f'{loose_text(a1((*pos, *pos)))}="{quoted}"')
    return f"OR({','.join(tests)})"


def _position(ref: str) -> Pos:
    """``C12`` as a 0-based (row, column)."""
    letters = ref.rstrip("0123456789")
    return int(ref[len(letters):]) - 1, LETTERS.index(letters)
