"""What one analysis module contributes: a :class:`ProtocolPlan`, and its helper types.

The registry (:mod:`.registry`) collects the plans; the plans import only this module,
so the registry can import them without a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - types only
    import pandas as pd

    from ..spec.study import Study
    from .context import Context
    from .decision import Arms, Decision

AnalysisFn = Callable[["Context"], "pd.DataFrame"]
HeadlineFn = Callable[["Context", "pd.DataFrame", dict], None]
MethodsFn = Callable[["Study"], list[tuple[str, str]]]
DecideFn = Callable[["Context", dict, dict], "Decision"]
ArmsFn = Callable[["Context", dict], "Arms | None"]
FeedbackFn = Callable[["Context"], dict[str, dict[str, "pd.DataFrame"]]]
DataMethodsFn = Callable[["Context"], list[tuple[str, str]]]
FeedbackNotesFn = Callable[["Context"], list[str]]
ResultMethodsFn = Callable[["Context", dict], dict[str, str]]


@dataclass(frozen=True)
class ProtocolPlan:
    """The analyses one module contributes.

    Attributes
    ----------
    protocol : str
        The protocol number (``"000"``), or ``""`` for the shared analyses.
    template : str
        The bundled template the protocol's study starts from (``"paired-rubric"``).
    analyses : mapping of str to callable
        Plan name (as in ``[analysis] run``) -> function of a context giving a table.
    headlines : mapping of str to callable
        Plan name -> function copying the table's key figures into the summary.
    methods : callable
        Study -> (topic, text) pairs for the Methods sheet.
    method_topics : mapping of str to tuple of str
        Methods topic -> the analyses it explains; the topic is shown only when one of
        them ran. A topic not listed is shown for studies of this plan's protocol.
    decide : callable, optional
        (context, tables, summary so far) -> the protocol's :class:`~.decision.Decision`
        on the raters included (the panel is applied afterwards).
    arms : callable, optional
        (context, tables) -> :class:`~.decision.Arms`, for designs with arms.
    feedback : callable, optional
        context -> rater id -> sheet name -> table: what each rater may be sent about
        their own scores (written as one small workbook per rater).
    feedback_notes : callable, optional
        context -> lines for the panel's notes (the Summary sheet, the command's
        output, ``summary.json``) about what the feedback leaves out.
    data_methods : callable, optional
        Context -> Methods entries that need the data (counts a setting leaves), shown
        for studies of this plan's protocol.
    result_methods : callable, optional
        (context, summary) -> Methods topic -> a sentence added to that topic's entry
        from the figures computed (the Monte Carlo error of a permutation p).
    runs_when : callable, optional
        Study -> bool: when true, every analysis of this plan runs whatever the
        study's ``run`` list says (checks that always apply to such a design, such as
        position bias in paired designs).
    """

    protocol: str
    template: str
    analyses: Mapping[str, AnalysisFn] = field(default_factory=dict)
    headlines: Mapping[str, HeadlineFn] = field(default_factory=dict)
    methods: MethodsFn | None = None
    method_topics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    decide: DecideFn | None = None
    arms: ArmsFn | None = None
    feedback: FeedbackFn | None = None
    feedback_notes: FeedbackNotesFn | None = None
    data_methods: DataMethodsFn | None = None
    result_methods: ResultMethodsFn | None = None
    runs_when: Callable[[Study], bool] | None = None


def fixed_methods(topic: str, text: str) -> MethodsFn:
    """The Methods function of a plan whose one entry is the same for every study.

    Parameters
    ----------
    topic, text : str
        The Methods-sheet topic and its text.

    Returns
    -------
    callable
        Study -> ``[(topic, text)]``.
    """
    return lambda study: [(topic, text)]
