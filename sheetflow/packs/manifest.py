"""The blinded manifest ``packs/manifest.json``, read one pack at a time.

In full, the manifest of a 500-case paired study with 50 raters is about 100 MB
(every answer cell of every pack, with its validation): ``json.loads`` of it takes
seconds and most of a gigabyte. Stored compact it is some 2 MB, but its full form is
still that size in memory, and the collector needs each pack's full entry only once,
in the sandbox child that checks that pack's workbook. So :func:`open_manifest`
indexes the file instead: the top-level fields, and for each pack its identity and
the byte span of its entry. :meth:`Manifest.pack` then decodes one entry.

The index relies on the form ``generate`` writes (:func:`sheetflow.packs.seal.dump_json`,
compact with sorted keys: each pack entry is an object whose first key is
``"batches"`` and whose ``"cards"`` list is followed by ``"file"``). A manifest in any
other form (pretty-printed, edited by hand) is read whole once and rewritten to a
private temporary file in that form, so everything downstream is the same.

Since ``manifest_format`` 2 the cards are stored compact, their shared parts once in
the top-level ``shared`` tables (:mod:`sheetflow.packs.manifest_form`); every reader here
gets the full form all the same: :meth:`Manifest.pack` and :func:`read_manifest`
inflate, and a format-1 manifest (every card whole) reads unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MissingStepError, SealError, SheetflowError
from ..hints import command_line
from ..workbook import layout as L
from .manifest_form import Inflater

if TYPE_CHECKING:
    from ..spec.study import Study

_PACKS = b'"packs":['
_ENTRY = b'{"batches":'
_NEXT_ENTRY = b"," + _ENTRY
_BEFORE_FILE = b'],"file":'
_IDENTITY = b'"identity":{'  # once per pack entry, and nowhere else
_BLOCK = 1 << 22
_TAIL = 1 << 16
_RESTORE = ("the manifest was changed after generate: put back the one generate wrote "
            "('sheetflow verify' checks it against the seal)")


@dataclass(frozen=True)
class PackHead:
    """What the collector needs to know about a pack without its cards.

    Attributes
    ----------
    pack_id, rater_id, file, role : str
    sitting : int
    identity : dict
        The identity the pack's workbook carries.
    offset, length : int
        The byte span of the pack's full entry in :attr:`Manifest.path`.
    sha256 : str
        The sha256 of the workbook's bytes as generate wrote them ("" in a manifest
        written before sheetflow recorded it).
    """

    pack_id: str
    rater_id: str
    file: str
    role: str
    sitting: int
    identity: dict[str, str]
    offset: int
    length: int
    sha256: str = ""


@dataclass
class Manifest:
    """The manifest's top-level fields and an index of its packs (picklable, small).

    Attributes
    ----------
    path : str
        The file the spans point into (the manifest itself, or a private copy).
    top : dict
        Every top-level field except ``packs``.
    heads : list of PackHead
        One per pack, in manifest order.
    temporary : bool
        Whether :attr:`path` is a private copy, removed by :meth:`close`.
    tail : int
        Where the top-level fields after ``packs`` start in :attr:`path`: the
        ``shared`` tables are read from there when a compact entry first needs them
        (they are not pickled with the rest).
    inflater : Inflater or None
        The ``shared`` tables once read (None until then, and in a pickled copy).
    sha256 : str
        The sha256 of the bytes indexed, when they were read privately ("" otherwise).
    """

    path: str
    top: dict[str, Any]
    heads: list[PackHead] = field(default_factory=list)
    temporary: bool = False
    tail: int = 0
    inflater: Inflater | None = field(default=None, repr=False, compare=False)
    sha256: str = ""

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "inflater": None}

    @property
    def by_id(self) -> dict[str, PackHead]:
        """Pack id -> head."""
        return {h.pack_id: h for h in self.heads}

    def pack(self, head: PackHead) -> dict[str, Any]:
        """The full manifest entry of one pack.

        Raises
        ------
        SheetflowError
            The span no longer holds that pack (the manifest changed meanwhile).
        """
        with open(self.path, "rb") as fh:
            fh.seek(head.offset)
            data = fh.read(head.length)
        try:
            entry = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            entry = None
        if not isinstance(entry, dict) or _pack_id(entry) != head.pack_id:
            raise SheetflowError(_changed_while_read(self.path))
        if any(isinstance(c, list) for c in entry.get("cards") or ()):
            try:
                entry = self._inflater().entry(entry)
            except ValueError as exc:
                raise SheetflowError(f"{self.path}: pack {head.pack_id}: {exc}; {_RESTORE}"
                                     ) from None
        return entry

    def _inflater(self) -> Inflater:
        """The shared tables, read once from :attr:`tail`."""
        if self.inflater is None:
            with open(self.path, "rb") as fh:
                fh.seek(self.tail)
                rest = fh.read()
            try:
                fields = json.loads(b"{" + rest[2:]) if rest.startswith(b"],") else {}
            except (UnicodeDecodeError, json.JSONDecodeError):
                fields = None
            if not isinstance(fields, dict):
                raise SheetflowError(_changed_while_read(self.path))
            self.inflater = Inflater(fields.get("shared"))
        return self.inflater

    def packs(self) -> Iterator[dict[str, Any]]:
        """Every pack's full entry, one at a time, in manifest order."""
        for head in self.heads:
            yield self.pack(head)

    def close(self) -> None:
        """Remove the private copy, if one was made."""
        if self.temporary:
            Path(self.path).unlink(missing_ok=True)
            self.temporary = False


