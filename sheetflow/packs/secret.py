"""The study secret: 32 random bytes behind every draw a rater could otherwise predict.

A seed a person types (``20260915``) is small: from one pack, a rater could try every
seed below ten million in seconds and recover the draws, and with them which label
shows which arm on every card and every other pack's row ids. So each draw is keyed
with a secret as well as the seed: ``generate`` makes 32 bytes with :mod:`secrets`
and keeps them in ``sealed/secret`` (hex), next to the key; the key records the
secret's sha256, so the hash published before scoring commits to it. The secret
never reaches a pack, the blinded manifest, a draft or any other file a rater sees.

* the order, repeat draw, sides and display codes of each pack come from
  ``random.Random(int.from_bytes(HMAC-SHA256(secret, derivation)[:8], "big"))``, the
  derivation being the recorded seed and a purpose (``"20260915:sides:s1:R1"``);
* the row-id key (:func:`sheetflow.workbook.layout.keyed_row_id`) is
  ``HMAC-SHA256(secret, "sheetflow row ids" + spec hash)``;
* the spec mark every pack carries in place of the spec hash (:func:`spec_mark`).

Regenerating in place reuses the sealed secret, so the packs come out byte-identical;
a new study (no seal yet), or ``generate --force`` for a changed spec, gets a new one.
The demo's secret (:data:`DEMO_SECRET`) is never reused: anyone can compute it, so
``generate`` refuses a folder sealed with it, and ``generate --force`` draws a new one
even for the same spec. At unsealing the secret is revealed with the key, and every
draw can be recomputed from the two.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import re
import secrets
from pathlib import Path

from ..errors import SealError
from ..staging import naming

SECRET_FILE = "secret"
SECRET_BYTES = 32
RNG_RECIPE = "random.Random(int.from_bytes(HMAC-SHA256(secret, derivation)[:8], 'big'))"
_HEX = re.compile(rb"[0-9a-f]{64}\n?")

DEMO_SECRET = hashlib.sha256(b"sheetflow demo study secret").digest()
"""The demo's study secret: fixed, so every demo run draws the same packs. Anyone can
compute it, so packs drawn with it blind nothing (:func:`is_demo_secret`)."""


def read_secret(path: Path) -> bytes:
    """The secret stored at ``path`` (64 hex digits and a newline), read once.

    Raises
    ------
    SealError
        The file is not a secret sheetflow wrote.
    """
    return parse_secret(path.read_bytes(), path)


def parse_secret(data: bytes, path: Path) -> bytes:
    """The secret in ``data`` (the bytes of ``path``, already read and hashed).

    Raises
    ------
    SealError
        The bytes are not a secret sheetflow wrote.
    """
    if not _HEX.fullmatch(data):
        raise SealError(f"{path}: is not a study secret sheetflow wrote (64 hex digits); "
                        "restore it from the copy made at generate")
    return bytes.fromhex(data[:64].decode("ascii"))


def is_demo_secret(path: Path) -> bool:
    """Whether the secret stored at ``path`` is the demo's public one (:data:`DEMO_SECRET`);
    False for a missing file or one sheetflow did not write (the seal checks say so)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return bool(_HEX.fullmatch(data)) and data[:64] == DEMO_SECRET.hex().encode("ascii")


def demo_secret_line(sealed_secret: str | Path, generate_force: str) -> str:
    """The one line saying a study is sealed with the demo's public secret.

    Parameters
    ----------
    sealed_secret : str or Path
        The secret file as messages name it (``my-study/sealed/secret``).
    generate_force : str
        The whole ``generate --force`` command on the study, which draws a new secret.
    """
    return (f"{sealed_secret}: sealed by 'sheetflow demo' with its public secret (anyone "
            "who runs the demo can compute it), so packs drawn with it blind nothing; for a "
            f"study with real raters run '{generate_force}', which draws a new secret")


def write_secret(path: Path, secret: bytes) -> None:
    """Store ``secret`` at ``path`` as hex, readable by its owner alone (whoever reads
    it can forge the collection's mark)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, secret.hex().encode("ascii") + b"\n")


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` with permissions for its owner alone (0600), set
    before any byte is written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
    with naming(path), os.fdopen(fd, "wb") as fh:
        fh.write(data)


def new_secret() -> bytes:
    """32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_BYTES)


def secret_sha256(secret: bytes) -> str:
    """What the key records of the secret: the sha256 of its stored form."""
    return hashlib.sha256(secret.hex().encode("ascii") + b"\n").hexdigest()


def keyed(secret: bytes, text: str) -> bytes:
    """HMAC-SHA256 of ``text`` (UTF-8) under ``secret``."""
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).digest()


def keyed_rng(secret: bytes, derivation: str) -> random.Random:
    """The generator of one draw: seeded with 8 bytes of ``keyed(secret, derivation)``."""
    return random.Random(int.from_bytes(keyed(secret, derivation)[:8], "big"))


def record_mac(secret: bytes, purpose: str, data: bytes) -> str:
    """HMAC-SHA256 (hex) of a record's canonical bytes under the secret, for ``purpose``
    (``"collection"``): the record cannot be rewritten to match an edited table
    without the secret."""
    return hmac.new(secret, purpose.encode("utf-8") + b"\x1f" + data, hashlib.sha256).hexdigest()


def row_key(secret: bytes, spec_hash: str) -> str:
    """The key of every pack's row ids (hex), bound to the study secret and spec."""
    return keyed(secret, f"sheetflow row ids\x1f{spec_hash}").hex()


SPEC_MARK_PURPOSE = "sheetflow spec mark"


def spec_mark(secret: bytes, spec_hash: str) -> str:
    """The mark of the spec a pack carries (hex): HMAC-SHA256 of the spec hash under
    the secret.

    Not the spec hash itself: the spec hash is a plain sha256 of a spec a rater may know
    all of but which response is which arm, so trying every assignment of the arms
    would find the one that hashes to it. Without the secret no guess can be tested
    against the mark; ``collect`` recomputes it to tell a pack of another spec.
    """
    return record_mac(secret, SPEC_MARK_PURPOSE, spec_hash.encode("ascii"))
