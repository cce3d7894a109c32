"""The analysis workbook of every template, read back as an analyst reads it.

Each template's study (its bundled items, simulated raters) is generated, filled,
collected and analysed once; the tests read ``out/analysis.xlsx`` with openpyxl: the
rubric's labels where a reader needs them, one form per kind of quantity, the Methods
sheet's references, the print setup and no sheet left as a bare header.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from sheetflow.analysis import analyze
from sheetflow.collect import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs import generate_packs
from sheetflow.report import SHEET_TITLES, write_analysis_outputs
from sheetflow.spec import init_study, list_templates


@pytest.fixture(scope="module")
def studies(tmp_path_factory) -> dict[str, Path]:
    """Template -> its study folder, analysed (``out/analysis.xlsx``)."""
    base = tmp_path_factory.mktemp("reading")
    out = {}
    for template in sorted(list_templates()):
        root = init_study(base / template, template)
        generate_packs(root)
        fill_packs(root, seed=5)
        collect(root)
        write_analysis_outputs(analyze(root), root / "out")
        out[template] = root
    return out


def _book(root: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(root / "out" / "analysis.xlsx")


def _references(root: Path) -> str:
    """The References entry of the Methods sheet (its rows joined)."""
    methods = _book(root)["Methods"]
    text, inside = [], False
    for topic, body in methods.iter_rows(max_col=2, values_only=True):
        inside = topic == "References" or (inside and not topic)
        if inside:
            text.append(str(body))
    return "\n".join(text)


CITED = {  # a reference (by its first words) and the analyses whose figures rest on it
    "Krippendorff, K.": {"alpha", "confidence_agreement"},
    "Cohen, J.": {"cohen_kappa", "intra_rater_kappa"},
    "Fleiss, J. L.": {"fleiss_kappa", "percent_agreement"},
    "Gwet, K. L.": {"gwet"},
    "Shrout, P. E.": {"icc"},
    "McGraw, K. O.": {"icc"},
    "Fieller, E. C.": {"spearman_internal"},
    "Phipson, B.": {"permutation"},
    "Armitage, P.": {"trend"},
    "Wilcoxon, F.": {"wilcoxon_totals"},
    "Landis, J. R.": {"cohen_kappa", "intra_rater_kappa"},
    "Koo, T. K.": {"icc"},
}


def test_methods_lists_only_the_references_behind_the_figures_reported(studies):
    """Every reference was listed for every study: a keep-known study, which computes
    no alpha, ICC, Fleiss' kappa, Gwet's AC, Spearman's rho or Wilcoxon test, cited
    them all. Now a reference is listed exactly when a figure resting on it is on a
    sheet of the workbook."""
    for template, root in studies.items():
        sheets = {ws.title for ws in _book(root).worksheets}
        shown = {name for name, title in SHEET_TITLES.items() if title in sheets}
        refs = _references(root).split("\n")
        for first_words, behind in CITED.items():
            listed = any(ref.startswith(first_words) for ref in refs)
            assert listed == bool(shown & behind), (template, first_words)
    keep_known = _references(studies["keep-known"])
    assert "Phipson, B." in keep_known and "Armitage, P." in keep_known
    assert "Krippendorff" not in keep_known and "Koo, T. K." not in keep_known
    paired = _references(studies["paired-rubric"])
    assert "Phipson" not in paired and "Armitage" not in paired
