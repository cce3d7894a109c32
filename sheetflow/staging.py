"""Files written whole or not at all: staged beside their final paths, then replaced.

Every stage that writes a set of files uses :class:`OutputSet`: ``generate`` (packs,
drafts, manifest, seal), ``collect`` and ``analyze`` (``out/``), ``plan``. A run that
fails or is killed before the replace leaves the previous files untouched; a killed run
can leave hidden ``.*.partial`` files, which :func:`remove_partials` (and the next run)
removes.

The replace itself is recoverable. Before the first file moves, the set writes a
record of every move (``.sheetflow-commit.json`` in its home folder); each file it
replaces or supersedes is moved aside (``.<name>.<pid>-<token>.previous`` beside it) rather
than overwritten or deleted, and the previous files are deleted only once the whole new
set is in place and the record says so. A run stopped in between (Ctrl-C, a crash, a
kill, a power cut) leaves the record: :func:`recover_interrupted` then puts every
previous file back, removes the new ones, and says which run was interrupted and when.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import WriteError, known_name

try:  # the lock that tells a live commit from an interrupted one (not on Windows)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PARTIAL = ".partial"  # the end of every staged file's name
PREVIOUS = ".previous"  # the end of a replaced file's name until the new set is whole
JOURNAL = ".sheetflow-commit.json"  # the record of a commit under way, in its home
JOURNAL_FORMAT = 1
UNNAMED = "a sheetflow run"  # the label of a set whose caller gave none
STUDY_SET_FOLDERS = ("sealed", "packs")  # searched too: a set written into them alone


class OutputSet:
    """Outputs of one run, staged beside their final paths and replaced together.

    Use as a context manager: :meth:`stage` gives the temporary path to write each
    output to; leaving the block without an exception moves every staged file into
    place (in the order staged, so stage the record that vouches for the others last);
    an exception removes them and leaves the old outputs as they were. The files of an
    earlier set this one replaces (:meth:`supersede`) that it does not write again are
    removed as the new set goes in, so the new set is never found beside leftovers of
    the old. The replace is journaled (see the module notes): stopped half-way, in this
    process or by a kill, it is rolled back to the previous set.

    Parameters
    ----------
    home : str or Path, optional
        The folder holding the commit record, which :func:`recover_interrupted` is
        given to find it: a folder every output lies in. By default the deepest folder
        that holds them all.
    label : str
        What the run is called in the note of an interrupted commit (``"generate"``).
    what : str
        What the set holds, for the same note (``"packs and seal"``).
    """

    def __init__(self, home: str | Path | None = None, *, label: str = UNNAMED,
                 what: str = "files") -> None:
        self._home = Path(home) if home is not None else None
        self._label = label
        self._what = what
        self._staged: list[tuple[Path, Path]] = []
        self._made: list[Path] = []  # folders stage() created, outermost first
        self._superseded: list[Path] = []
        self.removed: list[Path] = []
        """The superseded files removed when the set was committed."""
        self.recovered: str | None = None
        """The note of an earlier interrupted commit this one rolled back first."""

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
        temp = final.with_name(f".{final.name}.{_run_tag()}{PARTIAL}")
        self._staged.append((temp, final))
        return temp

    def write(self, path: str | Path, data: bytes) -> None:
        """Stage ``data`` as ``path``'s new content (:func:`write_file`)."""
        write_file(self.stage(path), data)

    def staged(self) -> list[tuple[Path, Path]]:
        """(staged path, final path) of every output staged so far, in order."""
        return list(self._staged)

    def supersede(self, paths: Iterable[str | Path]) -> None:
        """Files of the earlier set: those not staged here are removed on commit.

        They are moved aside with the files the set replaces, and deleted only once
        the whole new set is in place: a run stopped before gets them back.
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
            with naming(temp):
                _fsync(temp)
        finals = {os.path.abspath(final) for _, final in self._staged}
        others = [p for p in dict.fromkeys(self._superseded)
                  if os.path.abspath(p) not in finals]
        if not others and not self._staged:  # nothing staged and nothing to remove
            return
        home = self._home or _common_folder([*others, *(f for _, f in self._staged)])
        # an earlier set's record comes first: what it kept aside is put back before
        # this set looks at what is there
        self.recovered = recover_interrupted(home)
        gone = [p for p in others if p.is_file()]
        moves = [*(_Move(final, None) for final in gone),
                 *(_Move(final, temp) for temp, final in self._staged)]
        if not moves:
            return
        with _Journal(home, self._label, self._what, moves) as journal:
            journal.apply()
            journal.mark_done()
        self.removed = gone

    def _discard(self) -> None:
        for temp, _ in self._staged:
            temp.unlink(missing_ok=True)
        for folder in reversed(self._made):  # innermost first
            with contextlib.suppress(OSError):  # not empty: whatever else is there stays
                folder.rmdir()


@dataclass
class _Move:
    """One file of a commit: ``temp`` moved to ``final`` (``None``: ``final`` only goes),
    the file at ``final`` before kept at ``previous`` until the commit is done."""

    final: Path
    temp: Path | None
    previous: Path | None = None


class _Journal:
    """The record of one commit: written before the first move, marked done after the
    last, removed once the previous files are deleted."""

    def __init__(self, home: Path, label: str, what: str, moves: list[_Move]) -> None:
        self.home = home
        self.path = home / JOURNAL
        self.moves = moves
        self.record: dict[str, Any] = {"journal_format": JOURNAL_FORMAT, "label": label,
                                       "what": what, "pid": os.getpid(), "done": False}
        self.lock: int | None = None

    def _entry(self, move: _Move) -> dict[str, str | None]:
        return {"final": self._relative(move.final),
                "temp": self._relative(move.temp) if move.temp else None,
                "previous": self._relative(move.previous) if move.previous else None}

    def _relative(self, path: Path) -> str:
        # relative, so that a study folder moved after a crash is still recovered
        return Path(os.path.relpath(path, self.home)).as_posix()

    def __enter__(self) -> _Journal:
        self.lock = _lock(self.home)
        # what is there is looked at only under the lock: a run that waited for it
        # sees the files the run before it put in place
        tag = _run_tag()
        for move in self.moves:
            if os.path.lexists(move.final):
                move.previous = move.final.with_name(f".{move.final.name}.{tag}{PREVIOUS}")
        self.record.update(started=_now(), moves=[self._entry(m) for m in self.moves])
        try:
            _write_record(self.path, self.record)
        except BaseException:
            _unlock(self.lock)  # nothing has moved: there is nothing to roll back
            raise
        return self

    def apply(self) -> None:
        """Move each previous file aside and each new one in, in order."""
        for move in self.moves:
            if move.previous is not None:
                os.replace(move.final, move.previous)
            if move.temp is not None:
                os.replace(move.temp, move.final)

    def mark_done(self) -> None:
        """Record that the whole new set is in place: the commit point."""
        _write_record(self.path, {**self.record, "done": True})

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        try:
            if kind is not None:  # stopped in this process: put the previous set back
                _roll_back(self.home, self.record["moves"])
                self.path.unlink(missing_ok=True)
            else:
                _finish(self.home, self.record["moves"])
        finally:
            _unlock(self.lock)


def recover_interrupted(home: str | Path) -> str | None:
    """Roll back a commit into ``home`` that was stopped half-way, or finish one done.

    Parameters
    ----------
    home : str or Path
        The folder an :class:`OutputSet` keeps its commit record in.

    Returns
    -------
    str or None
        The note to show when a commit was rolled back ("generate was interrupted at
        ... while putting its packs and seal in place: the previous ones were restored
        ..."), else None.

    Raises
    ------
    WriteError
        Another process is committing into ``home`` right now, or the record cannot
        be read (naming it and what to do).
    """
    home = Path(home)
    path = home / JOURNAL
    temps = list(home.glob(f"{JOURNAL}.*{PARTIAL}"))
    if not path.is_file() and not temps:
        return None
    lock = _lock(home, wait=False)
    try:
        # under the lock only: a live commit may be writing its record right now
        for temp in home.glob(f"{JOURNAL}.*{PARTIAL}"):  # a record killed while written
            temp.unlink(missing_ok=True)
        if not path.is_file():  # finished while the lock was taken
            return None
        record = _read_record(path)
        if record.get("done"):  # the new set is whole: only the previous files were left
            _finish(home, record["moves"])
            return None
        _roll_back(home, record["moves"])
        path.unlink()
        label = str(record.get("label") or UNNAMED)
        again = "it" if label == UNNAMED else label
        return (f"{label} was interrupted at {record.get('started', 'an unknown time')} "
                f"while putting its {record.get('what', 'files')} in place: the previous "
                f"ones were restored and nothing of that run is kept; run {again} again")
    finally:
        _unlock(lock)


def interrupted_commit(home: str | Path) -> str | None:
    """Describe, without touching anything, a commit into ``home`` stopped half-way.

    For a check that must not write (:func:`recover_interrupted` puts the previous
    files back): the set there is then no set at all, and what differs in it is no edit.
    """
    path = Path(home) / JOURNAL
    if not path.is_file():
        return None
    record = _read_record(path)
    if record.get("done"):  # the new set is whole; only previous files are left over
        return None
    label = record.get("label") or UNNAMED
    return (f"{label} was interrupted at {record.get('started', 'an unknown time')} "
            f"while putting its {record.get('what', 'files')} in place ({path} records "
            "it): the next sheetflow command on the study restores the previous ones; "
            "run one (sheetflow status), then check again")


def _roll_back(home: Path, moves: list[dict[str, Any]]) -> None:
    """Put each previous file back and remove each new one, last move first."""
    for move in reversed(moves):
        final = home / move["final"]
        temp, previous = (home / move[k] if move[k] else None for k in ("temp", "previous"))
        if previous is not None and os.path.lexists(previous):
            os.replace(previous, final)
        elif previous is None and temp is not None and not os.path.lexists(temp) \
                and os.path.lexists(final):
            final.unlink()  # moved in by the interrupted commit, where nothing was before
        if temp is not None:
            temp.unlink(missing_ok=True)
    _fsync_folders(home, moves)


def _finish(home: Path, moves: list[dict[str, Any]]) -> None:
    """Delete the previous files of a commit done, then its record."""
    for move in moves:
        if move["previous"]:
            (home / move["previous"]).unlink(missing_ok=True)
    (home / JOURNAL).unlink(missing_ok=True)


def _write_record(path: Path, record: dict[str, Any]) -> None:
    """Write the commit record whole (staged, flushed, replaced) before anything moves."""
    temp = path.with_name(f"{path.name}.{_run_tag()}{PARTIAL}")
    try:
        write_file(temp, json.dumps(record, indent=1).encode("utf-8"))
        _fsync(temp)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a folder cannot be opened to flush everywhere
        _fsync(path.parent)


def _read_record(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or not isinstance(record.get("moves"), list):
            raise ValueError("no moves")
        return record
    except (OSError, ValueError) as exc:
        raise WriteError(f"{path}: the record of an interrupted run, unreadable ({exc}); "
                         "the previous files it kept end in .previous beside their "
                         "places: put them back by hand, then remove this file") from None


def _lock(home: Path, *, wait: bool = True) -> int | None:
    """Lock ``home`` for one commit; a held lock means a live commit, not a stopped one."""
    if fcntl is None:  # pragma: no cover - Windows: no way to tell, so none is told
        return None
    fd = os.open(home, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        raise WriteError(f"{home}: another sheetflow run is putting its files in place "
                         "here right now; run again once it has finished") from None
    except OSError:  # a file system without flock (some network mounts): as on Windows
        os.close(fd)
        return None
    return fd


def _run_tag() -> str:
    """A name part no other run's files share: the process id alone repeats across
    runs (each run is process 1 in a container), and a stale record then named this
    run's own staged files."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing releases the lock


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _common_folder(paths: list[Path]) -> Path:
    """The deepest folder holding every one of ``paths``."""
    return Path(os.path.commonpath([os.path.abspath(p.parent) for p in paths]))


def _fsync_folders(home: Path, moves: list[dict[str, Any]]) -> None:
    """Flush the folders whose entries a rollback changed (best effort)."""
    for folder in {(home / m["final"]).parent for m in moves}:
        with contextlib.suppress(OSError):
            _fsync(folder)


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Name ``path`` in an operating-system error raised while the block writes it.

    A write or flush that fails (a full disk, a quota) raises an ``OSError`` that names
    no file, which would reach the user as "no space left on device" without saying
    where; a staged file is named by the name it was going to have.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, known_name(os.fspath(path))) from exc


