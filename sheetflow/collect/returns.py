"""The entries of ``returns/``: a verdict for each, and names that are safe to show.

Every entry of a returns folder is either collected or reported, never skipped in
silence (hidden files and Office lock files ``~$...`` excepted, as before):

* a regular file is collected;
* a symbolic link is followed only when it points inside the study folder (to a
  regular file); one pointing outside is refused (``symlink-outside-study``);
* a folder, FIFO, socket, device or broken link is reported (``not-a-file``) and
  never opened (opening a FIFO would wait forever);
* a file that cannot be read (permissions, I/O error) gets ``file-unreadable`` and
  the batch goes on (see :func:`file_digest`).

File names are shown through :func:`display_name`: bytes that are not UTF-8 appear as
``\\xNN`` and control characters (line breaks, escape sequences, direction marks) as
escapes, so a name can never forge a line or colour on the terminal, in a workbook or
in JSON.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

SKIP_PREFIXES = (".", "~$")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


@dataclass(frozen=True)
class Entry:
    """One entry to collect or report.

    Attributes
    ----------
    path : Path
        Where to read it (a link inside the study is resolved to its target).
    name : str
        The entry's own name, as :func:`display_name` shows it.
    code : str
        ``""`` for a file to read; otherwise the issue code that reports it.
    detail : str
        What it is (for the issue message).
    """

    path: Path
    name: str
    code: str = ""
    detail: str = ""


def escape_controls(text: str) -> str:
    """``text`` with control and invisible layout characters written as escapes."""
    return _CONTROL.sub(lambda m: _escape(m[0]), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_name(name: str) -> str:
    """A file name as text that prints safely: undecodable bytes as ``\\xNN``, controls escaped."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return escape_controls(text)


def find_entries(root: Path, paths: list[str | Path] | None) -> list[Entry]:
    """The entries to collect or report, sorted by name (then path) for a stable order.

    Parameters
    ----------
    root : Path
        The study folder (links may point anywhere inside it).
    paths : list, optional
        Files or folders given by the user (default ``root/returns``); folders are
        read non-recursively.

    Raises
    ------
    UsageError
        A given path does not exist.
    """
    targets = [Path(p) for p in paths] if paths else [root / "returns"]
    if not paths:
        check_returns_folder(root)
    study = root.resolve()
    found: list[Entry] = []
    for target in targets:
        if target.is_dir():
            found += [_verdict(p, study) for p in target.iterdir() if not _skipped(p)]
        elif target.exists() or target.is_symlink():
            found.append(_given(target))
        else:
            raise UsageError(f"{display_name(str(target))}: no such file or folder")
    unique = {(e.name, str(e.path)): e for e in found}
    return [unique[k] for k in sorted(unique)]


def check_returns_folder(root: Path) -> None:
    """Refuse a ``returns`` that is missing or is no folder. Generate makes the folder,
    so a missing one was moved or deleted, not "nothing returned yet": remind drafted a
    reminder to every rater, those who had returned too. A file there was collected as
    one returned file ('not a workbook', a reply drafted about it).

    Raises
    ------
    UsageError
        ``root/returns`` is missing, or is a file (or another non-folder).
    """
    folder = root / "returns"
    if not (folder.exists() or folder.is_symlink()):
        raise UsageError(f"{display_name(str(folder))}: no such folder; generate made it "
                         "for the returned workbooks: make a folder named returns there "
                         "again and put them in it (an empty one if none has come back)")
    if not folder.is_dir():
        raise UsageError(f"{display_name(str(folder))}: is a file, not the returns folder; "
                         "move it aside and put the returned workbooks in a folder named "
                         "returns")


OWNER_FILE_BYTES = 4096
"""At most the size of an Office owner file (``~$name.xlsx``, some 165 bytes): one
larger is a workbook under that name, and is collected like any."""


def _skipped(path: Path) -> bool:
    """A hidden file, or the owner file Excel keeps beside a workbook it has open."""
    if path.name.startswith("~$"):
        try:
            return path.lstat().st_size <= OWNER_FILE_BYTES
        except OSError:
            return True
    return path.name.startswith(SKIP_PREFIXES)


def _given(path: Path) -> Entry:
    """A path named by the user: read wherever it is, if it is a file."""
    name = display_name(path.name)
    if path.is_file():
        return Entry(path, name)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return Entry(path, name, "not-a-file", "link to a missing file")
    except OSError as exc:  # ELOOP: a link that leads back to itself; or unreachable
        return Entry(path, name, "not-a-file", _LOOP) if exc.errno == errno.ELOOP else \
            Entry(path, name, "file-unreadable", escape_controls(exc.strerror or str(exc)))
    return Entry(path, name, "not-a-file", _kind(mode))


def _verdict(path: Path, study: Path) -> Entry:
    name = display_name(path.name)
    try:
        mode = path.lstat().st_mode
    except OSError as exc:  # removed or unreachable since the folder was listed
        return Entry(path, name, "file-unreadable", escape_controls(exc.strerror or str(exc)))
    if stat.S_ISREG(mode):
        return Entry(path, name)
    if not stat.S_ISLNK(mode):
        return Entry(path, name, "not-a-file", _kind(mode))
    try:
        target = path.resolve()
    except (RuntimeError, OSError):  # a link that leads back to itself (ELOOP)
        return Entry(path, name, "not-a-file", _LOOP)
    if not target.is_relative_to(study):
        return Entry(path, name, "symlink-outside-study", display_name(str(target)))
    if not target.exists():
        return Entry(path, name, "not-a-file", "link to a missing file")
    if not target.is_file():
        return Entry(path, name, "not-a-file", "link to a " + _kind(target.stat().st_mode))
    return Entry(target, name)


_LOOP = "symbolic link that leads back to itself"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder (files inside folders are not collected)"
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


class NotAFile(OSError):
    """The entry turned out not to be a regular file when opened."""


def file_digest(path: Path) -> str:
    """sha256 (hex) of a regular file, opened without waiting on a FIFO.

    Raises
    ------
    OSError
        The file cannot be read (:class:`NotAFile` when it is no regular file).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFile(f"{display_name(path.name)} is not a regular file")
        digest = hashlib.sha256()
        for block in iter(lambda: fh.read(2**20), b""):
            digest.update(block)
        return digest.hexdigest()


def where_read(path: Path, root: Path) -> str:
    """``path`` relative to the study folder when inside it, else as given; a name that
    is not text (bytes no encoding decodes) as ``hex:`` and its bytes, so it can be
    found again (:func:`~sheetflow.collect.outputs.verify_returns`)."""
    try:
        text = path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "hex:" + os.fsencode(text).hex()
    return text