def _changed_while_read(path: str) -> str:
    """The manifest at ``path`` changed between being indexed and a pack being read
    from it (generate ran meanwhile, or it was edited). Several commands read it: the one
    to run again is the one the user just ran, not always collect."""
    return (f"{path}: the manifest changed while it was read; once nothing is writing "
            "it, run the same command again")


def study_folder(where: str | Path | Study) -> Path:
    """The study folder ``where`` names: a path as given, or a loaded study's root
    (a study is recognised by its ``root``, so this module need not import it)."""
    if isinstance(where, str | os.PathLike):
        return Path(where)
    return Path(where.root)


def open_manifest(root: str | Path | Study, sealed: str | None = None, *,
                  private: bool = False) -> Manifest:
    """Index ``root/packs/manifest.json`` (see the module notes).

    Parameters
    ----------
    root : str, Path or Study
        The study folder, or a loaded study (its folder is read).
    sealed : str, optional
        The sha256 the manifest was sealed with: another is refused.
    private : bool
        Read the file once, hash it (:attr:`Manifest.sha256`) and index those bytes
        from a private copy (always so when ``sealed`` is given): a manifest edited
        while the returns are read cannot map a card to another item.

    Returns
    -------
    Manifest
        Call :meth:`Manifest.close` when done (it may own a temporary file).

    Raises
    ------
    MissingStepError
        There is no manifest (``generate`` has not run).
    SealError
        ``sealed`` is given and the manifest's sha256 differs.
    SheetflowError
        The manifest is not valid JSON or lacks pack identities.
    """
    root = study_folder(root)
    path = root / L.PACKS_DIR / L.MANIFEST_FILE
    if not path.is_file():
        raise MissingStepError(f"{path}: no manifest", f"sheetflow generate {root}")
    if sealed is None and not private:
        return _open(path)
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if sealed is not None and digest != sealed:
        raise SealError(f"{path} has sha256 {digest} but the seal "
                        f"records {sealed}: the manifest was changed after generate; restore "
                        "it from the generate run")
    fd, copy = tempfile.mkstemp(prefix="sheetflow-manifest-", suffix=".json")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    try:
        manifest = _open(Path(copy))
    except BaseException:
        Path(copy).unlink(missing_ok=True)
        raise
    if manifest.path == copy:
        manifest.temporary = True  # indexed in place: the copy goes with it
    else:
        Path(copy).unlink(missing_ok=True)  # rewritten into a copy of its own
    manifest.sha256 = digest
    return manifest


