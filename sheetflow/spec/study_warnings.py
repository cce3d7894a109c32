"""Every warning ``check`` and ``generate`` print about a study's files, items and
rubric, gathered in one place so the two commands say the same."""

from __future__ import annotations

from typing import Any

from .blanks import blank_responses
from .blinding import arm_in_ids
from .mail import deadline_unsaid
from .model import SPEC_FILE
from .rubric import optional_in_totals
from .wording import id_mentions


def study_warnings(study: Any) -> list[str]:
    """The warnings ``check`` and ``generate`` print about the files, the items and the
    rubric: what the loader noted (:attr:`~sheetflow.spec.model.Study.file_warnings`),
    ids that carry their arm (:func:`sheetflow.spec.blinding.arm_in_ids`), empty
    responses (:func:`sheetflow.spec.blanks.blank_responses`), totals over optional
    dimensions (:func:`sheetflow.spec.rubric.optional_in_totals`), a ``[mail]``
    deadline the invitations do not state (:func:`sheetflow.spec.mail.deadline_unsaid`)
    and item ids the texts shown to raters mention
    (:func:`sheetflow.spec.wording.id_mentions`)."""
    return list(study.file_warnings) + arm_in_ids(study) + blank_responses(study) + \
        optional_in_totals(study.rubric, f"{study.root / SPEC_FILE}: ") + \
        deadline_unsaid(study) + id_mentions(study)
