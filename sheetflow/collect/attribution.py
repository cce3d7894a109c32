"""Which pack a returned file claims to be, from its identity stores.

The sandboxed check reads the three stores (:mod:`.identity`); the collector decides
here, in the parent, whether they agree with each other and with one pack of the
manifest. What the claim is worth is settled afterwards by the rows the file proves
(:mod:`.file_check`): a claim alone never makes a file count for a rater.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..packs.manifest import Manifest, PackHead
from ..workbook import layout as L
from .identity import pack_mismatch, pack_names
from .links import conflict_detail, naming_stores, pack_words
from .spec_marks import other_spec
from .validate import Issue, issue, show_value


@dataclass
class Claim:
    """What one file's identity stores say, once checked against the manifest.

    ``head`` is the pack claimed, or None when the stores name none of this study's
    packs consistently (``issues`` say why); ``by_stores`` maps each pack id a store
    names to those stores, kept when the stores disagree so the file can still be
    linked to the packs it might be (:func:`~.links.file_link`).
    """

    head: PackHead | None = None
    issues: list[Issue] = field(default_factory=list)
    by_stores: dict[str, list[str]] = field(default_factory=dict)


def claim_of(name: str, stores: dict[str, dict[str, str]], manifest: Manifest,
             spec_mark: tuple[str, str]) -> Claim:
    """The pack the file named ``name`` claims, with every problem of its claim.

    Parameters
    ----------
    name
        The file's name, as its issues show it.
    stores
        Each identity store's keys and values (an empty mapping for a store not found).
    manifest
        The study's blinded manifest.
    spec_mark
        The spec mark the study's packs carry, and where it came from
        (:func:`.spec_marks.expected_spec_mark`).
    """
    claim = Claim()
    present = {store: values for store, values in stores.items() if values}
    if not present:
        claim.issues.append(issue("identity-missing", file=name))
        return claim
    identity: dict[str, str] = {}
    for key in L.READ_IDENTITY_KEYS:
        seen = {store: values[key] for store, values in present.items() if key in values}
        if len(set(seen.values())) > 1:
            claim.issues.append(issue("identity-conflict", file=name,
                                      detail=conflict_detail(key, seen)))
            claim.by_stores = naming_stores(present, manifest.by_id,
                                            manifest.top.get("study_id"))
            return claim
        if seen:
            identity[key] = next(iter(seen.values()))
    missing = sorted(set(stores) - set(present))
    if missing:
        claim.issues.append(issue("identity-partial", file=name,
                                  detail="no " + ", no ".join(missing)))
    _match(claim, name, identity, present, manifest, spec_mark)
    return claim


def _mark_cell(identity: dict[str, str],
               stores: dict[str, dict[str, str]]) -> dict[str, str]:
    """The identity sheet's cell of the spec mark (or an earlier version's spec hash),
    when that sheet holds it: where the rater or coordinator can look."""
    key = L.LEGACY_SPEC_KEY if "spec_mark" not in identity else "spec_mark"
    if key not in stores.get(f"sheet {L.IDENTITY_SHEET}", {}):
        return {}
    # both keys are written on the spec mark's row
    return {"sheet": L.IDENTITY_SHEET, "cell": f"B{L.IDENTITY_KEYS.index('spec_mark') + 1}"}


def rows_shown(claim: Claim, stores: dict[str, dict[str, str]], manifest: Manifest,
               proven: Callable[[str], bool]) -> PackHead | None:
    """The pack a file refused for its spec mark is by its hidden row ids, or None.

    Such a file names no pack (``claim.head`` is None), yet when the pack its stores
    agree on has its rows proven (``proven``: keyed by the study's secret, they cannot
    be made from another workbook) it is that rater's own pack, its mark edited or of
    another version: "not a pack of this study" would not be true of it.
    """
    if claim.head is not None or not any(i.code == "spec-hash-mismatch"
                                         for i in claim.issues):
        return None
    named = {(values.get("pack_id", ""), values.get("rater_id", ""))
             for values in stores.values() if values}
    if len(named) != 1:
        return None
    pack, rater = next(iter(named))
    head = manifest.by_id.get(pack)
    return head if head is not None and head.rater_id == rater and proven(pack) else None


def rows_link(head: PackHead, issues: list[Issue]) -> dict[str, Any]:
    """The link fields (:class:`~.validate.FileStatus` ``linked``, ``linked_raters``,
    ``link``) of a file :func:`rows_shown` names ``head``: linked to that pack alone,
    it is its rater's return that cannot be used (:mod:`.links`), so they are asked
    for it again and never reminded as if nothing had arrived."""
    found = next((i for i in issues if i.code == "spec-hash-mismatch"), None)
    where = f" ({found.sheet}!{found.cell})" if found is not None and found.cell else ""
    return {"linked": [head.pack_id], "linked_raters": [head.rater_id],
            "link": f"{pack_words(head)} by its hidden row ids, but its spec mark{where} "
                    "was edited or is of another version of the study: counted for nobody"}


def _match(claim: Claim, name: str, identity: dict[str, str],
           stores: dict[str, dict[str, str]], manifest: Manifest,
           spec_mark: tuple[str, str]) -> None:
    """Set ``claim.head`` when the agreed identity names one pack of this study."""
    rater = identity.get("rater_id", "")
    checks = [
        ("schema-unsupported", identity.get("schema_version"),
         manifest.top.get("schema_version")),
        ("wrong-study", identity.get("study_id"), manifest.top.get("study_id")),
    ]
    for code, found, wanted in checks:
        if found != wanted:
            claim.issues.append(issue(code, file=name, rater=rater,
                                      detail=show_value(found) or "(none)"))
            return
    differs = other_spec(identity, manifest, spec_mark)
    if differs is not None:
        # sheetflow's own words (the workbook's mark is cut to 12 characters in them)
        claim.issues.append(issue("spec-hash-mismatch", file=name, rater=rater,
                                  versions=differs, **_mark_cell(identity, stores)))
        return
    head = manifest.by_id.get(identity.get("pack_id", ""))
    raters = {h.rater_id for h in manifest.heads}
    mismatch = pack_mismatch(identity, stores, head, raters)
    if mismatch is not None:  # a rater of this study, but not this pack's
        claim.issues.append(issue("identity-mismatch", file=name, **mismatch))
        return
    if head is None or head.rater_id != rater:
        claim.issues.append(issue("unknown-rater", file=name, rater=rater,
                                  detail=rater or "(none)"))
        return
    claim.head = head
    # a file named like another rater's pack is named so, whoever it claims to be
    claim.issues += [issue("file-name-mismatch", file=name, rater=head.rater_id,
                           **pack_names(head, other.rater_id, other.sitting))
                     for other in manifest.heads if other is not head and other.file == name]
