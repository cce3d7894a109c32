"""The plan workbook's Methods sheet lists in full every source its text cites.

Its text cited Donner & Rotondi (2010), Bonett (2002), Donner & Eliasziw (1992),
Walter, Eliasziw & Donner (1998) and Zou (2012) with no References on the sheet. Now
``sheetflow plan`` on every template writes a Methods sheet whose References give each
cited source in full (authors with initials, year, title, source), one a row, and no
source the text does not cite.

Its "Interval" entry described Cohen's kappa's normal-theory interval without naming
its variance, and ``docs/plan.md`` cited Flack et al. (1988) with no entry in its
References. Now the entry cites Fleiss, Cohen & Everitt (1969), listed in full, and
every author-year citation of ``docs/plan.md`` has its full entry there.
"""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pytest
from citation_helpers import cited, listed, missing, same_authors
from click.testing import CliRunner

from sheetflow.analysis.agreement import methods as agreement_methods
from sheetflow.citations import HAYES_KRIPPENDORFF_2007, UNIT_BOOTSTRAP, ZAPF_2016
from sheetflow.cli import cli
from sheetflow.plan.workbook import _METHODS, _references
from sheetflow.spec import init_study, list_templates
from sheetflow.spec.study import load_study

QUICK = {"paired-rubric": ["--simulations", "20", "--n-boot", "100"]}  # alpha: simulated


def _methods(xlsx: Path) -> list[tuple[str, str]]:
    """The Methods sheet as (topic, text) below its header, each reference its own row."""
    rows = openpyxl.load_workbook(xlsx)["Methods"].iter_rows(min_row=2, max_col=2,
                                                             values_only=True)
    return [(str(topic or ""), str(text or "")) for topic, text in rows]


@pytest.mark.parametrize("template", sorted(list_templates()))
def test_every_source_the_plan_methods_cite_is_in_their_references(template, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    result = CliRunner().invoke(cli, ["plan", str(folder), *QUICK.get(template, [])])
    assert result.exit_code == 0, result.output
    rows = _methods(folder / "out" / "plan.xlsx")
    first = next(i for i, (topic, _) in enumerate(rows) if topic == "References")
    text = " ".join(body for _, body in rows[:first])
    references = [body for _, body in rows[first:]]
    assert all(not topic for topic, _ in rows[first + 1:])  # continued, one entry a row
    assert len(cited(text)) >= 5  # Donner & Rotondi, Bonett, Donner & Eliasziw, ...
    assert missing([*rows[:first], ("References", "\n".join(references))]) == []
    for reference in references:  # each a full entry the text cites: nothing else listed
        [(authors, year)] = listed(reference)
        assert any(same_authors(names, etal, authors) and y == year
                   for names, y, etal in cited(text)), reference
    interval = dict(rows[:first])["Interval"]  # the source of Cohen's kappa's variance
    assert (("Fleiss", "Cohen", "Everitt"), "1969", False) in cited(interval)
    assert (("Fleiss", "Cohen", "Everitt"), "1969") in listed("\n".join(references))


def test_the_plan_names_alphas_bootstrap_as_analyze_does(tmp_path):
    """The plan's Interval entry said only "percentile unit bootstrap", while analyze's
    Methods text names how units are resampled and its sources: the same words now,
    with both sources in the plan's References."""
    interval = dict(_METHODS)["Interval"]
    assert UNIT_BOOTSTRAP in interval
    assert "the unit bootstrap of Zapf et al. 2016" in UNIT_BOOTSTRAP
    study = load_study(init_study(tmp_path / "s", template="paired-rubric"))
    analyze = dict(agreement_methods(study))["Krippendorff's alpha"]
    assert UNIT_BOOTSTRAP in analyze
    assert {ZAPF_2016, HAYES_KRIPPENDORFF_2007} <= set(_references())


def _markdown_prose(text: str) -> str:
    """``text`` as it reads: no emphasis marks, lines joined, a possessive as its name
    ("Zou's (2012)" cites Zou (2012))."""
    return re.sub(r"(?<=[a-z])'s\b", "", " ".join(text.replace("*", "").split()))


def test_every_source_docs_plan_cites_is_in_its_references():
    doc = (Path(__file__).parents[1] / "docs" / "plan.md").read_text(encoding="utf-8")
    text, references = (_markdown_prose(part) for part in doc.split("\n## References\n"))
    assert {(("Flack",), "1988", True), (("Zou",), "2012", False)} <= cited(text)
    assert missing([("Method", text), ("References", references)]) == []
