"""Protocols 001 and 003 end to end on returns planted at a threshold or in a cell
collect reads as blank.

001: sitting 2 begun 23 h 59 min after sitting 1 ended is a deviation, said with a gap
under 24 h (never "24.0 h", the gap the protocol asks for); begun exactly 24 h after,
it is none. Batches that overlap by seconds are said with the seconds.

003: a cell holding only a control character or a zero-width space is blank to
collect (no gold dispute flagged, no note asked for, a required answer missing), so
analyze reads it as blank too: no gold dispute listed, and with --allow-partial the
blank is missing data, not a label outside the column's choices.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from click.testing import CliRunner
from decision_helpers import run_analyze
from plant_helpers import plant_answer_review
from test_decision_001 import DAY, _study
from test_decision_003 import _answer

from sheetflow.cli import cli
from sheetflow.collect.protocol_checks import batch_overlaps, sitting_gaps

SITTING_1_ENDS = DAY + dt.timedelta(hours=3, minutes=40)  # batch 3 of 3: 12:00 to 12:40


def _sitting_2_after(gap: dt.timedelta):
    """Batch times: sitting 1's three batches hourly from 10:00, 40 minutes each;
    sitting 2's first batch starts ``gap`` after sitting 1's last ended."""
    def when(sitting: int, batch: int, part: str) -> dt.datetime:
        start = DAY + dt.timedelta(hours=batch) if sitting == 1 else \
            SITTING_1_ENDS + gap + dt.timedelta(hours=batch - 1)
        return start + dt.timedelta(minutes=40) if part == "end" else start
    return when


def test_a_gap_just_under_24_hours_is_never_said_as_24():
    ended = dt.datetime(2026, 11, 2, 10, 40)
    first = [(1, "end", ended, "C5")]
    (gap,) = sitting_gaps(first, [(1, "start", ended + dt.timedelta(hours=23, minutes=59),
                                   "C4")])
    assert gap.detail == "Batch 1 starts 23.9 h after sitting 1 ended (2026-11-02 10:40)"
    assert sitting_gaps(first, [(1, "start", ended + dt.timedelta(hours=24), "C4")]) == []
    (early,) = sitting_gaps(first, [(1, "start", ended - dt.timedelta(minutes=20), "C4")])
    assert "starts -0.3 h after" in early.detail


def test_batches_overlapping_by_seconds_are_told_apart():
    """Batch 2 starting as batch 1 ends is no overlap; starting a minute before is one;
    starting 30 seconds before is one too, said with the seconds (never "starts at
    09:40, before batch 1 ends (09:40)")."""
    def found(end: dt.datetime, start: dt.datetime) -> list[str]:
        day = dt.datetime(2026, 11, 2, 9)
        return [f.detail for f in batch_overlaps([
            (1, "start", day, "C4"), (1, "end", end, "C5"),
            (2, "start", start, "C26"), (2, "end", day.replace(hour=11), "C27")])]

    ends = dt.datetime(2026, 11, 2, 9, 40)
    assert found(ends, ends) == []
    assert found(ends, ends - dt.timedelta(minutes=1)) == [
        "Batch 2 starts at 2026-11-02 09:39, before batch 1 ends (2026-11-02 09:40)"]
    assert found(ends + dt.timedelta(seconds=30), ends) == [
        "Batch 2 starts at 2026-11-02 09:40:00, before batch 1 ends (2026-11-02 09:40:30)"]


def test_sitting_two_at_and_just_under_24_hours(tmp_path):
    """One step under the protocol's 24 hours is a deviation on the Summary, in
    collect's warning and in summary.json, said as under 24 h; at 24 h there is none.
    Either way the decision stands (a deviation is reported, not decided on)."""
    said = {}
    for name, gap in (("under", dt.timedelta(hours=23, minutes=59)),
                      ("at", dt.timedelta(hours=24))):
        root = _study(tmp_path / name, ("owner-01",), when=_sitting_2_after(gap))
        collected = CliRunner().invoke(cli, ["collect", str(root)])
        out, summary, rows = run_analyze(root)
        assert out.exit_code == 0, out.output
        assert summary["decision"]["status"] == "pass"
        said[name] = (collected.output, summary["deviations"], rows)
    output, deviations, rows = said["under"]
    line = "Batch 1 starts 23.9 h after sitting 1 ended (2026-10-02 12:40)"
    assert f"[sitting-too-soon] {line}" in output
    assert [d["text"] for d in deviations] == [f"sitting 2: {line}"]
    assert f"deviation (owner-01, batch times): sitting 2: {line}" in rows
    assert not any("24.0 h" in r for r in rows) and "24.0 h" not in output
    output, deviations, rows = said["at"]
    assert "sitting-too-soon" not in output and deviations == []
    assert "deviations from the protocol: none found in the batch times, none reported" in rows


def _review(root: Path, odd: dict[tuple[str, str, str], str]) -> Path:
    """The answer-review study of test_decision_003, with ``odd`` (rater, item,
    dimension) cells holding other text."""
    def answer(study, pack, a, index):
        key = (pack["rater_id"], a["item_id"], a["dimension"])
        return odd[key] if key in odd else _answer(study, a["dimension"], index, a["item_id"])

    plant_answer_review(root, answer)
    return root


def test_a_gold_dispute_cell_collect_read_as_blank_is_no_dispute(tmp_path):
    """rater1's gold_dispute cells on HV-06 (a pasted NEL, U+0085) and HV-08 (a
    zero-width space) are blank to collect: it asks for no note and flags nothing. The
    one dispute is HV-04's, on the Summary and in summary.json."""
    root = _review(tmp_path, {("rater1", "HV-06", "gold_dispute"): "\x85",
                              ("rater1", "HV-08", "gold_dispute"): "\u200b"})
    collected = CliRunner().invoke(cli, ["collect", str(root)])
    assert collected.exit_code == 0, collected.output
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert summary["gold_disputes"] == ["HV-04"]
    assert "gold disputes: 1 item (HV-04)" in rows
    assert "gold disputes: 1 item (HV-04)" in out.output


def test_a_required_answer_of_control_characters_is_missing_data(tmp_path):
    """rater1's overall rating of HV-01 holds only DEL and NEL: collect says it is blank
    and leaves the file out for it. With --allow-partial the blank is missing data, as
    the panel line says: agreement on that column is computed over the 17 units both
    rated, never refused for a value outside the choices."""
    root = _review(tmp_path, {("rater1", "HV-01", "overall_rating"): "\x7f\x85"})
    collected = CliRunner().invoke(cli, ["collect", str(root)])
    assert "[answer-missing] Overall rating" in collected.output
    out, summary, rows = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # the panel is incomplete
    overall = next(a for a in summary["alpha"] if a["measure"] == "overall_rating")
    assert overall["n_units"] == 17 and overall["alpha"] == 1.0
    assert "x007F" not in out.output and not any("x007F" in r for r in rows)
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == "alpha on Overall rating (overall_rating)")
    assert check["outcome"] == "reported" and check["value"] == 1.0
