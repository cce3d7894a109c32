"""Files written whole or not at all: staged beside their final paths, then replaced.

Every stage that writes a set of files uses :class:`OutputSet`: ``generate`` (packs,
manifest, seal), ``collect`` and ``analyze`` (``out/``), ``plan``. A run that fails or
is killed before the replace leaves the previous files untouched; a killed run can
leave hidden ``.*.partial`` files, which :func:`remove_partials` (and the next run)
removes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import WriteError

PARTIAL = ".partial"  # the end of every staged file's name


class OutputSet:
    """Outputs of one run, staged beside their final paths and replaced together.

    Use as a context manager: :meth:`stage` gives the temporary path to write each
    output to; leaving the block without an exception moves every staged file into
    place (in the order staged, so stage the record that vouches for the others last);
    an exception removes them and leaves the old outputs as they were. The files of an
    earlier set this one replaces (:meth:`supersede`) that it does not write again are
    removed on the way in, so the new set is never found beside leftovers of the old.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []
        self._made: list[Path] = []  # folders stage() created, outermost first
        self._superseded: list[Path] = []
        self.removed: list[Path] = []
        """The superseded files removed when the set was committed."""

    def stage(self, path: str | Path) -> Path:
        """The temporary path to write ``path``'s new content to (same folder)."""
        final = Path(path)
        self._made += _missing_folders(final.parent)
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise WriteError(f"{_file_in_the_way(final.parent)}: a file where sheetflow "
                             "keeps a folder of outputs; move or rename it, then run "
                             "again") from None
        temp = final.with_name(f".{final.name}.{os.getpid()}{PARTIAL}")
        self._staged.append((temp, final))
        return temp

    def staged(self) -> list[tuple[Path, Path]]:
        """(staged path, final path) of every output staged so far, in order."""
        return list(self._staged)

    def supersede(self, paths: Iterable[str | Path]) -> None:
        """Files of the earlier set: those not staged here are removed on commit.

        They go after every staged file is written and before any is moved in, so a
        run stopped in between leaves the earlier set's record naming files that are
        gone (which its checks report) rather than a stale file beside new ones.
        """
        self._superseded += [Path(p) for p in paths]

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is not None:
            self._discard()
            return
        try:
            self._commit()
        except BaseException:
            self._discard()  # the staged files not moved in yet
            raise

    def _commit(self) -> None:
        for temp, final in self._staged:
            # checked before anything moves: a folder in a file's place would stop the
            # set half replaced
            if final.is_dir() and not final.is_symlink():
                raise WriteError(f"{final}: a folder where sheetflow writes a file; move "
                                 "or rename it, then run again")
            _fsync(temp)
        finals = {os.path.abspath(final) for _, final in self._staged}
        for path in self._superseded:
            if os.path.abspath(path) not in finals and path.is_file():
                path.unlink()
                self.removed.append(path)
        for temp, final in self._staged:
            os.replace(temp, final)

    def _discard(self) -> None:
        for temp, _ in self._staged:
            temp.unlink(missing_ok=True)
        for folder in reversed(self._made):  # innermost first
            with contextlib.suppress(OSError):  # not empty: whatever else is there stays
                folder.rmdir()


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, outermost first."""
    missing = []
    for path in (folder, *folder.parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    return missing[::-1]


def _file_in_the_way(folder: Path) -> Path:
    """The nearest of ``folder`` and its parents that exists and is no folder."""
    for path in (folder, *folder.parents):
        if path.exists() and not path.is_dir():
            return path
    return folder


def _fsync(path: Path) -> None:
    """Flush a staged file to disk before it replaces the old one."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_partials(folder: Path) -> None:
    """Remove staged files a killed run left behind (only sheetflow's own names)."""
    if folder.is_dir():
        for path in folder.glob(f".*{PARTIAL}"):
            path.unlink(missing_ok=True)
