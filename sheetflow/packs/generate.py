"""``generate_packs``: one locked workbook per rater, the blinded manifest, and the seal.

Output, inside the study folder (or ``out``):

* ``packs/<pattern>.xlsx`` per rater (and ``<stem>-sitting2.xlsx`` when the design has
  repeats), laid out as :mod:`sheetflow.workbook.layout` describes;
* ``packs/manifest.json``, the blinded manifest ``collect`` reads (no arm, no seed),
  with the sha256 of each workbook's bytes (``verify`` and ``send`` check them);
* ``packs/mailing-list.csv`` and, with ``emails=True``, ``packs/eml/<stem>.eml`` drafts
  (sitting-2 drafts apart in ``packs/eml/sitting-2/``, to send 24 h after sitting 1);
* ``sealed/key.json``, ``sealed/key.sha256``, ``sealed/plan.lock.json`` (see
  :mod:`sheetflow.packs.seal`).

The same spec and seeds give byte-identical packs, manifest and key: assignment comes
from :mod:`sheetflow.packs.assign`, the workbook creation time is the study's date, and
nothing else carries a timestamp.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import SheetflowError, UsageError
from ..hints import command_line
from ..spec.study import Rater, Study, judge_rater_ids, load_study, require_generatable
from ..spec.study_warnings import study_warnings
from ..staging import OutputSet, naming, recover_interrupted, remove_partials
from ..workbook import layout as L
from .assign import Assignment, assign, response_text
from .instructions import with_batch_size, with_case_count
from .leaks import refuse_leaks, refuse_mail_leaks
from .mail import SITTING2_NOTE, invitation_text, mailing_list_csv
from .manifest import open_manifest
from .manifest_form import Compactor
from .seal import (
    KEY_FORMAT,
    LOCK_RECORD_FILE,
    PLAN_LOCK_FILE,
    SEALED_DIR,
    dump_json,
    input_hashes,
    sha256_file,
    write_lock_record,
    write_seal,
)
from .second_rater import RecordedSelection, read_selection, selection_path, selects_at_lock
from .secret import (
    RNG_RECIPE,
    SECRET_BYTES,
    SECRET_FILE,
    demo_secret_line,
    is_demo_secret,
    keyed,
    new_secret,
    read_secret,
    spec_mark,
)
from .secret import row_key as secret_row_key
from .set_files import EML_DIR, StagedDrafts, previous_files, stage_drafts, stale_files
from .writer import CardSpec, PackSpec, TextCache, write_pack

MAILING_LIST = "mailing-list.csv"


@dataclass(frozen=True)
class PackInfo:
    """One written workbook."""

    rater_id: str
    sitting: int
    path: Path
    cards: int
    sha256: str = ""
    """The sha256 of the workbook's bytes as written (recorded in its manifest entry)."""


@dataclass
class GenerateResult:
    """What :func:`generate_packs` wrote, with the hashes to publish."""

    study_id: str
    spec_hash: str
    key_sha256: str
    packs: list[PackInfo]
    manifest_path: Path
    key_path: Path
    key_hash_path: Path
    plan_lock_path: Path
    mailing_list_path: Path
    returns_dir: Path
    eml_paths: list[Path] = field(default_factory=list)
    """The ``.eml`` drafts written (``emails``): one per pack of a rater with an e-mail
    address, none for a judge's pack (:attr:`judges`), which is never sent."""
    warnings: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    """Raters whose packs ``sheetflow import-judges`` fills (automated judges, mapped in
    ``[analysis.params.jsonl]``): nothing to send them."""
    at_lock: list[str] = field(default_factory=list)
    """Second raters who got no pack yet: their subset is drawn at data lock, and
    ``sheetflow lock`` writes their packs once the primary returns are collected."""
    removed: list[tuple[str, Path]] = field(default_factory=list)
    """(rater id, path) of each pack and draft of the previous generate that the new
    set no longer vouches for (a rater removed, a draft attaching a changed pack),
    removed as the new set went in."""

    def hash_lines(self) -> list[str]:
        """Both hashes, sha256sum-style: the spec's, then the key's."""
        return [self.spec_line(), self.key_line()]

    def key_line(self) -> str:
        """The line the coordinator publishes before scoring: the key's hash commits to
        the spec through the key, which records the secret's sha256, so no guess about
        the arms can be tested against it."""
        return f"{self.key_sha256}  {SEALED_DIR}/key.json"

    def spec_line(self) -> str:
        """The spec's plain hash: a rater who knows the rest of the spec could test
        guesses about the arms against it, so it is published only once the returns
        are in (docs/integrity.md)."""
        return f"{self.spec_hash}  spec ({self.study_id})"


