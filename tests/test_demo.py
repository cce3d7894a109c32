"""sheetflow demo and sheetflow analyze end to end (CliRunner, temporary folders)."""

from __future__ import annotations

import json
import shutil

import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec.study import load_study


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo") / "run"
    result = CliRunner().invoke(cli, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    return folder, result.output


def test_demo_makes_everything_and_tells_where(demo):
    folder, output = demo
    for rel in ("packs/manifest.json", "sealed/key.json", "sealed/key.sha256",
                "out/ratings.csv", "out/validation.xlsx", "out/analysis.xlsx",
                "out/summary.json"):
        assert (folder / rel).exists(), rel
    assert len(list((folder / "returns").glob("*.xlsx"))) == 4
    key_hash = (folder / "sealed" / "key.sha256").read_text().split()[0]
    assert key_hash in output
    assert "alpha      Total (total)" in output and "analysis.xlsx" in output


def test_demo_packs_name_no_system(demo):
    """The bundled sample's texts, title and properties never name an arm (generate's
    leak check prints a warning line when they do)."""
    _, output = demo
    assert "warning:" not in output


def test_demo_never_modifies_packs(demo):
    folder, _ = demo
    for pack in (folder / "packs").glob("*.xlsx"):
        returned = folder / "returns" / pack.name
        assert returned.read_bytes() != pack.read_bytes()


def test_demo_workbook_matches_summary(demo):
    folder, _ = demo
    summary = json.loads((folder / "out" / "summary.json").read_text())
    assert summary["n_raters"] == 4 and summary["n_cases"] == 18
    wb = openpyxl.load_workbook(folder / "out" / "analysis.xlsx")
    assert {"Summary", "Alpha", "ICC", "Direction", "Spearman internal", "Methods",
            "Rater self-checks", "Data"} <= set(wb.sheetnames)
    alpha = wb["Alpha"]
    header = [c.value for c in alpha[1]]
    got = {r[0].value: r[header.index("alpha")].value for r in alpha.iter_rows(min_row=2)}
    named = load_study(folder).rubric.named  # each measure as the rubric names it
    for rec in summary["alpha"]:
        assert got[named(rec["measure"])] == pytest.approx(rec["alpha"])
    assert "Alpha chart" in [c.title for c in wb.chartsheets]  # a chart on a page of its own
    # simulated raters agree realistically: clearly above chance, not perfectly
    total = next(r for r in summary["alpha"] if r["measure"] == "total")
    assert 0.5 < total["alpha"] < 0.99
    assert summary["spearman"][0]["rho"] > 0.5


def test_analyze_again_is_byte_identical(demo, tmp_path):
    folder, _ = demo
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    result = CliRunner().invoke(cli, ["analyze", str(copy)])
    assert result.exit_code == 0, result.output
    assert (copy / "out" / "analysis.xlsx").read_bytes() == \
        (folder / "out" / "analysis.xlsx").read_bytes()
    lines = result.output.strip().splitlines()
    summary = json.loads((copy / "out" / "summary.json").read_text(encoding="utf-8"))
    # the headline is the command's last lines, in the Summary sheet's words
    assert f"DECISION: {summary['decision']['status'].upper()}" in lines
    assert f"arms: {summary['arms']['sentence']}" in lines


def test_demo_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["demo", str(tmp_path)])
    assert result.exit_code == 2
    assert "not empty" in result.output


def test_analyze_without_ratings_names_collect_and_exits_2(demo, tmp_path):
    folder, _ = demo
    copy = tmp_path / "nocollect"
    shutil.copytree(folder, copy)
    (copy / "out" / "ratings.csv").unlink()
    result = CliRunner().invoke(cli, ["analyze", str(copy)])
    assert result.exit_code == 2
    assert f"run 'sheetflow collect {copy}' first" in result.output
    # one error; the analysis made from the table now gone is removed, and said so
    lines = result.output.strip().splitlines()
    assert [line for line in lines if line.startswith("error:")] == lines[:1]
    assert lines[1:] == [line for line in lines if "removed the earlier analysis" in line]
    assert len(lines) == 2 and not (copy / "out" / "analysis.xlsx").exists()


