"""The summary (headline numbers and verdicts, JSON-safe) and the Methods text."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import __version__
from ..citations import (
    FLEISS_COHEN_EVERITT_1969,
    GWET_2014,
    HAYES_KRIPPENDORFF_2007,
    ZAPF_2016,
    cited_entries,
)
from ..spec.study import Study
from ..words import FEW_UNITS_TOPIC, few_units_method
from . import confidence, position, readings
from .context import Context, answered, json_safe
from .decision import default_decision, finish
from .panel import PANEL_METHOD, Panel
from .registry import all_headlines, all_plans, planned_analyses, protocol_plan

SUMMARY_SCHEMA = "sheetflow-summary/2"
"""The version of summary.json's schema (docs/summary-schema.json): 2 since the pairwise
kappa's ``units_range``, the confidence alphas' ``n_units`` and ``n_raters`` and the
ICC's few-units ``note`` became required."""

REFERENCES = (
    ("Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg "
     "School for Communication, University of Pennsylvania.",
     ("alpha", "confidence_agreement")),
    (ZAPF_2016, ("alpha", "confidence_agreement")),
    (HAYES_KRIPPENDORFF_2007, ()),
    ("Hughes, J. (2022). Toward improved inference for Krippendorff's alpha agreement "
     "coefficient. arXiv:2210.13265.", ()),
    ("Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. "
     "Meas. 20, 37-46; Cohen, J. (1968). Weighted kappa. Psychol. Bull. 70, 213-220.",
     ("cohen_kappa", "intra_rater_kappa")),
    (FLEISS_COHEN_EVERITT_1969, ("cohen_kappa", "intra_rater_kappa")),
    ("Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. "
     "Psychol. Bull. 76, 378-382.", ("fleiss_kappa", "percent_agreement")),
    (GWET_2014, ("gwet",)),
    ("Light, R. J. (1971). Measures of response agreement for qualitative data: some "
     "generalizations and alternatives. Psychol. Bull. 76, 365-377.", ()),
    ("Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing "
     "rater reliability. Psychol. Bull. 86, 420-428.", ("icc",)),
    ("McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass "
     "correlation coefficients. Psychol. Methods 1, 30-46.", ("icc",)),
    ("Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation "
     "coefficients I. Biometrika 44, 470-481.", ("spearman_internal",)),
    ("Westfall, P. H., & Young, S. S. (1993). Resampling-Based Multiple Testing: Examples "
     "and Methods for p-Value Adjustment. Wiley, New York.", ("permutation",)),
    ("Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero. "
     "Stat. Appl. Genet. Mol. Biol. 9(1).", ("permutation",)),
    ("Wilson, E. B. (1927). Probable inference, the law of succession, and statistical "
     "inference. J. Am. Stat. Assoc. 22, 209-212.", ("yield_fisher", "trend")),
    ("Newcombe, R. G. (1998). Interval estimation for the difference between independent "
     "proportions: comparison of eleven methods. Stat. Med. 17, 873-890.",
     ("yield_fisher",)),
    ("Cochran, W. G. (1954). Some methods for strengthening the common chi-squared tests. "
     "Biometrics 10(4), 417-451.", ("trend",)),
    ("Armitage, P. (1955). Tests for linear trends in proportions and frequencies. "
     "Biometrics 11, 375-386.", ("trend",)),
    ("Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics Bull. 1, "
     "80-83.", ("wilcoxon_totals",)),
    (readings.LANDIS_KOCH_REF, ("cohen_kappa", "intra_rater_kappa")),
    (readings.KOO_LI_REF, ("icc",)),
)
"""Each reference with the analyses whose figures rest on it: the Methods sheet lists a
reference when one of them is reported in the workbook, or when its text cites it (an
entry may be shown for one analysis and cite the source of another)."""


def summary(ctx: Context, tables: dict[str, pd.DataFrame], key_hash: str,
            key_seeds: dict[str, Any], panel: Panel) -> dict[str, Any]:
    """Headline numbers and verdicts, the decision, arms and panel (JSON-safe)."""
    study = ctx.study
    out: dict[str, Any] = {
        "study_id": study.id, "title": study.title, "protocol": study.protocol,
        "sheetflow_version": __version__, "spec_hash": study.hash, "key_sha256": key_hash,
        "seeds": {"design": study.design.seed, "analysis": ctx.plan.seed,
                  **({"repeats": study.design.repeats.seed} if study.design.repeats else {}),
                  "key": key_seeds},
        "n_boot": ctx.plan.n_boot, "analyses": planned_analyses(study),
        "n_raters": int(ctx.first["rater"].nunique()),
        # the items some answer was given to: rows of blank answers (--allow-partial)
        # counted an item nobody rated
        "n_cases": int(ctx.first.loc[(ctx.first["case"] != "") & answered(
            ctx.first["value"]), "case"].nunique()),
        "targets": dict(ctx.plan.targets), "verdicts": [],
    }
    headlines = all_headlines()
    for name, table in tables.items():
        headline = headlines.get(name)
        if (headline is not None and "reason" in table and len(table.columns) > 2) or \
                (headline is not None and "reason" not in table):
            headline(ctx, table, out)
    plan = protocol_plan(study.protocol)
    decision = plan.decide(ctx, tables, out) if plan and plan.decide else \
        default_decision(out["verdicts"])
    out["decision"] = finish(decision, panel).to_dict()
    arms = plan.arms(ctx, tables) if plan and plan.arms else None
    out["arms"] = arms.to_dict() if arms is not None else None
    out["panel"] = panel.to_dict()
    out["reported"] = readings.reported_figures(ctx, tables)
    out.update(position.summary_part(tables))
    out.update(confidence.summary_part(tables))
    safe = json_safe(out)  # once: at 500 raters the summary holds some 40,000 values
    safe["readings"] = json_safe(position.readings(safe, ctx) +
                                 confidence.readings(safe, study.rubric.names()))
    safe["schema"] = SUMMARY_SCHEMA
    return safe


