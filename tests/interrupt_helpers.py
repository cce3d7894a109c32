"""Stops (Ctrl-C) planted at one move of a commit, for the tests of interrupted runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def stop_at_replace(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``os.replace`` raise KeyboardInterrupt (as Ctrl-C would) when it is to move
    a file into place under the name ``name``; every other move is made.

    Parameters
    ----------
    monkeypatch : pytest.MonkeyPatch
        The patcher (or one of its contexts) whose undo puts ``os.replace`` back.
    name : str
        The file name, without its folder, whose move in is stopped.
    """
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == name:
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)
    monkeypatch.setattr(os, "replace", replace)