def generate_packs(study_dir: str | Path, out: str | Path | None = None, *,
                   emails: bool = False, force: bool = False,
                   progress: Callable[[int, int], None] | None = None,
                   lock_selection: RecordedSelection | None = None,
                   secret: bytes | None = None,
                   draft_only: frozenset[str] | None = None) -> GenerateResult:
    """Generate every rater's workbook, the blinded manifest and the sealed key.

    Parameters
    ----------
    study_dir : str or Path
        The study folder (``study.toml``, items, raters).
    out : str or Path, optional
        Where ``packs/`` and ``sealed/`` go; the study folder by default.
    emails : bool
        Also write one ``.eml`` draft per pack in ``packs/eml/``.
    force : bool
        Replace an existing seal made for a different spec hash, or one made by the
        demo (its public secret is replaced by a new one even for the same spec).
    progress : callable, optional
        Called as ``progress(done, total)`` after each pack is written.
    lock_selection : RecordedSelection, optional
        A data lock's selection (protocol 002, ``sheetflow lock``), as read once: the
        second raters' packs hold the items it selected, the key sealed at generate is
        kept as it is and the packs the lock adds are sealed in a record chained to it
        with the sha256 of those same bytes (:func:`~.seal.write_lock_record`);
        ``key_sha256`` is then that record's hash. After a lock, regenerating reads the
        recorded selection itself.
    secret : bytes, optional
        The study secret to draw with, 32 bytes, instead of the sealed one (when
        regenerating) or a new one: for a run that must be the same every time (the
        demo). A secret anyone can compute gives no blinding against someone who
        tries; a real study leaves this unset.
    draft_only : frozenset of str, optional
        With ``emails``, draft only the packs of these raters (``sheetflow lock``: the
        second raters'); every other draft in ``packs/eml/`` is left as it was while
        the pack it attaches is unchanged. By default every pack gets a draft.

    Returns
    -------
    GenerateResult

    Raises
    ------
    SpecError
        The study does not load.
    UsageError
        ``sealed/`` already holds a plan for another spec, or a secret drawn by
        ``sheetflow demo`` (both without ``force``), or ``out`` is (inside) a folder
        of the study sheetflow reads: ``returns/``, ``packs/``, ``sealed/`` or ``out/``.
    SheetflowError
        A workbook could not be written (the message names the item).
    """
    study = load_study(study_dir)
    require_generatable(study)
    root = Path(out) if out is not None else study.root
    if out is not None:
        _refuse_study_input(root, study.root)
    spec_hash = study.hash
    # before anything of the seal is read: a commit stopped half-way is rolled back
    recovered = recover_interrupted(root)
    _refuse_other_seal(root, spec_hash, force)
    # the demo's own run passes its secret; any other run must not reuse it
    renew = secret is None and _refuse_demo_seal(root, study_dir, out, force)
    _refuse_replacing_with_data(root, study.root, spec_hash, renew)
    reused = False
    if secret is None:
        secret, reused = _study_secret(root, spec_hash, force)
    elif len(secret) != SECRET_BYTES:
        raise UsageError(f"a study secret is {SECRET_BYTES} bytes, not {len(secret)}")
    spec_field = _spec_field(root, spec_hash, secret, reused)
    packs_dir = root / L.PACKS_DIR
    remove_partials(packs_dir)  # staging makes the folder: a refused run leaves none
    remove_partials(packs_dir / EML_DIR)  # a killed run's drafts are staged there too
    remove_partials(root / SEALED_DIR)
    command = "generate" if lock_selection is None else "lock"  # named if interrupted
    if lock_selection is None and (root / SEALED_DIR / LOCK_RECORD_FILE).exists():
        # after a data lock the key sealed at generate stays as published: regenerating
        # seals the lock's packs in its chained record again
        lock_selection = _sealed_selection(study)
    locked = lock_selection.selected if lock_selection is not None else []
    # a second rater whose subset is drawn at data lock has no pack until the lock
    assignments = [a for r in study.raters for a in _sittings(study, r, secret, locked)
                   if a.slots]
    manifest_path = packs_dir / L.MANIFEST_FILE
    mailing = packs_dir / MAILING_LIST
    # the invitations reach every rater (drafted with --eml, or by send): an arm id in
    # their text stops the run before anything is written
    mail_leaks = refuse_mail_leaks(study, _invitations(study, assignments))
    previous = previous_files(root)
    drafts = StagedDrafts()
    # packs, manifest, mailing list, drafts and seal as one set: staged, then all
    # replaced (the seal last) by a journaled commit; a run that fails or is stopped
    # at any point leaves the previous set whole, or has it restored on the next run
    with OutputSet(root, label=command, what="packs and seal") as outputs:
        infos, manifest_sha256 = _write_packs(study, spec_hash, secret, spec_field,
                                              assignments, manifest_path, progress,
                                              outputs.stage)
        # before anything is moved into place: a pack that shows an arm is never written
        staged = {final: temp for temp, final in outputs.staged()}
        leaks = refuse_leaks(study, [(i.path.name, staged[i.path]) for i in infos],
                             (manifest_path.name, staged[manifest_path]))
        outputs.write(mailing, mailing_list_csv(
            [(a.rater, a.sitting, i.path.name) for a, i in zip(assignments, infos, strict=True)]))
        redrafted = _redrafted(study, emails, draft_only)
        if redrafted:
            drafts = stage_drafts(study, [(a, i.path, staged[i.path])
                                          for a, i in zip(assignments, infos, strict=True)
                                          if a.rater.id in redrafted],
                                  judge_rater_ids(study), packs_dir / EML_DIR, outputs.stage)
        stale = stale_files(previous, {i.path: i.sha256 for i in infos}, redrafted)
        outputs.supersede(f.path for f in stale)
        key = _key(study, spec_hash, assignments)
        if lock_selection is not None:
            seal = write_lock_record(root, key, manifest_sha256=manifest_sha256,
                                     selection_sha256=lock_selection.sha256,
                                     stage=outputs.stage)
        else:
            seal = write_seal(root, key, spec_hash=spec_hash, manifest_sha256=manifest_sha256,
                              version=__version__, secret=secret, inputs=input_hashes(study),
                              stage=outputs.stage)
    returns_dir = study.root / L.RETURNS_DIR
    returns_dir.mkdir(exist_ok=True)
    result = GenerateResult(study.id, spec_hash, seal.key_sha256, infos, manifest_path,
                            seal.key_path, seal.key_hash_path, seal.plan_lock_path, mailing,
                            returns_dir)
    judges = judge_rater_ids(study)
    result.judges = sorted({i.rater_id for i in infos} & judges)
    if selects_at_lock(study):
        written = {i.rater_id for i in infos}
        result.at_lock = [r.id for r in study.raters if r.role == "second" and r.id not in written]
    result.eml_paths = drafts.paths
    gone = set(outputs.removed)
    result.removed = [(f.rater_id, f.path) for f in stale if f.path in gone]
    result.warnings = ([recovered] if recovered else []) + drafts.warnings
    result.warnings += study_warnings(study)
    result.warnings += mail_leaks + leaks
    return result