def test_analyze_refuses_a_broken_seal(demo, tmp_path):
    folder, _ = demo
    copy = tmp_path / "broken"
    shutil.copytree(folder, copy)
    key = copy / "sealed" / "key.json"
    key.write_text(key.read_text().replace('"bloom"', '"llama"', 1))
    result = CliRunner().invoke(cli, ["analyze", str(copy)])
    assert result.exit_code == 3
    assert "sha256" in result.output


def test_demo_force_redoes_an_earlier_demo_only(demo, tmp_path):
    folder, _ = demo
    copy = tmp_path / "again"
    shutil.copytree(folder, copy)
    stale = copy / "out" / ".analysis.xlsx.999.partial"  # an earlier run stopped half way
    stale.write_text("from the earlier run")
    result = CliRunner().invoke(cli, ["demo", str(copy), "--force"])
    assert result.exit_code == 0, result.output
    assert not stale.exists()
    lines = result.output.strip().splitlines()
    assert lines[-6].startswith("winner: llama over bloom")
    assert lines[-5].startswith("how sure: ") and "95% CI" in lines[-5]
    assert lines[-4] == ("decision: INCONCLUSIVE: 2 of 3 checks of the plan met; direction "
                         "agreement with the improved arm: 63.9% (target at least 70.0%): "
                         "weak signal")
    assert lines[-3] == f"coordinator's workbook: {copy / 'out' / 'validation.xlsx'} " \
        "(Status sheet: who returned, what to fix)"
    assert lines[-1] == f"open first: {copy / 'out' / 'analysis.xlsx'} -> Summary"
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    refused = CliRunner().invoke(cli, ["demo", str(other), "--force"])
    assert refused.exit_code == 2 and "does not hold an earlier demo" in refused.output
    assert (other / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("files", [
    {"notes.txt": b"x\n"},
    {"returns/real.xlsx": b"a rater's own return"},
    {"notes.txt": b"x\n", "returns/real.xlsx": b"r", "out/mine.csv": b"m", "a.txt": b"a"},
    {"items.csv": b"item_id\nedited\n"}])
def test_demo_force_refuses_a_folder_with_files_the_demo_did_not_write(demo, tmp_path,
                                                                      files):
    """--force cleared the whole folder when its study.toml was the sample's: a user's
    note and a real return copied into returns/ went with it, without a word."""
    folder, _ = demo
    copy = tmp_path / "again"
    shutil.copytree(folder, copy)
    for rel, data in files.items():
        (copy / rel).write_bytes(data)
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    result = CliRunner().invoke(cli, ["demo", str(copy), "--force"])
    assert result.exit_code == 2, result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "holds files the demo did not write" in errors[0], errors
    named = sorted(files)[:3]
    assert all(rel in errors[0] for rel in named), errors
    if len(files) > 3:
        assert f"and {len(files) - 3} more" in errors[0]
    if "items.csv" in files:
        assert "items.csv (changed since the demo wrote it)" in errors[0]
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


_ARMS = {"winner": "llama", "other": "bloom", "means": {"llama": 12.5, "bloom": 12.1},
         "effect": 0.4, "effect_measure": "mean total difference per case",
         "ci": [0.1, 0.7], "p": 0.01, "test": "Wilcoxon signed-rank (two-sided)",
         "ci_level": 0.95}


@pytest.mark.parametrize(("change", "why"), [
    ({"ci": [-0.3, 1.1]}, "but the 95% CI of the difference includes zero"),
    ({"p": 0.08}, "but Wilcoxon signed-rank (two-sided) p = 0.0800"),
    ({"ci": None}, "but this design gives no interval for the difference")])
def test_the_closing_line_names_no_winner_the_figures_do_not_show(change, why):
    """An arm ahead by a difference its interval or its test does not show is not
    called the winner, on the line the demo prints in green."""
    from sheetflow.demo.run import _sureness, _winner_line

    arms = {**_ARMS, **change}
    assert _winner_line(arms) == (
        "none shown: llama ahead of bloom (llama 12.500 vs bloom 12.100; mean total "
        f"difference per case 0.400), {why}")
    assert not _sureness(arms).startswith("confident")
    assert _winner_line(_ARMS).startswith("llama over bloom (")
    assert _sureness(_ARMS).startswith("confident: the 95% CI")


def _check(name, value, target, passed, outcome):
    return {"name": name, "value": value, "target": target, "passed": passed,
            "outcome": outcome, "note": ""}


@pytest.mark.parametrize(("status", "checks", "panel", "line"), [
    ("pass", [_check("alpha", 0.81, 0.7, True, "met")], {},
     "PASS: 1 of 1 check of the plan met"),
    ("fail", [_check("alpha", 0.52, 0.7, False, "not met"),
              _check("rho", None, 0.6, None, "undefined"),
              _check("kappa mean", 0.4, None, None, "reported")], {},
     "FAIL: 0 of 2 checks of the plan met; alpha: 0.520 (target 0.700): not met; "
     "rho: n/a (target 0.600): undefined"),
    ("incomplete", [_check("alpha", 0.81, 0.7, True, "met")], {"missing": ["R3", "R4"]},
     "INCOMPLETE: 1 of 1 check of the plan met; the panel is incomplete (missing: R3, "
     "R4), which decides the status whatever the checks say"),
    ("reported", [_check("kappa mean", 0.4, None, None, "reported")], {},
     "REPORTED: no check of the plan has a target (figures reported, not judged)")])
def test_the_decision_line_says_which_checks_are_not_met(status, checks, panel, line):
    """The demo's decision line counts the checks met and names each one that is not,
    so an INCONCLUSIVE or a FAIL says why; a reported figure is not counted."""
    from sheetflow.demo.run import _decision_line

    assert _decision_line({"status": status, "checks": checks}, panel) == line


def _stop_at(monkeypatch, step: str) -> None:
    """Ctrl-C at ``step`` of the demo: while the sample is copied (no folder made
    yet), or at generate (the sample's study in the folder)."""
    import sheetflow.demo.run as demo_run

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(demo_run, step, interrupted)


@pytest.mark.parametrize(("args", "step", "made", "hint"), [
    ((), "generate_packs", False, " with --force"),
    (("--force",), "generate_packs", False, ""),
    ((), "make_folder_whole", False, ""),
    ((), "make_folder_whole", True, "")])
def test_an_interrupted_demo_says_how_to_run_it_again(tmp_path, monkeypatch, args, step,
                                                      made, hint):
    """Ctrl-C during the demo said "run the same command again", and that rerun was
    refused: the folder is not empty now, so it needs --force. Stopped before the
    folder was made (or with the empty folder given left empty), it advised --force,
    which a plain rerun does not need."""
    folder = tmp_path / "d"
    if made:
        folder.mkdir()
    _stop_at(monkeypatch, step)
    result = CliRunner().invoke(cli, ["demo", str(folder), *args])
    assert result.exit_code == 130
    assert result.stderr.strip() == ("interrupted (Ctrl-C) before the end: run the same "
                                     f"command again{hint}")
    assert folder.exists() == (made or step == "generate_packs")
    if not hint and not args:  # the rerun advised is not refused
        monkeypatch.undo()
        _stop_at(monkeypatch, "generate_packs")
        again = CliRunner().invoke(cli, ["demo", str(folder)])
        assert again.exit_code == 130, again.output


def test_a_demo_stopped_while_copying_the_sample_leaves_no_folder(tmp_path, monkeypatch):
    """Stopped after the sample's files, before its README: the folder held the sample
    without its README, and the same command was refused (the folder is not empty).
    The copy now appears whole or not at all."""
    from sheetflow.demo.run import run_demo

    real = shutil.copyfile

    def copyfile(src, dst, *args, **kwargs):
        if str(dst).endswith("README.md"):
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copyfile)
    with pytest.raises(KeyboardInterrupt):
        run_demo(tmp_path / "d")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
