"""Cross-checks against irrCAC's recorded results (fixtures/irrcac_reference.json).

irrCAC pins old numpy, scipy and pandas, so it is not installed for the tests: its
outputs on seeded random matrices (stored in the file with the package version and the
exact call) are recorded by fixtures/make_irrcac_fixture.py (``pip install .[reference]``).
irrCAC rounds its output to 5 decimals; the same conventions hold on both sides (full
category domain 1..5, t interval capped at 1, no finite-population correction).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from sheetflow import stats as st

FIXTURE = Path(__file__).parent / "fixtures" / "irrcac_reference.json"
TOL = 5e-6 + 1e-12


@cache
def _fixture() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _cases(name: str):
    fx = _fixture()
    case = fx["cases"][name]
    for raw, ref in zip(fx["matrices"][case["set"]], case["results"], strict=True):
        yield np.array(raw, dtype=float), ref


def test_fixture_records_its_provenance() -> None:
    prov = _fixture()["provenance"]
    assert prov["package"] == "irrCAC" and prov["version"]
    assert "CAC(" in prov["call"] and prov["script"].endswith("make_irrcac_fixture.py")
    assert (Path(__file__).parent / "fixtures" / "make_irrcac_fixture.py").exists()


def _compare(name: str, ours_fn, column: str, se: bool = True) -> int:
    compared = 0
    for data, ref in _cases(name):
        ours = ours_fn(data).loc[0]
        if ref is None or ref["coefficient"] is None:
            assert np.isnan(ours[column]) and ours["reason"]
            continue
        if np.isnan(ours[column]):
            assert ours["reason"]
            continue
        assert abs(ours[column] - ref["coefficient"]) <= TOL, name
        if se:
            assert abs(ours["se"] - ref["se"]) <= TOL, name
            assert abs(ours["ci_low"] - ref["ci_low"]) <= TOL, name
            assert abs(ours["ci_high"] - ref["ci_high"]) <= TOL, name
        compared += 1
    return compared


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_alpha_matches_irrcac(level: str) -> None:
    # Gwet's weighted alpha with quadratic (ratio) weights is Krippendorff's interval
    # (ratio) alpha.
    fn = lambda d: st.krippendorff_alpha(d, level=level, value_domain=_fixture()["domain"],  # noqa: E731
                                         n_boot=0)  # fmt: skip
    assert _compare(f"alpha_{level}", fn, "alpha", se=False) >= 150


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic", "ordinal", "bipolar"])
def test_gwet_matches_irrcac(weights: str) -> None:
    fn = lambda d: st.gwet_ac(d, weights=weights, categories=_fixture()["domain"])  # noqa: E731
    assert _compare(f"gwet_{weights}", fn, "ac") >= 180


def test_fleiss_matches_irrcac_with_missing_data() -> None:
    fn = lambda d: st.fleiss_kappa(d, categories=_fixture()["domain"])  # noqa: E731
    assert _compare("fleiss", fn, "kappa") >= 180


@pytest.mark.parametrize("weights", ["identity", "quadratic"])
def test_conger_matches_irrcac(weights: str) -> None:
    fn = lambda d: st.conger_kappa(d, weights=weights, categories=_fixture()["domain"])  # noqa: E731
    assert _compare(f"conger_{weights}", fn, "kappa") >= 150


@pytest.mark.parametrize("weights", ["identity", "linear"])
def test_brennan_prediger_matches_irrcac(weights: str) -> None:
    fn = lambda d: st.brennan_prediger(d, weights=weights, categories=_fixture()["domain"])  # noqa: E731
    assert _compare(f"bp_{weights}", fn, "bp") >= 180