def _redrafted(study: Study, emails: bool, draft_only: frozenset[str] | None
               ) -> frozenset[str]:
    """The raters whose drafts this run writes: none without ``emails``, else those of
    ``draft_only`` (every rater when it is unset)."""
    if not emails:
        return frozenset()
    everyone = frozenset(r.id for r in study.raters)
    return everyone if draft_only is None else everyone & draft_only


def _invitations(study: Study, assignments: list[Assignment]) -> list[tuple[str, str, str]]:
    """(what names it, subject, body) of the invitation of each pack a person is sent
    (a judge's is filled by ``import-judges``, never mailed)."""
    judges = judge_rater_ids(study)
    return [(f"the invitation to {a.rater.id}" + (f" (sitting {a.sitting})" if a.sitting > 1
                                                  else ""),
             *invitation_text(study, a.rater, a.sitting, len(a.slots)))
            for a in assignments if a.rater.id not in judges]


def _write_packs(study: Study, spec_hash: str, secret: bytes, spec_field: tuple[str, str],
                 assignments: list[Assignment], manifest_path: Path,
                 progress: Callable[[int, int], None] | None,
                 stage: Callable[[Path], Path]) -> tuple[list[PackInfo], str]:
    """Write every workbook and the manifest, each to ``stage(path)``; return the packs
    (with their final paths) and the manifest's sha256.

    Each pack's entry records the sha256 of its workbook's bytes as staged (``sha256``),
    so sealing the manifest seals the workbooks too.

    Each pack's manifest entry is serialised as soon as its workbook is written and then
    dropped, and the texts shared by all packs are split and hashed once.
    """
    created = _created(study)
    row_key = secret_row_key(secret, spec_hash)
    password = keyed(secret, "sheetflow workbook structure").hex()[:16]  # never in a pack
    texts = TextCache()
    infos = []
    with _ManifestStream(stage(manifest_path), _manifest(study, spec_hash)) as manifest:
        for a in assignments:
            path = manifest_path.parent / pack_file_name(study, a.rater, a.sitting)
            identity = pack_identity(study, spec_field, a.rater, a.sitting)
            staged = stage(path)
            layout = write_pack(staged, _pack_spec(study, a, identity, created, row_key,
                                                   password), texts)
            # read back once, as written: the manifest (sealed) then vouches for the
            # workbook's bytes, which verify and send check
            digest = sha256_file(staged)
            manifest.add({"file": path.name, "rater_id": a.rater.id, "role": a.rater.role,
                          "sitting": a.sitting, "identity": identity, "sha256": digest,
                          **layout})
            infos.append(PackInfo(a.rater.id, a.sitting, path, len(a.slots), digest))
            if progress is not None:
                progress(len(infos), len(assignments))
    return infos, manifest.sha256


