"""Print a pip constraints file pinning every runtime dependency to its lower bound.

Reads ``[project] dependencies`` from pyproject.toml, so the oldest-versions CI run
always tests exactly the bounds the package declares. A dependency without a ``>=``
bound is an error: every bound must be a real, tested one.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path


def lower_bounds(pyproject: Path) -> list[str]:
    """``name==version`` for each ``name>=version`` runtime dependency."""
    deps = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = []
    for dep in deps:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][^,;\s]*)\s*(,.*)?", dep)
        if not match:
            raise SystemExit(f"pyproject.toml: dependency {dep!r} has no '>=' lower bound")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    print("\n".join(lower_bounds(root / "pyproject.toml")))