def reported_analyses(tables: dict[str, pd.DataFrame], summary_doc: dict[str, Any]
                       ) -> set[str]:
    """The analyses behind the figures an analysis reports.

    Parameters
    ----------
    tables : dict of str to DataFrame
        The analysis's tables by name.
    summary_doc : dict
        Its summary (the arms comparison names the test behind its p).

    Returns
    -------
    set of str
        Every table that holds more than a reason it could not be computed (a table
        of only ``reason``, besides blank key columns), and ``wilcoxon_totals`` when
        the arms comparison reports a Wilcoxon p.
    """
    ran = {name for name, table in tables.items() if not only_reasons(table)}
    if str((summary_doc.get("arms") or {}).get("test", "")).startswith("Wilcoxon"):
        ran.add("wilcoxon_totals")
    return ran


def only_reasons(table: pd.DataFrame) -> bool:
    """Whether ``table`` holds no figure: no rows, or nothing but a ``reason`` column and
    columns blank on every row (the key of a table that could not be computed)."""
    if table.empty:
        return True
    if "reason" not in table.columns:
        return False
    keys = [name for name in table.columns if name != "reason"]
    # the first row settles most tables, without reading a large one whole
    return all(_blank(table[name].iloc[:1]) for name in keys) and \
        all(_blank(table[name]) for name in keys)


def _blank(values: pd.Series) -> bool:
    """Missing or empty text on every row (vectorised: a pairwise table is large)."""
    missing = values.isna()
    if values.dtype.kind in "fiub":
        return bool(missing.all())
    return bool((missing | values.astype(object).eq("")).all())


def _closing_methods(study: Study, ran: set[str]) -> list[tuple[str, str]]:
    """Totals (when the rubric has any), the agreement figures' readings (when one is
    reported: ``ran``, the analyses with a figure), the mark of an interval on few units
    (naming the intervals reported) and the panel rule."""
    totals = [
        ("Totals", "Recomputed from the rubric's dimensions (sum or mean); a total is missing "
         "when any of its dimensions is missing. Formulas in workbooks are never read."),
    ] if study.rubric.totals else []
    few = few_units_method(ran)  # the intervals reported, each marked on few units
    return [*totals, *readings.methods(ran),
            *([(FEW_UNITS_TOPIC, few)] if few else []), ("Panel", PANEL_METHOD)]


def _references(entries: list[tuple[str, str]], ran: set[str]) -> list[tuple[str, str]]:
    """The References entry: each source behind a figure reported (``ran``) or cited in
    the text of ``entries``; none when there is no such source."""
    cited = set(cited_entries((text for _, text in entries), [t for t, _ in REFERENCES]))
    listed = [text for text, behind in REFERENCES if ran & set(behind) or text in cited]
    return [("References", "\n".join(listed))] if listed else []


def methods(study: Study, ran: set[str] | None = None) -> list[tuple[str, str]]:
    """The conventions behind every number that was computed, for the Methods sheet.

    Parameters
    ----------
    study : Study
    ran : set of str, optional
        The analyses whose figures are reported (:func:`reported_analyses`); by default
        every analysis the plan runs.

    Returns
    -------
    list of (str, str)
        (topic, text). A topic is listed when an analysis it explains is in ``ran`` (or,
        for a protocol's own topics such as its decision rule, when the study follows
        that protocol); a reference, when a figure it stands behind is or when a topic
        listed cites it.
    """
    ran = set(planned_analyses(study)) if ran is None else set(ran)
    own = protocol_plan(study.protocol)
    out: list[tuple[str, str]] = []
    for plan in all_plans():
        if plan.methods is None:
            continue
        for topic, text in plan.methods(study):
            needs = plan.method_topics.get(topic)
            if (needs is not None and ran & set(needs)) or (needs is None and plan is own):
                out.append((topic, text))
    out += _closing_methods(study, ran)
    return out + _references(out, ran)
