"""The bundled study templates (one per protocol) and copying them into a folder."""

from __future__ import annotations

import difflib
import shutil
from importlib import resources
from pathlib import Path

from ..errors import UsageError
from ..staging import holds_only_leftovers, make_folder_whole

TEMPLATE_DESCRIPTIONS = {
    "paired-rubric": "paired A/B responses scored on a 5-dimension count/checklist rubric "
    "with confidence and a direction per case (protocol 000)",
    "keep-known": "owner-blind KEEP/KNOWN binary marks, batches of 20, a second sitting "
    "of 30 repeats (protocol 001)",
    "anchored-plan": "frozen anchored 0-25/0-20/0-15 component scores, material errors, "
    "a second-rater subset by sha256 rank (protocol 002)",
    "answer-review": "categorical review of answers from two assistants, scattered, with "
    "N/A and gold disputes (protocol 003)",
    "judge-likert": "six Likert 1-5 dimensions by a trio of judges, rationale and verdict "
    "(protocol 004)",
}
DEFAULT_TEMPLATE = "paired-rubric"


def data_dir(kind: str) -> Path:
    """The folder holding bundled ``templates`` or ``samples``.

    In a wheel they live in ``sheetflow/_data``; in a source checkout, beside the
    package.
    """
    packaged = resources.files("sheetflow") / "_data" / kind
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / kind


def list_templates() -> dict[str, str]:
    """Template name -> one-line description, for every bundled template."""
    root = data_dir("templates")
    names = sorted(p.name for p in root.iterdir() if (p / "study.toml").exists())
    return {name: TEMPLATE_DESCRIPTIONS.get(name, "") for name in names}


def init_study(directory: str | Path, template: str = DEFAULT_TEMPLATE) -> Path:
    """Copy the bundled ``template`` into ``directory`` (which must not hold a study).

    Parameters
    ----------
    directory : str or Path
        Where to create the study; created if missing, may exist if empty.
    template : str
        A name from :func:`list_templates`.

    Returns
    -------
    Path
        The study folder.

    Raises
    ------
    UsageError
        Unknown template, or the folder is not empty.
    """
    names = list_templates()
    if template not in names:
        close = difflib.get_close_matches(template, list(names), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"unknown template {template!r}; {hint}choose one of: "
                         f"{', '.join(names)}")
    target = Path(directory)
    # hidden staging folders of an init killed while it copied do not count: they go
    if target.exists() and (not target.is_dir() or not holds_only_leftovers(target)):
        raise UsageError(f"{target}: folder is not empty; choose a new or empty folder")
    source = data_dir("templates") / template
    # copied beside it and renamed into place: a killed init leaves no half-made study
    make_folder_whole(target, lambda folder: shutil.copytree(source, folder))
    return target