class _ManifestStream:
    """The manifest written one pack entry at a time, to a temporary file until complete.

    Each entry is stored compact (:mod:`sheetflow.packs.manifest_form`); the tables its cards
    share with other packs come after ``packs`` (``"shared"`` sorts after it), so they
    are written last. The bytes are exactly ``dump_json(manifest, compact=True)`` of the
    whole manifest: compact JSON writes a list as its items joined by commas, so the
    entries are spliced between the text before and after an empty ``"packs"`` list.
    ``path`` is the staged file (:class:`~sheetflow.staging.OutputSet`), which moves
    into place with the packs; on an error it is removed here, so the error that
    stopped the run (a pack that could not be written) is the one reported, never a
    second failure of this file's own close.
    """

    def __init__(self, path: Path, manifest: dict[str, Any]):
        self.path = path
        self.manifest = manifest
        self.compactor = Compactor()
        self.head = self._split()[0]
        self.digest = hashlib.sha256()
        self.sha256 = ""
        self.count = 0

    def __enter__(self) -> _ManifestStream:
        with naming(self.path):
            self.file = self.path.open("wb")
        self._put(self.head)
        return self

    def add(self, entry: dict[str, Any]) -> None:
        """Append one pack's entry."""
        self._put(b"," if self.count else b"")
        self._put(dump_json(self.compactor.entry(entry), compact=True)[:-1])  # no newline
        self.count += 1

    def _split(self) -> tuple[bytes, bytes]:
        """The text before the first entry and after the last one."""
        whole = {**self.manifest, "packs": []}
        if self.compactor.shapes:  # no tables when every card is stored whole
            whole["shared"] = self.compactor.shared()
        # a quote inside a JSON string is escaped, so this text can only be the key itself
        head, *tail = dump_json(whole, compact=True).split(b'"packs":[]')
        if len(tail) != 1:
            raise SheetflowError("internal error: the manifest has no single packs list")
        return head + b'"packs":[', b"]" + tail[0]

    def _put(self, data: bytes) -> None:
        with naming(self.path):
            self.file.write(data)
        self.digest.update(data)

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> None:
        try:
            if kind is None:
                head, tail = self._split()
                if head != self.head:  # "shared" sorts after "packs": cannot happen
                    raise SheetflowError("internal error: the manifest head changed")
                self._put(tail)
                with naming(self.path):
                    self.file.close()  # the last bytes are flushed here
                self.sha256 = self.digest.hexdigest()
                return
        except BaseException:
            self._discard()
            raise
        self._discard()

    def _discard(self) -> None:
        """Close and remove the unfinished file (a full disk fails the close too)."""
        with contextlib.suppress(OSError):
            self.file.close()
        self.path.unlink(missing_ok=True)