def _open(path: Path) -> Manifest:
    """Index the manifest at ``path``: in place when compact, else a full private copy."""
    try:
        found = _index(path)
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        found = None
    return found if found is not None else _rewrite(path)


def changed_packs(attached: Iterable[tuple[str, str]], heads: Iterable[PackHead],
                  ) -> list[str]:
    """``packs/<file>`` of each attached pack that is not the workbook generate wrote.

    The one check of attached bytes against the manifest, for ``send`` and for every
    draft that attaches a pack: the caller hashes the bytes it put in the message,
    never the file read again.

    Parameters
    ----------
    attached : iterable of (file name, sha256)
        Each attachment's name and the sha256 of its bytes as attached.
    heads : iterable of PackHead
        The manifest's packs. One without a sha256 (a manifest written before
        sheetflow recorded them) has nothing to compare with, and neither has a file
        that is no pack of the manifest: both pass.

    Returns
    -------
    list of str
        Each changed pack once, in the order attached; empty when none changed.
    """
    recorded = {h.file: h.sha256 for h in heads if h.sha256}
    return list(dict.fromkeys(f"{L.PACKS_DIR}/{name}" for name, digest in attached
                              if recorded.get(name, digest) != digest))


def changed_packs_problem(changed: list[str], study_dir: str | Path, *, not_done: str,
                          then: str) -> str:
    """The one line naming the packs :func:`changed_packs` found and what to do.

    Parameters
    ----------
    changed : list of str
        ``packs/<file>`` of each changed pack.
    study_dir : str or Path
        The study folder as the user gave it (the command that restores the packs
        names it).
    not_done : str
        What was not done because of them (``"nothing was sent"``).
    then : str
        What to do once each workbook is restored (``"send again"``).
    """
    return (f"{', '.join(changed)}: the bytes attached are not the ones "
            f"{L.PACKS_DIR}/{L.MANIFEST_FILE} records the sha256 of: the workbook was "
            f"changed or replaced after generate, so {not_done}; restore the workbook "
            f"generate wrote ('{command_line('generate', study_dir)}' on the unchanged spec "
            f"writes the same bytes again), then {then}")


# --------------------------------------------------------------------------- the index


def _index(path: Path) -> Manifest | None:
    """Index the compact form without decoding the packs; None for any other form."""
    with path.open("rb") as fh:
        head = fh.read(_TAIL)
        at = head.find(_PACKS)
        if at < 0 or not head.startswith(_ENTRY, at + len(_PACKS)):
            return None
        starts, identities = _entry_starts(fh, at + len(_PACKS))
        if identities != len(starts):  # an entry in another form hides among the rest
            return None
        fh.seek(starts[-1])
        last, used, rest = _decode_first(fh.read())
        if not rest.startswith(b"]"):
            return None
        top = json.loads(head[:at] + b'"packs":[]' + rest[1:])
        ends = [s - 1 for s in starts[1:]] + [starts[-1] + used]
        heads = [_head(_tail_fields(fh, s, e), s, e - s)
                 for s, e in zip(starts[:-1], ends[:-1], strict=True)]
        heads.append(_head(last, starts[-1], used))
    if not isinstance(top, dict) or any(h is None for h in heads):
        return None
    top.pop("packs", None)
    return Manifest(str(path), top, heads, tail=starts[-1] + used,
                    inflater=Inflater(top.pop("shared", None)))


