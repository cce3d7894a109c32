"""The reply drafts in ``out/feedback/`` held against what the last collect recorded.

``collect`` writes its reply drafts in the same set as ``out/collection.json``, which
records each draft's sha256 (:func:`.drafts.reply_keys`). A collect stopped while that
set was moving into place can still leave the drafts of one run beside the record of
another: a draft for a rater whose current file needs no reply, or none for a rater
whose file does. :func:`read_reply_drafts` reads each draft once and names every one
that is not the draft collect recorded, and every recorded draft that is missing, so
that ``send replies`` refuses and ``status`` says so instead of taking what is on disk.

A record written before sheetflow recorded the drafts holds no ``replies``: the drafts
are then taken as they are, as before. Nothing here prints.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hints import command_line
from ..workbook import layout as L
from .coordinator import FEEDBACK_DIR, draft_name
from .outputs import COLLECTION_FILE

OUT_DIR = L.OUT_DIR
SITTINGS = (1, 2)


@dataclass
class ReplyDrafts:
    """The reply drafts as collect recorded them, and every one that is not."""

    drafts: list[tuple[str, int, bytes]] = field(default_factory=list)
    """(rater, sitting, the draft's bytes) of each draft that is the one collect
    recorded (or, with no record of the drafts, each draft there is)."""
    stale: dict[str, str] = field(default_factory=dict)
    """Draft file name -> the line naming it, for each draft on disk that is not the
    one collect made last."""
    missing: dict[str, str] = field(default_factory=dict)
    """Draft file name -> the line naming it, for each draft collect made last that is
    gone."""

    @property
    def problems(self) -> list[str]:
        """The lines of :attr:`stale`, then of :attr:`missing`."""
        return [*self.stale.values(), *self.missing.values()]


def recorded_replies(root: str | Path) -> dict[str, Any] | None:
    """Draft file name -> what the last collect recorded of it (``sha256`` among
    others); None when ``out/collection.json`` is missing, unreadable or from before
    sheetflow recorded the drafts (nothing to compare the drafts with)."""
    try:
        record = json.loads((Path(root) / OUT_DIR / COLLECTION_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    replies = record.get("replies") if isinstance(record, dict) else None
    return replies if isinstance(replies, dict) else None


def read_reply_drafts(root: str | Path, raters: list[str],
                      study_dir: str | Path | None = None) -> ReplyDrafts:
    """Each reply draft of ``raters`` in ``out/feedback/``, read once and compared by
    sha256 with the one the last collect recorded.

    Parameters
    ----------
    root : str or Path
        The study folder.
    raters : list of str
        The rater ids whose drafts are wanted (both sittings).
    study_dir : str or Path, optional
        The study folder as the user gave it, for the command the lines name (default
        ``root``).

    Returns
    -------
    ReplyDrafts
    """
    root = Path(root)
    recorded = recorded_replies(root)
    folder = root / OUT_DIR / FEEDBACK_DIR
    again = f"run '{command_line('collect', study_dir or root)}' again"
    found = ReplyDrafts()
    for rater in raters:
        for sitting in SITTINGS:
            name = draft_name(rater, sitting)
            shown = f"{OUT_DIR}/{FEEDBACK_DIR}/{name}"
            draft = _read(folder / name)
            entry = recorded.get(name) if recorded is not None else None
            if draft is not None and (recorded is None or _same(entry, draft)):
                found.drafts.append((rater, sitting, draft))
            elif draft is not None:
                found.stale[name] = (f"{shown}: {rater}'s reply draft is not the one "
                                     f"collect made last: {again}")
            elif entry is not None:
                found.missing[name] = (f"{shown}: {rater}'s reply draft, which collect "
                                       f"made last, is missing: {again}, which writes it")
    return found


def _read(path: Path) -> bytes | None:
    """The bytes of the file at ``path``; None when there is no such file."""
    try:
        return path.read_bytes() if path.is_file() else None
    except FileNotFoundError:
        return None


def _same(entry: Any, draft: bytes) -> bool:
    """Whether ``draft`` is the one ``entry`` (collect's record of it) describes."""
    return isinstance(entry, dict) and entry.get("sha256") == hashlib.sha256(draft).hexdigest()
