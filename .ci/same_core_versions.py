"""Check that two installs give the same numpy, pandas and scipy.

Usage:
    python .ci/same_core_versions.py BASE_REPORT TEST_REPORT
        compares two ``pip install --dry-run --report`` files (``.`` and ``.[test]``);
    python .ci/same_core_versions.py BASE_REPORT --installed
        compares a report with the versions installed in the running interpreter;
    python .ci/same_core_versions.py --constraints FILE --installed
        checks that the installed versions are the pinned lower bounds.
Exits 1, naming the package and both versions, when they differ.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import sys
from pathlib import Path

CORE = ("numpy", "pandas", "scipy")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def from_report(path: str) -> dict[str, str]:
    """Package -> version that a ``pip install --dry-run --report`` would install."""
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    found = {_norm(i["metadata"]["name"]): i["metadata"]["version"] for i in report["install"]}
    return {name: found.get(name, "(not installed)") for name in CORE}


def from_constraints(path: str) -> dict[str, str]:
    """Package -> pinned version for the core packages in a constraints file."""
    pins = dict(line.strip().split("==", 1) for line in Path(path).read_text().splitlines()
                if "==" in line)  # fmt: skip
    return {name: pins[name] for name in CORE if name in pins}


def installed() -> dict[str, str]:
    out = {}
    for name in CORE:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "(not installed)"
    return out


def _release(version: str) -> str:
    """'1.24' and '1.24.0' name the same release."""
    parts = version.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def main(argv: list[str]) -> int:
    if argv[0] == "--constraints":
        left, left_name = from_constraints(argv[1]), f"pinned in {argv[1]}"
    else:
        left, left_name = from_report(argv[0]), "pip install ."
    if argv[-1] == "--installed":
        right, right_name = installed(), "installed"
    else:
        right, right_name = from_report(argv[1]), "pip install .[test]"
    bad = [n for n in left if _release(left[n]) != _release(right[n])]
    for name in CORE:
        if name in left:
            mark = "DIFFERS" if name in bad else "same"
            print(f"  {name}: {left_name} {left[name]}, {right_name} {right[name]} ({mark})")
    if bad:
        print(f"error: {', '.join(bad)} differ between {left_name!r} and {right_name!r}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