def _entry_starts(fh: Any, first: int) -> tuple[list[int], int]:
    """Byte offsets of every pack entry (the first one at ``first``), and how many
    pack identities the file holds from there on."""
    starts = [first]
    identities = 0
    fh.seek(first)
    carry, base = b"", first
    while block := fh.read(_BLOCK):
        data = carry + block
        at = data.find(_NEXT_ENTRY)
        while at >= 0:
            starts.append(base - len(carry) + at + 1)
            at = data.find(_NEXT_ENTRY, at + 1)
        identities += data.count(_IDENTITY) - carry.count(_IDENTITY)
        carry = data[-(max(len(_NEXT_ENTRY), len(_IDENTITY)) - 1):]
        base += len(block)
    return starts, identities


def _decode_first(data: bytes) -> tuple[Any, int, bytes]:
    """The JSON value at the start of ``data``, its length in bytes, and what follows."""
    text = data.decode("utf-8")
    value, end = json.JSONDecoder().raw_decode(text)
    used = len(text[:end].encode("utf-8"))
    return value, used, data[used:]


def _tail_fields(fh: Any, start: int, end: int) -> dict[str, Any] | None:
    """The fields after ``cards`` of the entry at [start, end), decoded on their own."""
    for size in (_TAIL, end - start):
        size = min(size, end - start)
        fh.seek(end - size)
        data = fh.read(size)
        at = data.rfind(_BEFORE_FILE)
        if at >= 0:
            return json.loads(b"{" + data[at + 2:])
    return None


def _head(fields: Any, offset: int, length: int) -> PackHead | None:
    if not isinstance(fields, dict):
        return None
    pack_id = _pack_id(fields)
    if not pack_id or "rater_id" not in fields or "file" not in fields:
        return None
    return PackHead(pack_id=pack_id, rater_id=str(fields["rater_id"]),
                    file=str(fields["file"]), role=str(fields.get("role", "")),
                    sitting=int(fields.get("sitting", 1)),
                    identity=dict(fields["identity"]), offset=offset, length=length,
                    sha256=str(fields.get("sha256") or ""))


def _pack_id(entry: dict[str, Any]) -> str:
    identity = entry.get("identity")
    return str(identity.get("pack_id", "")) if isinstance(identity, dict) else ""


# --------------------------------------------------------------------------- other forms


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The whole manifest in its full form (every pack entry inflated), in memory.

    For small studies and checks; readers of one pack use :func:`open_manifest`.

    Parameters
    ----------
    path : str or Path
        A ``manifest.json`` in any form or format.

    Returns
    -------
    dict
        The document :mod:`sheetflow.workbook.layout` describes (no ``shared`` key).

    Raises
    ------
    MissingStepError
        There is no such file (``generate`` has not run).
    SheetflowError
        The file is not a JSON object, or a compact card does not match its tables.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingStepError(f"{path}: no manifest", f"sheetflow generate {path.parent.parent}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SheetflowError(f"{path}: the manifest is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SheetflowError(f"{path}: the manifest is not a JSON object")
    inflater = Inflater(data.pop("shared", None))
    try:
        data["packs"] = [inflater.entry(p) if isinstance(p, dict) else p
                         for p in data.get("packs") or []]
    except ValueError as exc:
        raise SheetflowError(f"{path}: {exc}; {_RESTORE}") from None
    return data


def _rewrite(path: Path) -> Manifest:
    """Read a manifest in another form whole and index a full private copy of it."""
    data = read_manifest(path)
    packs = data.pop("packs", None) or []
    fd, copy = tempfile.mkstemp(prefix="sheetflow-manifest-", suffix=".json")
    heads: list[PackHead] = []
    with os.fdopen(fd, "wb") as fh:
        for entry in packs:
            blob = json.dumps(entry, sort_keys=True, separators=(",", ":"),
                              ensure_ascii=False).encode("utf-8")
            head = _head(entry, fh.tell(), len(blob))
            if head is None:
                Path(copy).unlink(missing_ok=True)
                raise SheetflowError(f"{path}: a pack in the manifest has no identity")
            heads.append(head)
            fh.write(blob)
    return Manifest(copy, data, heads, temporary=True)
