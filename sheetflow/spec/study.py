"""Loading and checking a study: the spec, its items and raters, and its frozen hash.

A study is a folder holding ``study.toml`` (rubric, design, analysis plan, file naming,
instructions), an items file (``items.csv`` or ``items.xlsx``) and a raters file
(``raters.csv``). :func:`load_study` reads all three into typed objects and reports
every problem it finds, each as one line naming the file, the key or row, and what is
allowed. :func:`spec_hash` is the sha256 of a canonical JSON of everything that shapes
the rater workbooks and the analysis, so it can be published before anyone scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import SealError, SpecError
from .hashing import SPEC_FORMAT
from .loader import Loader
from .model import (
    ANALYSES,
    DESIGNS,
    ICC_FORMS,
    SPEC_FILE,
    Arm,
    Band,
    Design,
    Item,
    Plan,
    Rater,
    Repeats,
    SecondRater,
    ShownField,
    Study,
    canonical_spec,
    spec_hash,
)
from .tables import read_table, read_text_file

__all__ = [
    "ANALYSES", "DESIGNS", "ICC_FORMS", "SPEC_FILE", "SPEC_FORMAT", "Arm", "Band", "Design",
    "Item", "Plan", "Rater", "Repeats", "SecondRater", "ShownField", "SpecProblems", "Study",
    "canonical_spec", "check_study", "load_study", "read_table", "read_text_file", "spec_hash",
]


class SpecProblems(SpecError):
    """Several problems in one study; ``problems`` holds each as a :class:`SpecError`."""

    def __init__(self, problems: list[SpecError]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def load_study(path: str | Path, sealed_inputs: Mapping[str, str] | None = None) -> Study:
    """Load and check the study in folder ``path`` (or a ``study.toml`` path).

    Parameters
    ----------
    path : str or Path
        The study folder, or its ``study.toml``.
    sealed_inputs : mapping of str to str, optional
        The sha256 generate sealed of each input file (the plan lock's ``inputs``):
        a file whose bytes differ is refused as changed after generate, before (and
        instead of) checking what it holds.

    Returns
    -------
    Study

    Raises
    ------
    SpecError
        A :class:`SpecProblems` listing every problem found, each one line naming the
        file, the key or row, and what is allowed.
    SealError
        A file of ``sealed_inputs`` changed after generate.
    """
    path = Path(path)
    spec_path = path if path.is_file() else path / SPEC_FILE
    if not spec_path.exists():
        raise SpecError(
            f"no {SPEC_FILE} here; make a study with 'sheetflow init DIR'", file=str(path)
        )
    loader = Loader(spec_path, sealed_inputs)
    study = loader.load()
    if loader.changed_inputs:  # an edit after generate: what it holds is beside the point
        raise SealError(loader.changed_inputs[0])
    if loader.problems:
        raise SpecProblems(loader.problems)
    assert study is not None
    return study


def require_generatable(study: Study) -> None:
    """Raise the problems that stop ``study``'s spec being frozen (``check``,
    ``generate``): :attr:`Study.generate_problems`.

    Raises
    ------
    SpecProblems
        When there are any.
    """
    if study.generate_problems:
        raise SpecProblems(list(study.generate_problems))


def check_study(path: str | Path) -> list[SpecError]:
    """Every problem in the study at ``path``, those that only stop ``generate``
    included (empty when it loads cleanly)."""
    try:
        require_generatable(load_study(path))
    except SpecProblems as exc:
        return exc.problems
    except SpecError as exc:
        return [exc]
    return []


def judge_rater_ids(study: Study) -> frozenset[str]:
    """The raters whose workbooks ``import-judges`` fills from JSONL outputs.

    Parameters
    ----------
    study : Study

    Returns
    -------
    frozenset of str
        The rater ids ``[analysis.params.jsonl] judges`` maps a judge to (none when the
        study has no such table); their packs are imported, not sent.
    """
    raw = study.plan.params.get("jsonl")
    judges = raw.get("judges") if isinstance(raw, dict) else None
    if not isinstance(judges, dict):
        return frozenset()
    return frozenset(r.id for r in study.raters) & {str(v) for v in judges.values()}
