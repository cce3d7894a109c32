"""The summary (headline numbers and verdicts, JSON-safe) and the Methods text."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import __version__
from ..spec.study import Study
from . import confidence, position, readings
from .context import Context, json_safe
from .decision import default_decision, finish
from .panel import PANEL_METHOD, Panel
from .registry import all_headlines, all_plans, planned_analyses, protocol_plan

SUMMARY_SCHEMA = "sheetflow-summary/1"

REFERENCES = (
    "Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg "
    "School for Communication, University of Pennsylvania.",
    "Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. "
    "Meas. 20, 37-46; Cohen, J. (1968). Weighted kappa. Psychol. Bull. 70, 213-220.",
    "Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. "
    "Psychol. Bull. 76, 378-382.",
    "Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.",
    "Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing "
    "rater reliability. Psychol. Bull. 86, 420-428.",
    "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass "
    "correlation coefficients. Psychol. Methods 1, 30-46.",
    "Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank correlation "
    "coefficients I. Biometrika 44, 470-481.",
    "Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be zero. "
    "Stat. Appl. Genet. Mol. Biol. 9(1).",
    "Armitage, P. (1955). Tests for linear trends in proportions and frequencies. "
    "Biometrics 11, 375-386.",
    "Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics Bull. 1, "
    "80-83.",
)


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
        "n_cases": int(ctx.first.loc[ctx.first["case"] != "", "case"].nunique()),
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
    safe["readings"] = json_safe(position.readings(safe, ctx) + confidence.readings(safe))
    safe["schema"] = SUMMARY_SCHEMA
    return safe


def _closing_methods(study: Study) -> list[tuple[str, str]]:
    """Totals (when the rubric has any), the panel rule, and the references."""
    totals = [
        ("Totals", "Recomputed from the rubric's dimensions (sum or mean); a total is missing "
         "when any of its dimensions is missing. Formulas in workbooks are never read."),
    ] if study.rubric.totals else []
    shown = bool(set(planned_analyses(study)) & set(readings.ANALYSES))
    reported = [readings.METHODS] if shown else []
    scales = readings.SCALE_REFERENCES if shown else ()
    return [*totals, *reported, ("Panel", PANEL_METHOD),
            ("References", "\n".join(REFERENCES + scales))]


def methods(study: Study) -> list[tuple[str, str]]:
    """The conventions behind every number that was computed, for the Methods sheet.

    A topic is listed when an analysis it explains is in the plan's ``run`` list (or,
    for a protocol's own topics such as its decision rule, when the study follows
    that protocol).
    """
    ran = set(planned_analyses(study))
    own = protocol_plan(study.protocol)
    out: list[tuple[str, str]] = []
    for plan in all_plans():
        if plan.methods is None:
            continue
        for topic, text in plan.methods(study):
            needs = plan.method_topics.get(topic)
            if (needs is not None and ran & set(needs)) or (needs is None and plan is own):
                out.append((topic, text))
    return out + _closing_methods(study)