def pack_file_name(study: Study, rater: Rater, sitting: int) -> str:
    """The workbook name: the study's pattern, with ``-sitting2`` before ``.xlsx``."""
    return study.pack_file_name(rater, sitting)


def pack_identity(study: Study, spec_field: tuple[str, str], rater: Rater,
                  sitting: int) -> dict[str, str]:
    """The identity embedded in a pack (all text), keyed as in ``layout.IDENTITY_KEYS``.

    ``spec_field`` is the key and value of the spec (:func:`_spec_field`): the spec
    mark, never the spec hash, which would let a rater who knows the rest of the study
    test guesses about the arms against it (but for packs already sent with it).
    """
    key, value = spec_field
    return {"schema_version": L.SCHEMA_VERSION, "study_id": study.id, key: value,
            "rater_id": rater.id, "sitting": str(sitting), "pack_id": L.pack_id(rater.id, sitting)}


def _spec_field(root: Path, spec_hash: str, secret: bytes, reused: bool) -> tuple[str, str]:
    """What every pack carries of the spec: ``("spec_mark", <mark>)``.

    A study whose packs an earlier version wrote with the spec hash (``spec_hash``),
    regenerated in place under its sealed secret, keeps writing the spec hash: those
    packs are in the raters' hands already, and written again byte for byte they leave
    the manifest, and so the key hash published, as they were.
    """
    if reused and _packs_carry_spec_hash(root):
        return L.LEGACY_SPEC_KEY, spec_hash
    return "spec_mark", spec_mark(secret, spec_hash)


def _packs_carry_spec_hash(root: Path) -> bool:
    """Whether the packs the manifest in ``root`` lists carry the spec hash itself."""
    if not (root / L.PACKS_DIR / L.MANIFEST_FILE).is_file():
        return False
    try:
        manifest = open_manifest(root)
    except SheetflowError:  # no manifest sheetflow can read: the packs are written anew
        return False
    try:
        return any(L.LEGACY_SPEC_KEY in head.identity for head in manifest.heads)
    finally:
        manifest.close()


# the study's folders sheetflow reads from: returns (collect), packs (the manifest),
# sealed (the key), out (the collected ratings analyze reads)
_STUDY_INPUTS = (L.RETURNS_DIR, L.PACKS_DIR, SEALED_DIR, L.OUT_DIR)


def _refuse_study_input(out: Path, study_root: Path) -> None:
    """Refuse an ``out`` that is, or is inside, a folder the study's commands read.

    Packs written there would be collected as returns (``returns/``) or mailed beside
    the key (``packs/``), and a seal nested in ``sealed/`` or ``out/`` is one no command
    finds.
    """
    name = L.study_folder_holding(out, study_root, _STUDY_INPUTS)
    if name is not None:
        inside = "" if out.resolve() == (study_root / name).resolve() else "inside "
        raise UsageError(f"--out {out}: is {inside}the study's {name}/ folder, which "
                         "sheetflow reads; leave --out off to write packs/ and sealed/ "
                         "in the study folder, or give a folder outside its "
                         f"{', '.join(f'{n}/' for n in _STUDY_INPUTS[:-1])} and "
                         f"{_STUDY_INPUTS[-1]}/")


