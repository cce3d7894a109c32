"""No analysis output outlives the inputs it was made from.

An analyze run replaces the earlier run's outputs whole (a rater who has dropped out
leaves no feedback workbook behind); a collect that writes another ratings table, and
an analyze that refuses, remove the earlier analysis outputs and say so. Inputs
(returns, study files, packs, sealed key) and collect's own files are never touched.
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from demo_helpers import built_demo, copy_of
from interrupt_helpers import stop_at_replace

from sheetflow.cli import cli
from sheetflow.collect.returns import file_digest
from sheetflow.staging import OutputSet

COLLECT_OWN = {"ratings.csv", "ratings-incomplete.csv", "collection.json", "validation.xlsx"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo study: four returns collected and analysed (decision and feedback)."""
    return built_demo(tmp_path_factory.mktemp("stale") / "demo")


_copy = copy_of


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output + result.stderr


def _inputs(root: Path) -> dict[str, bytes]:
    """Every file of the study outside out/: returns, study files, packs, sealed/."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] != "out"}


def _collect_own(root: Path) -> dict[str, bytes]:
    out = root / "out"
    return {name: (out / name).read_bytes() for name in COLLECT_OWN if (out / name).exists()}


def _analysis_files(root: Path) -> set[str]:
    """Files in out/ that only analyze writes (not collect's, its reply drafts, the lock
    or the run record)."""
    out = root / "out"
    return {p.relative_to(out).as_posix() for p in out.rglob("*")
            if p.is_file() and p.name not in COLLECT_OWN | {"run.json", ".lock"}
            and p.relative_to(out).parts[0] != "feedback"}


def _dubois(root: Path) -> Path:
    return next((root / "returns").glob("*Dubois*"))


def _type_text_into_an_answer(root: Path) -> None:
    path = _dubois(root)
    book = openpyxl.load_workbook(path)
    book["Scoring"]["C13"] = "five"  # a numeric answer cell
    book.save(path)


def _record(root: Path) -> dict:
    return json.loads((root / "out" / "run.json").read_text(encoding="utf-8"))


def test_a_refused_analyze_after_a_rejected_return_leaves_no_earlier_decision(demo, tmp_path):
    """R4's file rejected by collect, then analyze refused: the earlier
    analysis.xlsx/summary.json (4 of 4 raters, R4's now-rejected ratings) must not stay
    as if current. Collect removes them, names them, and touches no input nor its own
    files; a run record naming inputs (edited by hand) removes none of them."""
    root = _copy(demo, tmp_path)
    summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_raters"] == 4
    earlier = _analysis_files(root)
    assert {"analysis.xlsx", "summary.json", "feedback-R4.xlsx"} <= earlier
    record = _record(root)
    for name in ("../returns/" + _dubois(root).name, "../sealed/key.json", "ratings.csv"):
        record["files"][name] = file_digest(root / "out" / name)
    (root / "out" / "run.json").write_text(json.dumps(record), encoding="utf-8")
    _type_text_into_an_answer(root)
    inputs = _inputs(root)

    code, text = _run("collect", str(root))
    assert code == 1, text
    assert "removed the earlier analysis outputs (out/analysis.xlsx" in text
    assert "out/summary.json" in text and "out/run.json" in text
    collected = _collect_own(root)
    code, text = _run("analyze", str(root))
    assert code == 1 and "nothing was unsealed" in text, text

    assert _analysis_files(root) == set()  # nothing presents the old decision
    assert not (root / "out" / "run.json").exists()
    assert not [p for p in root.rglob("*") if p.name in earlier]  # nor moved elsewhere
    code, text = _run("verify", str(root))
    assert code == 0 and "seal ok" in text, text  # true now: the seal holds, no analysis
    assert _inputs(root) == inputs
    assert _collect_own(root) == collected


def test_an_analyze_that_refuses_removes_the_analysis_it_cannot_vouch_for(demo, tmp_path):
    """An earlier analysis left when analyze refuses (here: the panel is incomplete
    without --allow-partial) is removed, and the refusal says so."""
    root = _copy(demo, tmp_path)
    _type_text_into_an_answer(root)
    assert _run("collect", str(root))[0] == 1
    code, text = _run("analyze", str(root), "--allow-partial")
    assert code == 1, text  # written, the panel incomplete
    assert "feedback-R1.xlsx" in _analysis_files(root)
    inputs, collected = _inputs(root), _collect_own(root)

    code, text = _run("analyze", str(root))
    assert code == 1 and "nothing was unsealed" in text, text
    assert "warning: removed the earlier analysis outputs (out/analysis.xlsx" in text
    assert "analyze refused the study as it is now" in text
    assert _analysis_files(root) == set()
    assert not (root / "out" / "run.json").exists()
    assert _inputs(root) == inputs
    assert _collect_own(root) == collected


def test_a_partial_rerun_leaves_no_feedback_of_a_rater_gone(demo, tmp_path):
    """One return deleted, collect, analyze --allow-partial: the earlier
    feedback-R4.xlsx must not stay beside the new outputs, in no run record."""
    root = _copy(demo, tmp_path)
    _dubois(root).unlink()
    inputs = _inputs(root)
    assert _run("collect", str(root))[0] == 1  # a pack has not come back
    code, text = _run("analyze", str(root), "--allow-partial")
    assert code == 1, text  # written, the panel incomplete

    assert not (root / "out" / "feedback-R4.xlsx").exists()
    assert _analysis_files(root) == set(_record(root)["files"])
    assert _run("verify", str(root))[0] == 0
    assert _inputs(root) == inputs


def test_an_analyze_replaces_the_earlier_set_whole(demo, tmp_path, monkeypatch):
    """A collect stopped after writing its table, before removing the analysis made
    from the old one: verify names the stale analysis; the next analyze removes the
    earlier run's files it does not write again, says so, and lists every file it
    leaves in its record."""
    import sheetflow.collect.run as collect_run

    root = _copy(demo, tmp_path)
    _dubois(root).unlink()
    inputs = _inputs(root)
    monkeypatch.setattr(collect_run, "retire_stale_analysis", lambda root: [],
                        raising=False)
    assert _run("collect", str(root))[0] == 1  # a pack has not come back
    assert (root / "out" / "feedback-R4.xlsx").exists()
    code, text = _run("verify", str(root))
    assert code == 1 and "its outputs are stale" in text, text

    code, text = _run("analyze", str(root), "--allow-partial")
    assert code == 1, text  # written, the panel incomplete
    assert "removed " in text and "feedback-R4.xlsx (the earlier run wrote it" in text
    assert not (root / "out" / "feedback-R4.xlsx").exists()
    assert _analysis_files(root) == set(_record(root)["files"])
    assert _run("verify", str(root))[0] == 0
    assert _inputs(root) == inputs


def test_an_output_set_removes_what_it_supersedes_only_when_committed(tmp_path):
    for name in ("a.txt", "b.txt", "old.txt"):
        (tmp_path / name).write_text(f"old {name}")
    with pytest.raises(RuntimeError), OutputSet() as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new a")
        outputs.supersede([tmp_path / "a.txt", tmp_path / "old.txt"])
        raise RuntimeError("stopped")
    assert (tmp_path / "old.txt").read_text() == "old old.txt"
    with OutputSet() as outputs:
        outputs.stage(tmp_path / "a.txt").write_text("new a")
        outputs.supersede([tmp_path / "a.txt", tmp_path / "old.txt"])
    assert outputs.removed == [tmp_path / "old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
    assert (tmp_path / "a.txt").read_text() == "new a"


def _stopped_analyze(root: Path, monkeypatch, *, journaled: bool = True) -> None:
    """``analyze`` stopped (Ctrl-C) as its set moves in: after the feedback workbooks,
    before analysis.xlsx, summary.json and run.json. ``journaled=False``: as a version
    before the journaled commit did, which neither rolled the set back nor kept a
    record of it."""
    from sheetflow import staging

    def unjournaled(journal, *exc):
        journal.path.unlink(missing_ok=True)
        staging._unlock(journal.lock)

    with monkeypatch.context() as m:
        stop_at_replace(m, "analysis.xlsx")
        if not journaled:
            m.setattr(staging._Journal, "__exit__", unjournaled)
        assert _run("analyze", str(root))[0] == 130


def test_feedback_of_a_stopped_analyze_is_named_and_removed_by_the_next(
        demo, tmp_path, monkeypatch):
    """A first analyze stopped part-way (now rolled back whole; before the journaled
    commit, left as it was) left feedback-R1..R4.xlsx with no analysis.xlsx,
    summary.json or run.json, and nothing named them; R4 then dropped out, the rerun
    left feedback-R4.xlsx beside the new set, in no run record, and status and verify
    said nothing. Now status and verify name each such workbook, and the next analyze
    removes the ones it does not write again, saying so. A file of the same name that
    sheetflow did not write is the user's: never named, never removed."""
    from sheetflow.collect.outputs import retire_analysis

    root = _copy(demo, tmp_path)
    out = root / "out"
    retire_analysis(root)  # as before the first analyze
    assert not list(out.glob("feedback-*.xlsx")) and not (out / "run.json").exists()
    mine = openpyxl.Workbook()
    mine.save(out / "feedback-notes.xlsx")  # the coordinator's own file
    _stopped_analyze(root, monkeypatch)  # rolled back whole: nothing of it is left
    assert not list(out.glob("feedback-R*.xlsx"))
    _stopped_analyze(root, monkeypatch, journaled=False)  # as an earlier version left it
    left = sorted(p.name for p in out.glob("feedback-R*.xlsx"))
    assert left == [f"feedback-R{n}.xlsx" for n in range(1, 5)]
    assert not (out / "summary.json").exists() and not (out / "run.json").exists()
    named = (f"out/feedback-R1.xlsx is a feedback workbook of an analyze that did not "
             f"finish (no out/run.json lists it): run 'sheetflow analyze {root}' again, "
             "which removes it, or writes it again")
    for command in ("status", "verify"):
        code, text = _run(command, str(root))
        assert code == 1 and named in " ".join(text.split()), (command, text)
        assert "feedback-notes.xlsx" not in text

    _dubois(root).unlink()  # R4 drops out
    _run("collect", str(root))
    code, text = _run("analyze", str(root), "--allow-partial")
    assert code == 1, text  # written, the panel incomplete
    assert "feedback-R4.xlsx (the earlier run wrote it" in text
    assert not (out / "feedback-R4.xlsx").exists()
    assert (out / "feedback-notes.xlsx").exists()
    assert set(_record(root)["files"]) == _analysis_files(root) - {"feedback-notes.xlsx"}
    code, text = _run("verify", str(root))
    assert code == 0, text


def test_feedback_left_beside_an_earlier_run_is_named(demo, tmp_path):
    """A feedback workbook sheetflow wrote that the run record does not list (a rerun
    stopped after moving it in) is named by status and verify."""
    import shutil

    root = _copy(demo, tmp_path)
    out = root / "out"
    shutil.copy(out / "feedback-R4.xlsx", out / "feedback-R9.xlsx")
    for command in ("status", "verify"):
        code, text = _run(command, str(root))
        assert code == 1 and "out/feedback-R9.xlsx is a feedback workbook of an analyze " \
            "that did not finish" in " ".join(text.split()), (command, text)


def test_analyze_refuses_returns_the_last_collect_did_not_read(demo, tmp_path):
    """A corrected return saved beside the first after collect (or a collect stopped
    before its outputs moved in): analyzing the table collected before would decide on
    the old answers with nothing said. Analyze refuses, naming the file and collect."""
    root = _copy(demo, tmp_path)
    corrected = _dubois(root).with_name("corrected-return.xlsx")
    corrected.write_bytes(_dubois(root).read_bytes())
    book = openpyxl.load_workbook(corrected)
    book["Scoring"]["C13"] = 1
    book.save(corrected)
    inputs, collected = _inputs(root), _collect_own(root)

    code, text = _run("analyze", str(root))
    assert code == 2, text
    assert ("error: returns/ holds 1 file the last collect did not read "
            "(corrected-return.xlsx)") in text
    assert f"run 'sheetflow collect {root}' first" in text
    assert _inputs(root) == inputs and _collect_own(root) == collected
