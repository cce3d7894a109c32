"""``status --agreement``: every measure analyze reports (the total the decision rests
on, and the direction, named with why it has no alpha yet), a first line saying how its
intervals relate to analyze's, and before any collect the error alone.

EV-01 and EV-02 return filled packs; EV-03 none.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = init_study(tmp_path_factory.mktemp("preview") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=7)
    files[2].unlink()  # EV-03 never returns
    return root


@pytest.fixture
def study(base, tmp_path) -> Path:
    return Path(shutil.copytree(base, tmp_path / "s"))


def test_status_agreement_before_collect_prints_the_error_only(study):
    result = _run("status", str(study), "--agreement")
    assert result.exit_code == 2
    assert result.stdout == ""  # no table before the error
    assert result.stderr.strip().endswith(f"run 'sheetflow collect {study}' first")


def test_status_agreement_lists_the_total_and_direction(study):
    _run("collect", str(study))
    result = _run("status", str(study), "--agreement")
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("agreement  ")]
    assert "analyze's figures are final" in lines[0] and "1,000 resamples" in lines[0]
    names = [ln.split()[1] for ln in lines[1:]]
    assert names[-2:] == ["direction", "total"]
    assert "no alpha before analyze" in lines[-2]
    assert " alpha " in lines[-1] and "; 36 units, 2 raters)" in lines[-1]
    assert " [95% CI " in lines[-1]  # the interval says its level


def test_status_agreement_json_carries_the_preview_note(study):
    _run("collect", str(study))
    result = _run("status", str(study), "--agreement", "--json")
    doc = json.loads(result.stdout)
    assert doc["agreement_note"].endswith("analyze's figures are final")
    assert [d["dimension"] for d in doc["agreement"]][-2:] == ["direction", "total"]


def test_status_agreement_gives_an_ordinal_labelled_dimension_analyze_s_alpha(tmp_path):
    """An ordinal categorical dimension (003's overall rating) read "could not be
    computed: Ordinal string values need an ordered value_domain.": the preview gave no
    alpha where analyze gives one, in the library's words."""
    root = init_study(tmp_path / "s", "answer-review")
    generate_packs(root)
    fill_packs(root, seed=7)
    _run("collect", str(root))
    result = _run("status", str(root), "--agreement", "--json")
    preview = {d["dimension"]: d for d in json.loads(result.stdout)["agreement"]}
    _run("analyze", str(root))
    summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    for measure in ("overall_rating", "factual_correctness", "faithfulness"):
        assert preview[measure]["level"] == "ordinal", preview[measure]
        assert "could not be computed" not in preview[measure]["reason"], preview[measure]
        analyzed = [r for r in summary["alpha"] if r["measure"] == measure]
        assert preview[measure]["alpha"] == pytest.approx(analyzed[0]["alpha"])


def test_status_agreement_leaves_out_a_flag_as_analyze_does(tmp_path):
    """003's gold-dispute flag (a mark, blank when not made) read "fewer than two raters
    on any unit so far" with both raters' packs back: its blanks were taken as missing.
    analyze gives a flag no alpha; the preview leaves it out too."""
    root = init_study(tmp_path / "s", "answer-review")
    generate_packs(root)
    fill_packs(root, seed=7)
    _run("collect", str(root))
    result = _run("status", str(root), "--agreement", "--json")
    shown = [d["dimension"] for d in json.loads(result.stdout)["agreement"]]
    assert "gold_dispute" not in shown, shown
    assert "overall_rating" in shown, shown
