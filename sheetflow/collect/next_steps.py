"""The next step ``status``, ``remind`` and ``send`` point to, as a command to type.

A hint names the command with the study folder as the user gave it
(:func:`sheetflow.hints.command_line`) and never one that has done its job already:
once collect has read every file in ``returns/``, its reply drafts are in
``out/feedback/`` and the step left is sending them, not collecting again.
"""

from __future__ import annotations

from pathlib import Path

from ..hints import command_line, import_judges_line
from .coordinator import FEEDBACK_DIR
from .outputs import COLLECTION_FILE, OUT_DIR, returns_since_collect


def collect_current(study_dir: str | Path) -> bool:
    """Whether the last collect read every file now in ``returns/`` (so its reply
    drafts are the ones to send); False before any collect."""
    root = Path(study_dir)
    return (root / OUT_DIR / COLLECTION_FILE).is_file() and not returns_since_collect(
        root, all_before_first=True)


def replies_step(study_dir: str | Path, current: bool) -> str:
    """What brings the replies asking for fixes to the raters whose files have errors.

    Parameters
    ----------
    study_dir : str or Path
        The study folder as the user named it.
    current : bool
        :func:`collect_current`: collect has written the drafts already.

    Returns
    -------
    str
        E.g. ``"'sheetflow collect my-study' writes a reply draft to each
        (out/feedback/), then 'sheetflow send my-study replies' sends them"``.
    """
    send = command_line("send", study_dir, "replies")
    if current:
        return (f"collect wrote a reply draft to each ({OUT_DIR}/{FEEDBACK_DIR}/); '{send}' "
                "sends them")
    return (f"'{command_line('collect', study_dir)}' writes a reply draft to each "
            f"({OUT_DIR}/{FEEDBACK_DIR}/), then '{send}' sends them")


def unusable_step(study_dir: str | Path, current: bool, *, people: bool = True,
                  judges: bool = False) -> str:
    """What gets a file that came back but cannot be used sent again: collect's reply
    draft asking for it (a rater without an e-mail address gets none: their row says
    so); an automated judge's is imported again instead, as no reply reaches a program.

    Parameters
    ----------
    study_dir : str or Path
        The study folder as the user named it.
    current : bool
        :func:`collect_current`: collect has written the drafts already.
    people : bool
        Whether a person's file is among them (they are asked by reply).
    judges : bool
        Whether an automated judge's file is among them (protocol 004: filled by
        ``import-judges``, never mailed).

    Returns
    -------
    str
    """
    if current:
        ask = (f"collect's reply drafts in {OUT_DIR}/{FEEDBACK_DIR}/ ask for the files "
               f"again; '{command_line('send', study_dir, 'replies')}' sends them")
    else:
        ask = (f"'{command_line('collect', study_dir)}' writes a reply draft asking for "
               "each file again")
    if not judges:
        return ask
    again = (f"import the automated judges' JSONL outputs again with "
             f"{import_judges_line(study_dir, '--force')}, then run "
             f"'{command_line('collect', study_dir)}'")
    return f"judges: {again}; the others: {ask}" if people else again


def sender_step(study_dir: str | Path) -> str:
    """What settles a return whose message came from another rater's address or from
    no rater's: the coordinator finds out who sent it, then marks it read."""
    mark = command_line("collect", study_dir, "--mark-read", "FILE")
    return (f"check who sent it (the Issues sheet names the address), then '{mark}'; if it "
            "is not the rater's own work, remove it from returns/ and ask the rater for theirs")
