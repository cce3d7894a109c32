"""Which spec a returned workbook was made from: its identity's spec mark, checked.

A pack carries the spec mark (:func:`sheetflow.packs.secret.spec_mark`, HMAC-SHA256 of
the spec hash under the study secret), not the spec hash: the plain hash of a spec whose
only unknowns are the arms could be matched by trying every assignment. ``collect``
recomputes the mark from the manifest's spec hash and the secret; a pack of an earlier
version, which carries the spec hash itself, is compared with the manifest's spec hash.
A collect that writes nothing (``status``), which need not read ``sealed/``, compares
the mark with the one the manifest recorded for the packs when it cannot read the
secret.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SealError
from ..packs.manifest import Manifest
from ..packs.secret import spec_mark
from ..workbook import layout as L
from .outputs import collection_secret


def preview_secret(root: Path) -> bytes | None:
    """The study secret when a collect that writes nothing can read it, else None (the
    manifest's recorded mark is the reference then)."""
    try:
        return collection_secret(root)
    except (OSError, SealError):
        return None


def expected_spec_mark(manifest: Manifest, secret: bytes | None) -> tuple[str, str]:
    """The spec mark a pack of this manifest carries, and words saying where it came from.

    Parameters
    ----------
    manifest : Manifest
        The blinded manifest collect reads (its ``spec_hash``, its packs' identities).
    secret : bytes or None
        The study secret; None when it cannot be read (a study sealed before secrets,
        or a collect that writes nothing without access to ``sealed/``).

    Returns
    -------
    tuple of str
        The mark ("" when there is none to expect) and what gives it.
    """
    if secret is not None:
        return (spec_mark(secret, str(manifest.top.get("spec_hash", ""))),
                "where the current spec and the study secret give")
    # every pack of a generate carries the same mark
    recorded = {h.identity.get("spec_mark", "") for h in manifest.heads} - {""}
    if len(recorded) == 1:
        return next(iter(recorded)), "where the manifest's packs carry"
    return "", "where the manifest records no single spec mark for its packs"


def other_spec(identity: dict[str, str], manifest: Manifest,
               expected: tuple[str, str]) -> str | None:
    """How the spec a workbook names differs from the manifest's (the detail of a
    ``spec-hash-mismatch``), or None when it is the same.

    Parameters
    ----------
    identity : dict
        The workbook's identity, as its stores agree on it.
    manifest : Manifest
        The blinded manifest.
    expected : tuple of str
        From :func:`expected_spec_mark`.
    """
    mark = identity.get("spec_mark")
    if mark is not None:
        wanted, source = expected
        if wanted and mark == wanted:
            return None
        return f"spec mark {mark[:12]}..., {source}" + (f" {wanted[:12]}..." if wanted else "")
    found, current = identity.get(L.LEGACY_SPEC_KEY), str(manifest.top.get("spec_hash"))
    if found == current:
        return None
    if found is None:
        return "no spec mark and no spec hash"
    return f"spec hash {found[:12]}..., current {current[:12]}..."