def write_file(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path``; an operating-system error names the file."""
    with naming(path):
        Path(path).write_bytes(data)


def write_alone(path: str | Path, data: bytes, *, replace: bool = True) -> None:
    """Write one file whole or not at all, outside an :class:`OutputSet`.

    The bytes are staged beside ``path`` (a hidden ``.partial`` file), flushed, then
    moved into place: replacing what is there (``replace``), or only where nothing is
    (``replace=False``: a file that appeared at ``path`` meanwhile is kept and the
    move fails). Whatever stops it (a full disk, a folder that may not be written)
    removes the staged file, so nothing half written is left.

    Parameters
    ----------
    path : str or Path
        The file to write.
    data : bytes
        Its whole content.
    replace : bool
        Whether a file already at ``path`` is replaced.

    Raises
    ------
    OSError
        The file could not be written; it names ``path`` (never the staged file), so
        the command's error line says which file and what to do.
    """
    path = Path(path)
    temp = path.with_name(f".{path.name}.{_run_tag()}{PARTIAL}")
    try:
        try:
            temp.write_bytes(data)
            _fsync(temp)
        except OSError as exc:
            if exc.errno is None:
                raise
            # the staged name would send the user looking for a file that is not there
            raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc
        if replace:
            os.replace(temp, path)
        else:
            os.link(temp, path)  # fails rather than replace a file that appeared
    except BaseException:
        # the error that stopped the write is the one to tell, not a failed cleanup
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        raise
    if not replace:
        temp.unlink()  # the link at ``path`` holds the bytes now


def make_folder_whole(path: str | Path, fill: Callable[[Path], None]) -> None:
    """Make the folder ``path`` whole or not at all, outside an :class:`OutputSet`.

    ``fill`` writes the folder's content into a hidden staging folder
    (``.NAME.TAG.partial``), which then takes its place: a run stopped part-way leaves
    no half-made folder where a study is looked for, and whatever stops ``fill``
    removes the staging folder. A missing ``path`` is the staging folder renamed (one
    step); an empty folder already at ``path`` (perhaps the one the user is in, which
    a rename would swap for another) keeps its place: the staging folder is made
    inside it and its entries are renamed into it, a rename each.

    Parameters
    ----------
    path : str or Path
        The folder to make: missing, or an empty folder. Its parents are created if
        missing.
    fill : callable
        ``fill(folder)`` writes the content into ``folder``, which it creates.
    """
    path = Path(path)
    for leftover in folders_left_by_killed_runs(path):
        _remove(leftover)  # an earlier run of this same make, killed while it filled
    there = path.is_dir()
    if there:
        temp = path / f".{_run_tag()}{PARTIAL}"
    else:
        path.absolute().parent.mkdir(parents=True, exist_ok=True)
        temp = path.absolute().with_name(f".{path.absolute().name}.{_run_tag()}{PARTIAL}")
    moved: list[Path] = []
    try:
        fill(temp)
        if not there:
            os.replace(temp, path)
            return
        for entry in sorted(temp.iterdir()):
            os.replace(entry, path / entry.name)
            moved.append(path / entry.name)
        temp.rmdir()
    except BaseException:
        # the error that stopped the copy is the one to tell, not a failed cleanup
        for done in [*moved, temp]:
            _remove(done)
        raise


def folders_left_by_killed_runs(path: str | Path) -> list[Path]:
    """The staging folders :func:`make_folder_whole` left for ``path`` when killed.

    A run killed while it filled (no ``finally`` runs under SIGKILL) leaves its hidden
    ``.NAME.TAG.partial`` beside a missing ``path``, or ``.TAG.partial`` inside an empty
    one, where it would make the folder look not empty to the next run. Only
    sheetflow's own names are matched.
    """
    path = Path(path)
    if path.is_dir():
        return [entry for entry in path.iterdir() if entry.is_dir() and not entry.is_symlink()
                and _TAGGED.fullmatch(entry.name)]
    parent = path.absolute().parent
    if not parent.is_dir():
        return []
    # this folder's own name and a run tag, no more: ".study.*.partial" also took the
    # staging folder of "study.v2", perhaps still being filled by another init
    own = f".{path.absolute().name}."
    return [entry for entry in parent.glob(f"{glob.escape(own)}*{PARTIAL}")
            if entry.is_dir() and not entry.is_symlink()
            and _TAGGED.fullmatch(entry.name[len(own) - 1:])]


_TAGGED = re.compile(r"\.\d+-[0-9a-f]{8}" + re.escape(PARTIAL))
"""A staging folder's name after its folder's name: ``.`` :func:`_run_tag` ``.partial``."""


def holds_only_leftovers(folder: str | Path) -> bool:
    """Whether ``folder`` is empty but for staging folders killed runs left in it."""
    left = set(folders_left_by_killed_runs(folder))
    return all(entry in left for entry in Path(folder).iterdir())


def _remove(path: Path) -> None:
    """Remove a file or folder this run made (best effort: it is cleanup)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


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
    """Flush a staged file (or a folder's entries) to disk."""
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


def remove_own_partials(path: str | Path) -> None:
    """Remove the staged copies of ``path`` killed runs left beside it (``.NAME.TAG.partial``).

    For a file written alone into a folder other runs also stage into: only this
    file's own staged names are matched, never another output's.
    """
    path = Path(path)
    own = f".{path.name}."
    if path.parent.is_dir():
        for left in path.parent.glob(f"{glob.escape(own)}*{PARTIAL}"):
            if left.is_file() and _TAGGED.fullmatch(left.name[len(own) - 1:]):
                left.unlink(missing_ok=True)


def recover_under(root: str | Path, folders: Iterable[str]) -> list[str]:
    """Recover every commit stopped half-way in ``root`` or below its ``folders``.

    Parameters
    ----------
    root : str or Path
        A study folder (``generate`` keeps its commit record there).
    folders : iterable of str
        Its output folders, searched whole (``out/``, where ``collect`` and
        ``analyze`` write; ``returns/``, where ``import-judges`` does).

    Returns
    -------
    list of str
        The note of each commit rolled back (see :func:`recover_interrupted`).
    """
    root = Path(root)
    homes = [root] + [record.parent for name in (*folders, *STUDY_SET_FOLDERS)
                      if (root / name).is_dir()
                      for record in sorted((root / name).rglob(JOURNAL))]
    return [note for home in homes if (note := recover_interrupted(home))]
