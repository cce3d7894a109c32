"""Size of ``packs/manifest.json`` against the packs, and the time to read it back.

Run on demand (not a test)::

    python bench/bench_manifest.py [--scenario dices|paired|all] [--cache DIR] [--rebuild]

Scenarios (each generated once into the cache folder; no returns are needed):

- **dices**: DICES-350's size: the answer-review template with 350 items, 123 raters
  who each score every item (single design).
- **paired**: the paired-rubric template with its cases cycled to 350, 12 raters.

For each it prints the bytes of the manifest (compact, ``manifest_format`` 2), of the
same manifest in the full form the previous version wrote (format 1: every pack entry
as readers get it, measured pack by pack), and of all packs together, with the ratios
(the target: manifest no larger than the packs). Then the time to index the manifest
(what ``status`` reads) and to read every pack's full entry (what ``collect`` reads,
one pack per returned file), for both forms: the full form is written to the cache
folder beside the study for that.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sheetflow.packs.manifest import open_manifest
from sheetflow.packs.seal import dump_json

SCENARIOS = {
    "dices": ("answer-review", 350, 123),
    "paired": ("paired-rubric", 350, 12),
}
DONE = "bench-build.json"


def build(root: Path, template: str, items: int, raters: int) -> None:
    """A study from ``template`` with ``items`` items and ``raters`` raters, generated."""
    from bench_analyze import _raters, _repeat_items

    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    init_study(root, template)
    _repeat_items(root / "items.csv", root / "items.csv", items)
    _raters(root / "raters.csv", raters)
    generate_packs(root)


def ensure_built(cache: Path, name: str, rebuild: bool) -> Path:
    """The scenario's study folder, generated in a fresh process unless cached."""
    template, items, raters = SCENARIOS[name]
    root = cache / name
    if (root / DONE).exists() and not rebuild:
        return root
    if root.exists():
        shutil.rmtree(root)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from bench_manifest import build; "
            "from pathlib import Path; build(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), "
            "int(sys.argv[5]))")
    subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(root),
                    template, str(items), str(raters)], check=True)
    (root / DONE).write_text(json.dumps({"template": template, "items": items,
                                         "raters": raters}))
    return root


def full_form(root: Path, target: Path) -> int:
    """Write the format-1 manifest of ``root`` under ``target/packs``; its size."""
    manifest = open_manifest(root)
    path = target / "packs" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    head, tail = dump_json({**manifest.top, "manifest_format": 1, "packs": []},
                           compact=True).split(b'"packs":[]')
    with path.open("wb") as fh:
        fh.write(head + b'"packs":[')
        for i, entry in enumerate(manifest.packs()):
            fh.write((b"," if i else b"") + dump_json(entry, compact=True)[:-1])
        fh.write(b"]" + tail)
    manifest.close()
    return path.stat().st_size


def read_times(root: Path) -> tuple[float, float]:
    """Seconds to index the manifest, and to read every pack's full entry after that."""
    t0 = time.perf_counter()
    manifest = open_manifest(root)
    t1 = time.perf_counter()
    for head in manifest.heads:
        manifest.pack(head)
    t2 = time.perf_counter()
    manifest.close()
    return t1 - t0, t2 - t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "sheetflow-bench-manifest")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    for name in list(SCENARIOS) if args.scenario == "all" else [args.scenario]:
        root = ensure_built(args.cache, name, args.rebuild)
        template, items, raters = SCENARIOS[name]
        compact = (root / "packs" / "manifest.json").stat().st_size
        packs = sum(p.stat().st_size for p in (root / "packs").glob("*.xlsx"))
        old = args.cache / f"{name}-format1"
        full = full_form(root, old)
        print(f"{name}: {template}, {items} items x {raters} raters")
        print(f"  manifest {compact / 1e6:8.2f} MB  (format 1, as before: {full / 1e6:.2f} MB)")
        print(f"  packs    {packs / 1e6:8.2f} MB  manifest / packs = {compact / packs:.2f} "
              f"(target <= 1; before {full / packs:.2f})")
        for label, folder in (("compact", root), ("format 1", old)):
            index, entries = read_times(folder)
            print(f"  read {label:8s}: index {index:6.3f} s, every pack's entry "
                  f"{entries:6.2f} s ({entries / raters * 1000:.0f} ms per pack)")


if __name__ == "__main__":
    main()
