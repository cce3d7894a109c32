"""``status --agreement``: alpha on the returns so far, from the blinded ratings alone."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys

import pandas as pd
import pytest
from click.testing import CliRunner
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow import stats
from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.collect.agreement import blinded_matrix
from sheetflow.packs import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec import init_study, load_study
from sheetflow.workbook import layout as L


@pytest.fixture(scope="module")
def partly_returned(tmp_path_factory):
    """A paired-rubric study with 3 of 4 returns. The first two raters count the same
    depth for each response (planted from the response's text); the third counts
    something else entirely (a misread rubric)."""
    root = init_study(tmp_path_factory.mktemp("calib") / "s", "paired-rubric")
    generate_packs(root)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for n, pack in enumerate(packs[:3]):
        answers = plan_answers(pack)
        for card in pack["cards"]:
            for row in card["rows"]:
                planted = int(row["locked"][0]["sha256"][:4], 16) % 8  # per response
                value = planted if n < 2 else (planted * 5 + 3) % 8
                answers[row["answers"]["depth"]["cell"]] = (value, str(value))
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      answers)
    collect(root)
    return root, packs


def test_alpha_per_dimension_from_blinded_ratings_without_sealed(partly_returned, tmp_path):
    root, packs = partly_returned
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "sealed")  # nothing under sealed/ is needed, so nothing is read
    result = CliRunner().invoke(cli, ["status", str(copy), "--agreement", "--json"])
    assert result.exit_code == 0, result.output
    found = {d["dimension"]: d for d in json.loads(result.output)["agreement"]}
    study = load_study(copy)
    # a direction names a label: not comparable blinded, so named with why it has no alpha
    assert found["direction"]["alpha"] is None
    assert found["direction"]["reason"].startswith("no alpha before analyze: ")
    for name in ("depth", "evidence", "alternatives"):
        dim = study.rubric.dimension(name)
        wide = blinded_matrix(copy, name)
        assert wide.shape == (3, 36)  # 18 cases x 2 responses, by their text's hash
        expected = stats.krippendorff_alpha(wide.to_numpy(dtype=object), level=dim.level,
                                            n_boot=study.plan.n_boot,
                                            seed=study.plan.seed).iloc[0]
        if math.isnan(expected["alpha"]):  # undefined (no variation): said, not a number
            assert found[name]["alpha"] is None
        else:
            assert found[name]["alpha"] == pytest.approx(expected["alpha"])
            assert found[name]["ci_low"] == pytest.approx(expected["ci_low"])
        assert found[name]["n_raters"] == 3
    assert found["depth"]["alpha"] is not None
    assert found["depth"]["raises_most"] == packs[2]["rater_id"]  # the misread rubric
    text = result.output
    for arm in (a.id for a in study.design.arms):
        assert arm not in text  # never shows arms


def test_the_agreement_line_names_who_to_talk_to(partly_returned):
    root, packs = partly_returned
    result = CliRunner().invoke(cli, ["status", str(root), "--agreement"])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if ln.startswith("agreement  depth"))
    assert f"without {packs[2]['rater_id']} it rises most" in line


_GUARDED: list[str] = []  # folders no open() or listing may touch (the hook stays installed)


def _refuse_guarded(event: str, args: tuple) -> None:
    if event not in ("open", "os.listdir", "os.scandir") or not _GUARDED or not args:
        return
    target = args[0]
    if isinstance(target, (str, bytes, os.PathLike)):
        path = os.path.abspath(os.fsdecode(target))
        if any(path == g or path.startswith(g + os.sep) for g in _GUARDED):
            raise PermissionError(f"{path}: unreadable in this test")


def test_sealed_unreadable_and_alpha_from_the_planted_values(partly_returned, tmp_path):
    """``sealed/`` present but unreadable (an audit hook refuses every open and listing
    under it: permissions alone do not stop a superuser), and the expected alpha built
    from the planted answers themselves, not through the module under test."""
    root, packs = partly_returned
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    sys.addaudithook(_refuse_guarded)
    _GUARDED.append(str((copy / "sealed").resolve()))
    try:
        result = CliRunner().invoke(cli, ["status", str(copy), "--agreement", "--json"])
    finally:
        _GUARDED.clear()
    assert result.exit_code == 0, result.output
    found = {d["dimension"]: d for d in json.loads(result.output)["agreement"]}
    planted: dict[str, dict[str, int]] = {}
    for n, pack in enumerate(packs[:3]):
        for card in pack["cards"]:
            for row in card["rows"]:
                text = row["locked"][0]["sha256"]
                value = int(text[:4], 16) % 8
                planted.setdefault(pack["rater_id"], {})[text] = \
                    value if n < 2 else (value * 5 + 3) % 8
    study = load_study(root)
    depth = study.rubric.dimension("depth")
    level = depth.level  # a count is agreed on its points, as the analysis takes it
    # raters x response texts (Series.map: DataFrame.map needs pandas 2.1)
    wide = pd.DataFrame(planted).T.apply(lambda col: col.map(depth.points_for_count))
    expected = stats.krippendorff_alpha(wide.to_numpy(dtype=object), level=level,
                                        n_boot=0).loc[0, "alpha"]
    assert found["depth"]["alpha"] == pytest.approx(expected)
    without = {r: stats.krippendorff_alpha(wide.drop(index=r).to_numpy(dtype=object),
                                           level=level, n_boot=0).loc[0, "alpha"]
               for r in wide.index}
    assert found["depth"]["raises_most"] == max(without, key=lambda r: without[r]) \
        == packs[2]["rater_id"]
    for rater, change in found["depth"]["leave_one_out"].items():
        assert change == pytest.approx(without[rater] - expected)