def _refuse_other_seal(root: Path, spec_hash: str, force: bool) -> None:
    lock_path = root / SEALED_DIR / PLAN_LOCK_FILE
    if force or not lock_path.exists():
        return
    frozen = _sealed_spec_hash(lock_path)
    if frozen != spec_hash:
        raise UsageError(f"{SEALED_DIR}/{PLAN_LOCK_FILE} was sealed for spec hash {frozen}, "
                         f"but the spec now hashes to {spec_hash}; packs already sent out would "
                         "no longer match. Use --force to replace the seal")


def _refuse_demo_seal(root: Path, study_dir: str | Path, out: str | Path | None,
                      force: bool) -> bool:
    """Whether ``sealed/`` holds the demo's public secret, to be replaced (``force``).

    A demo folder reused for real raters would otherwise regenerate its packs under a
    secret anyone can compute, and the raters could unblind them.

    Raises
    ------
    UsageError
        It holds the demo's secret and ``force`` is not set.
    """
    if not is_demo_secret(root / SEALED_DIR / SECRET_FILE):
        return False
    if not force:
        elsewhere = ("--out", str(out)) if out is not None else ()
        raise UsageError(demo_secret_line(
            Path(out if out is not None else study_dir, SEALED_DIR, SECRET_FILE),
            command_line("generate", study_dir, *elsewhere, "--force")))
    return True


def _refuse_replacing_with_data(root: Path, study_root: Path, spec_hash: str,
                                renew: bool = False) -> None:
    """A new seal (``--force``) while returns or outputs exist would orphan them.

    The returns were made from the packs of the old seal: under a new secret their row
    ids match no pack, and the key published before scoring would no longer verify.
    ``renew``: the sealed secret is replaced even for the same spec (the demo's).
    """
    sealed = root / SEALED_DIR
    lock = _sealed_spec_hash(sealed / PLAN_LOCK_FILE)
    if lock is None or (lock == spec_hash and (sealed / SECRET_FILE).exists() and not renew):
        return  # nothing sealed yet, or regenerating in place (the same bytes)
    held = [f"{name}/ ({count} file{'s' if count != 1 else ''})"
            for name, count in ((d, _files_in(study_root / d)) for d in (L.RETURNS_DIR, L.OUT_DIR))
            if count]
    if held:
        raise UsageError(f"{' and '.join(held)} hold data made from the packs sealed for "
                         f"spec hash {lock}; a new seal would leave them matching no pack and "
                         "the published key hash unverifiable. Move them out of the study "
                         "folder first (or start a new study folder), then generate again")


