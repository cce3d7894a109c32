"""Messages saved as files, for ``sheetflow fetch``: ``.eml`` files and ``.mbox``
folders, each message read once into a :class:`Raw` (one over the size limit is
measured, its header lines and attachment sizes kept, its body not)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .mailbox import PartSizes, unquote_from
from .returns import display_name

MAX_MESSAGE_BYTES = 64 * 2**20
"""The largest message read (a rating workbook is about 1 MB; a message holding one,
base64-encoded, a third more)."""


@dataclass(frozen=True)
class Raw:
    """One message as read from its source, before parsing."""

    where: str
    """How the report names it (``INBOX uid 7``, ``box.mbox #2``, ``reply.eml``)."""
    data: bytes
    received: dt.datetime | None = None
    size: int = 0
    """Its size when it was too large to read (``data`` is then empty)."""
    parts: tuple[tuple[str, int], ...] = ()
    """Then its attachments, (name, size), as far as they could be measured."""
    head: bytes = b""
    """Then its header lines (who sent it, the subject)."""
    problem: str = ""
    """Why the server could not give it ("" when it could): ``data`` is then empty."""


def _message_file(path: Path, where: str) -> None:
    """Refuse a path that is not a file to read messages from."""
    if path.is_dir():
        raise UsageError(f"{where}: a folder; give the saved message files (.eml) or the "
                         "mbox file itself")
    if not path.is_file():
        raise UsageError(f"{where}: no such file")


def eml_messages(paths: list[Path], limit: int) -> Iterator[Raw]:
    """Each saved message file, read once (a file over ``limit`` bytes is measured, not
    read)."""
    for path in paths:
        where = display_name(str(path))
        _message_file(path, where)
        size = path.stat().st_size
        if size > limit:
            scan = PartSizes()
            with path.open("rb") as fh:
                for line in fh:
                    scan.feed(line)
            yield Raw(where, b"", size=size, parts=tuple(scan.done()), head=bytes(scan.head))
            continue
        with path.open("rb") as fh:
            yield Raw(where, fh.read(limit + 1))


def mbox_messages(path: Path, limit: int) -> Iterator[Raw]:
    """The messages of an mbox folder, read line by line (a message over ``limit`` bytes
    is measured, not kept)."""
    where = display_name(str(path))
    _message_file(path, where)
    number, chunk, size, started, blank = 0, bytearray(), 0, False, True
    scan = PartSizes()
    with path.open("rb") as fh:
        for line in fh:
            if line.startswith(b"From ") and blank:  # the separator line, not kept
                if started:
                    number += 1
                    yield _mbox_raw(where, number, chunk, (size, limit), scan)
                chunk, size, started, blank, scan = bytearray(), 0, True, False, PartSizes()
                continue
            started = True
            size += len(line)
            scan.feed(line)
            if size <= limit:
                chunk += line
            blank = line in (b"\n", b"\r\n")
    if started and size:
        yield _mbox_raw(where, number + 1, chunk, (size, limit), scan)
    elif number == 0:  # said "not read", as an empty .eml is: fetch printed only zeros
        yield Raw(where, b"")


def _mbox_raw(where: str, number: int, chunk: bytearray, measure: tuple[int, int],
              scan: PartSizes) -> Raw:
    """One message of an mbox folder: its bytes, or only its measure when its size is
    over the limit (``measure``: size, limit)."""
    size, limit = measure
    if size > limit:
        return Raw(f"{where} #{number}", b"", size=size, parts=tuple(scan.done()),
                   head=bytes(scan.head))
    return Raw(f"{where} #{number}", unquote_from(bytes(chunk)))
