"""``out/ratings-unblinded.csv``: the tidy long table for R or pandas, and it round-trips:
alpha per measure computed from it alone equals the analysis's figures."""

from __future__ import annotations

import pandas as pd
import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow import stats
from sheetflow.analysis import analyze
from sheetflow.analysis.context import Context, typed_domain
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.report import write_analysis_outputs
from sheetflow.spec import init_study, load_study
from sheetflow.workbook import layout as L


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    root = init_study(tmp_path_factory.mktemp("export") / "s", "paired-rubric")
    generate_packs(root)
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        answers = plan_answers(pack)
        cell = pack["study_answers"]["blinding_concerns"]["cell"]
        answers[cell] = ("=HYPERLINK(\"http://x\")", "=HYPERLINK(\"http://x\")")
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      answers)
    collect(root)
    analysis = analyze(root)
    write_analysis_outputs(analysis, root / "out")
    return root, analysis


def test_the_columns_and_every_rating(analysed):
    root, analysis = analysed
    table = pd.read_csv(root / "out" / "ratings-unblinded.csv", dtype=str,
                        keep_default_na=False)
    assert list(table.columns) == ["item", "arm", "rater", "role", "sitting", "label",
                                   "dimension", "value", "confidence"]
    assert len(table) == len(analysis.data)
    study = load_study(root)
    assert set(table.loc[table["arm"] != "", "arm"]) == {a.id for a in study.design.arms}
    concerns = table[table["dimension"] == "blinding_concerns"]["value"]
    assert set(concerns) == {"'=HYPERLINK(\"http://x\")"}  # neutralised


def test_alpha_from_the_export_equals_the_analysis(analysed):
    root, analysis = analysed
    study = load_study(root)
    table = pd.read_csv(root / "out" / "ratings-unblinded.csv", dtype=str,
                        keep_default_na=False)
    data = table.rename(columns={"item": "case"}).assign(sitting=lambda f: f["sitting"]
                                                        .astype(int))
    ctx = Context(study, data, None)  # the rubric's levels and domains, the export's data
    checked = 0
    for measure, level, domain, kind in ctx.dims_and_totals():
        want = next((r for r in analysis.summary["alpha"] if r["measure"] == measure), None)
        if want is None or want["alpha"] is None:
            continue
        rows = ctx.numeric(measure) if kind in ("count", "checklist", "scale", "number",
                                                "total") else ctx.ratings(measure)
        wide = rows.pivot_table(index="rater", columns="unit", values="value",
                                aggfunc="first")
        got = stats.krippendorff_alpha(wide.to_numpy(dtype=object), level=level,
                                       value_domain=typed_domain(kind, domain, level),
                                       n_boot=0).loc[0, "alpha"]
        assert got == pytest.approx(want["alpha"]), measure
        checked += 1
    assert checked >= 6
