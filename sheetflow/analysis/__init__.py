"""Unseal, unblind and run a study's analysis plan.

:func:`analyze` is the library verb behind ``sheetflow analyze``: it verifies the seal
(the key's sha256 against ``sealed/key.sha256``, the spec's hash against the one frozen
in ``sealed/plan.lock.json``), reads the collector's tidy ``out/ratings.csv``, maps each
neutral label back to its arm with the key, recomputes points and totals from the raw
answers, and runs every analysis named in the plan's ``run`` list. Each analysis gives a
tidy :class:`pandas.DataFrame`; undefined results are NaN with a ``reason``, never an
exception. :func:`run_plan` does the same from an in-memory unblinded table, so the
analyses can be checked on constructed data.

Where things are:

- :mod:`.unblind` -- the seal, the key, the collector's ratings, totals;
- :mod:`.agreement` -- alpha, kappas, AC1/AC2, ICC, percent agreement (every protocol);
- ``p000_paired_rubric`` ... ``p004_judge_likert`` -- one module per protocol plan,
  each defining ``PLAN`` (see :mod:`.registry`);
- :mod:`.selfchecks` -- per-rater sanity checks;
- :mod:`.summary` -- the summary and Methods text; :mod:`.plan` -- running it all.
"""

from __future__ import annotations

from .context import DATA_COLUMNS, TIED, Analysis
from .keep_known_files import results_tables, verdicts
from .p004_judge_likert import pilot_verdict
from .plan import analyze, run_plan
from .second_rater import second_rater_expected
from .selfchecks import self_checks
from .summary import methods
from .unblind import add_totals, file_sha256, key_sides, unblind, verify_seal

__all__ = [
    "DATA_COLUMNS",
    "TIED",
    "Analysis",
    "add_totals",
    "analyze",
    "file_sha256",
    "key_sides",
    "methods",
    "pilot_verdict",
    "results_tables",
    "run_plan",
    "second_rater_expected",
    "self_checks",
    "unblind",
    "verdicts",
    "verify_seal",
]
