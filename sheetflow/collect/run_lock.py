"""The study lock: ``out/.lock``, held by each command that reads or writes ``out/``.

One run at a time per study: a second waits up to :data:`~.outputs.LOCK_WAIT` seconds,
then is refused with one line naming the lock and the commands that take it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from .outputs import LOCK_FILE, LOCK_WAIT, OUT_DIR, OutputError

LOCKING_COMMANDS = ("collect", "analyze", "plan", "lock", "send", "import-judges")
"""The commands that hold ``out/.lock`` while they run (each reads or writes ``out/``,
or, the data lock, draws from what collect wrote there)."""
_LOCKERS = ", ".join(LOCKING_COMMANDS[:-1]) + " or " + LOCKING_COMMANDS[-1]


@contextlib.contextmanager
def study_lock(root: str | Path, command: str, wait: float = LOCK_WAIT, *,
               tidy: bool = False) -> Iterator[None]:
    """Hold the study's ``out/.lock`` while ``command`` runs.

    A run that fails (a refused option or study, a missing step, an error) or is
    interrupted removes the lock file, and ``out/`` when it is left empty, if it made
    them: a refused command leaves the study folder as it found it. With ``tidy`` a run
    that succeeds does so too: a command that writes little or nothing into ``out/``
    (``send``, ``import-judges``) leaves no folder of its own there.

    Parameters
    ----------
    root : str or Path
        The study folder.
    command : str
        What is asking (one of :data:`LOCKING_COMMANDS`), for the message.
    wait : float
        Seconds to wait for another run to finish before refusing.
    tidy : bool
        Also on success, remove the lock file and the empty ``out/`` this run made.

    Raises
    ------
    OutputError
        Another run still held the lock after ``wait`` seconds.
    """
    out = Path(root) / OUT_DIR
    made_out = _made_folder(out)
    fd, made_lock = _locked(out / LOCK_FILE, command, wait)
    try:
        yield
    except BaseException:
        _unmake(out, made_out=made_out, made_lock=made_lock)  # the lock still held
        raise
    else:
        if tidy:  # a run waiting on this file takes the next one made (_locked)
            _unmake(out, made_out=made_out, made_lock=made_lock)
    finally:
        os.close(fd)  # closing releases the lock


def _made_folder(folder: Path) -> bool:
    """Make ``folder``; whether it was missing (a file in its place is an error)."""
    try:
        folder.mkdir()
    except FileExistsError:
        if not folder.is_dir():
            raise
        return False
    return True


def _locked(path: Path, command: str, wait: float) -> tuple[int, bool]:
    """A descriptor of ``path`` holding its lock, and whether this run made the file.

    A run that fails removes the lock file it made (:func:`_unmake`), so a run that was
    waiting on it may get the lock of a removed file while a third run makes a new one:
    each run checks that the file it holds is the one at ``path``, else tries again.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            fd, made = _open_lock(path)
        except FileNotFoundError:  # out/ removed by a run that failed: make it again
            if time.monotonic() >= deadline:
                raise
            path.parent.mkdir(exist_ok=True)
            continue
        try:
            _acquire(fd, command, wait, deadline)
        except BaseException:
            os.close(fd)
            raise
        if _is_file_at(fd, path):
            return fd, made
        os.close(fd)


def _open_lock(path: Path) -> tuple[int, bool]:
    """``path`` opened (the file stays empty), and whether it was made here."""
    try:
        return os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:
        return os.open(path, os.O_RDONLY), False


def _is_file_at(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is still the one named ``path``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _unmake(out: Path, *, made_out: bool, made_lock: bool) -> None:
    """Remove the lock file and ``out/`` a failed run made (``out/`` only when empty)."""
    if made_lock:
        with contextlib.suppress(FileNotFoundError):
            (out / LOCK_FILE).unlink()
    if made_out:
        with contextlib.suppress(OSError):  # not empty: the run wrote, or another locked
            out.rmdir()


def _acquire(fd: int, command: str, wait: float, deadline: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OutputError(
                    f"{OUT_DIR}/{LOCK_FILE}: another sheetflow {_LOCKERS} is using "
                    f"this study; {command} waited {wait:g} s. Run it again when the other "
                    "has finished") from None
            time.sleep(0.1)