def _files_in(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def _study_secret(root: Path, spec_hash: str, force: bool) -> tuple[bytes, bool]:
    """The sealed secret when regenerating the same spec in place, else a new one, and
    whether it is the sealed one.

    :func:`_refuse_other_seal` has already stopped a seal of another spec unless
    ``--force`` replaces it, so a secret is reused only for the spec it was made for;
    :func:`_refuse_demo_seal` has stopped the demo's public secret unless ``--force``
    replaces it, so it is never reused.
    """
    sealed = root / SEALED_DIR
    lock = _sealed_spec_hash(sealed / PLAN_LOCK_FILE)
    path = sealed / SECRET_FILE
    if lock == spec_hash and path.exists():
        if is_demo_secret(path):
            return new_secret(), False
        return read_secret(path), True
    if lock == spec_hash and not force:
        raise UsageError(f"{SEALED_DIR}/ was sealed by an earlier sheetflow, whose draws "
                         "depend on the seeds alone; regenerating would give packs that no "
                         "longer match those sent. Use --force for new packs with a study "
                         "secret (send every rater the new pack), or keep the packs as they are")
    return new_secret(), False


def _sealed_spec_hash(lock_path: Path) -> str | None:
    if not lock_path.exists():
        return None
    try:
        return json.loads(lock_path.read_text(encoding="utf-8")).get("spec_hash")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return None


def _created(study: Study) -> dt.datetime:
    """The fixed creation time written into every pack (the study's date)."""
    try:
        return dt.datetime.fromisoformat(study.date).replace(tzinfo=None)
    except ValueError:
        return dt.datetime(2000, 1, 1)


def _sittings(study: Study, rater: Rater, secret: bytes,
              locked: list[str]) -> list[Assignment]:
    sittings = [assign(study, rater, 1, secret=secret, locked=locked)]
    if not sittings[0].slots:
        return sittings
    if study.design.repeats is not None:
        sittings.append(assign(study, rater, 2, secret=secret, locked=locked))
    return sittings


def _sealed_selection(study: Study) -> RecordedSelection:
    """The selection a data lock sealed its packs by, read once (its sha256 goes into
    the lock record again, its ids into the second raters' packs)."""
    selection = read_selection(study)
    if selection is None:
        raise SheetflowError(f"{selection_path(study)}: missing, but {SEALED_DIR}/"
                             f"{LOCK_RECORD_FILE} records a data lock drawn by it; restore "
                             "the file the lock wrote (the record seals its sha256)")
    return selection


def _pack_spec(study: Study, a: Assignment, identity: dict[str, str],
               created: dt.datetime, row_key: str, password: str) -> PackSpec:
    labels = study.design.labels if study.design.paired else ()
    cards = []
    for slot in a.slots:
        shown = tuple((s.column, s.label, slot.item.fields.get(s.column, ""))
                      for s in study.shown)
        keys: tuple[str | None, ...] = labels or (None,)
        responses = tuple((label, response_text(study, slot, label)) for label in keys)
        cards.append(CardSpec(slot.item.id, shown, responses, slot.code))
    sitting_note = " (second sitting)" if a.sitting == 2 else ""
    return PackSpec(
        title=L.pack_title(study.title, a.sitting),
        instructions=with_batch_size(with_case_count(study.instructions, len(cards)),
                                     study.design.batch_size),
        notice=SITTING2_NOTE if a.sitting == 2 else "",
        identity=identity,
        labels=tuple(labels),
        dimensions=study.rubric.dimensions,
        totals=study.rubric.totals,
        cards=tuple(cards),
        batch_size=study.design.batch_size,
        include_study_answers=a.sitting == 1,
        created=created,
        row_key=row_key,
        structure_password=password,
        rater_label=f"Workbook for rater {a.rater.id}{sitting_note}",
    )


def _manifest(study: Study, spec_hash: str) -> dict[str, Any]:
    """The manifest without its ``packs`` (see :class:`_ManifestStream`)."""
    return {
        "manifest_format": L.MANIFEST_FORMAT,
        "schema_version": L.SCHEMA_VERSION,
        "study_id": study.id,
        "spec_hash": spec_hash,
        "sheetflow_version": __version__,
        "design": study.design.kind,
        "labels": list(study.design.labels) if study.design.paired else [],
        "scoring_sheet": L.SCORING_SHEET,
        "identity_sheet": L.IDENTITY_SHEET,
    }


def _key(study: Study, spec_hash: str, assignments: list[Assignment]) -> dict[str, Any]:
    d = study.design
    packs = []
    for a in assignments:
        packs.append({
            "rater_id": a.rater.id, "role": a.rater.role, "sitting": a.sitting,
            "file": pack_file_name(study, a.rater, a.sitting),
            "seeds": a.seeds,
            "order": [s.item.id for s in a.slots],
            "cases": [_key_case(study, k, s) for k, s in enumerate(a.slots, 1)],
        })
    return {
        "key_format": KEY_FORMAT,
        "study_id": study.id,
        "spec_hash": spec_hash,
        "design": {"kind": d.kind, "labels": list(d.labels) if d.paired else [],
                   "arms": [a.id for a in d.arms], "seed": d.seed,
                   "repeats_seed": d.repeats.seed if d.repeats else None,
                   "shuffle": d.shuffle,
                   "rng": RNG_RECIPE},
        "packs": packs,
    }


def _key_case(study: Study, position: int, slot: Any) -> dict[str, Any]:
    if slot.sides:
        return {"position": position, "item_id": slot.item.id, "code": slot.code,
                "sides": dict(slot.sides)}
    arm = slot.item.fields.get(study.design.arm_column or "", "")
    return {"position": position, "item_id": slot.item.id, "code": slot.code, "arm": arm}

