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
        # the export holds the validators' ratings: the total the internal team also
        # rates (protocol 000) matches its validators-only alpha, and with the internal
        # scores file beside it, the decision's
        assert got == pytest.approx(want.get("alpha_validators_only", want["alpha"])), measure
        if "alpha_validators_only" in want:
            internal = pd.read_csv(root / "internal_scores.csv", dtype=str)
            units = rows.drop_duplicates(["case", "arm"]).set_index(["case", "arm"])["unit"]
            team = pd.DataFrame({"rater": "internal team", "value": internal["total"].astype(
                float).to_numpy(), "unit": units.reindex(pd.MultiIndex.from_frame(
                    internal[["case_id", "arm"]])).to_numpy()})
            both = pd.concat([rows[["rater", "unit", "value"]], team]).pivot_table(
                index="rater", columns="unit", values="value", aggfunc="first")
            assert stats.krippendorff_alpha(both.to_numpy(dtype=object), level=level,
                                            n_boot=0).loc[0, "alpha"] == \
                pytest.approx(want["alpha"])
        checked += 1
    assert checked >= 6


def _large_data(rows: int) -> pd.DataFrame:
    """Analysis data of ``rows`` ratings: text, categories, counts, mixed values, gaps
    and formula starts."""
    import numpy as np

    rng = np.random.default_rng(3)
    values = rng.integers(0, 6, rows).astype(float).tolist()
    return pd.DataFrame({
        "rater": pd.array(rng.choice(["R1", "R2", "=R3"], rows), dtype="string"),
        "role": "primary", "sitting": rng.integers(1, 3, rows),
        "case": [f"TC-{i % 40:03d}" for i in range(rows)],
        "label": rng.choice(["A", "B", ""], rows),
        "arm": pd.Categorical(rng.choice(["llama", "bloom"], rows)),
        "dimension": rng.choice(["depth", "total", "notes"], rows),
        "value": [None if i % 11 == 0 else 'said "-no", twice' if i % 7 == 0 else v
                  for i, v in enumerate(values)],
        "confidence": pd.array(rng.choice(["Low", "High", None], rows), dtype="string")})


def test_data_csv_and_the_unblinded_csv_format_each_column_once(tmp_path, monkeypatch):
    """Data too large for its sheet goes to tables/data.csv, written with
    ratings-unblinded.csv: the same columns, each formatted once per chunk of rows for
    both files, and each file the very bytes write_csv gives it alone (the unblinded
    table with its columns reordered and renamed, a column the data lacks empty)."""
    from types import SimpleNamespace

    from sheetflow.report import large
    from sheetflow.report.outputs import UNBLINDED_COLUMNS, write_unblinded_csv

    full = _large_data(large.CHUNK_ROWS + 5000)  # two chunks
    for data in (full, full.drop(columns=["role", "confidence"])):
        alone = {"data": large.write_csv(data, tmp_path / "alone-data.csv").read_bytes(),
                 "unblinded": large.write_csv(
                     pd.DataFrame({name: data.get(column, "")
                                   for name, column in UNBLINDED_COLUMNS.items()}),
                     tmp_path / "alone-unblinded.csv").read_bytes()}
        made: list[str] = []
        with monkeypatch.context() as patch:
            patch.setattr(large, "_piece", lambda col, cats, made=made, piece=large._piece:
                          made.append(col.name) or piece(col, cats))
            write_unblinded_csv(SimpleNamespace(data=data), tmp_path / "unblinded.csv",
                                tmp_path / "tables" / "data.csv")
        columns = [*data.columns, *(c for c in UNBLINDED_COLUMNS.values()
                                    if c not in data.columns)]
        assert sorted(made) == sorted(columns * 2)  # each column once in each chunk
        assert (tmp_path / "unblinded.csv").read_bytes() == alone["unblinded"]
        assert (tmp_path / "tables" / "data.csv").read_bytes() == alone["data"]


def test_analyze_writes_the_data_csv_with_the_unblinded_csv(analysed, tmp_path, monkeypatch):
    """Where the data is too large for its sheet, write_analysis_outputs writes
    tables/data.csv beside ratings-unblinded.csv, each as write_csv writes it alone,
    and lists it after the other large tables, as before."""
    from sheetflow.report import large
    from sheetflow.report.outputs import UNBLINDED_COLUMNS

    _, analysis = analysed
    monkeypatch.setattr(large, "LARGE_ROWS", 20)  # the data, and some tables, are large
    written = write_analysis_outputs(analysis, tmp_path / "out", workers=1)
    tables = [p.name for p in written if p.parent.name == "tables"]
    assert len(tables) > 1 and tables[-1] == "data.csv"
    data = analysis.data
    unblinded = pd.DataFrame({name: data[column] for name, column in UNBLINDED_COLUMNS.items()})
    assert (tmp_path / "out" / "tables" / "data.csv").read_bytes() == \
        large.write_csv(data, tmp_path / "data.csv").read_bytes()
    assert (tmp_path / "out" / "ratings-unblinded.csv").read_bytes() == \
        large.write_csv(unblinded, tmp_path / "unblinded.csv").read_bytes()
