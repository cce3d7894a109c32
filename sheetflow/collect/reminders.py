"""``sheetflow remind``: reminder drafts for every pack not yet returned.

Above :mod:`.run` (``collect``), which it runs (as ``sheetflow status`` does) to learn who has
returned; the drafts themselves are composed in :mod:`.coordinator`.
"""

from __future__ import annotations

from pathlib import Path

from ..spec.study import Rater, load_study
from .coordinator import REMINDERS_DIR, Drafts, RosterRow, todo_missing, write_reminders
from .run import OUT_DIR, status


def remind(study_dir: str | Path) -> tuple[list[RosterRow], Drafts]:
    """Write reminder drafts for every pack of the study not yet returned.

    Reads the returns (as ``sheetflow status`` does, writing nothing else) to know who
    has returned; drafts go to ``out/reminders/``.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``generate``.

    Returns
    -------
    (list of RosterRow, Drafts)
        The packs not returned, and the drafts written.
    """
    root = Path(study_dir)
    study = load_study(root)
    raters = {r.id: r for r in study.raters}
    rows = []
    for pack in status(root):
        if not pack.returned:
            rater = raters.get(pack.rater, Rater(pack.rater))
            rows.append(RosterRow("missing", rater.id, rater.name, rater.email, pack.sitting,
                                  pack.file, "", None, 0, 0, False, todo_missing(rater)))
    return rows, write_reminders(study, root, rows, root / OUT_DIR / REMINDERS_DIR)
