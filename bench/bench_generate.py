"""Benchmark: ``generate_packs`` against bare xlsxwriter writing the same workbooks.

Run on demand (not a test)::

    python bench/bench_generate.py [--study paired|dices|all] [--raters N] [--cases N]
                                   [--repeats 3] [--growth] [--keep DIR]

Studies: **paired**, 50 raters x 500 paired cases of ~150-word responses; **dices**,
DICES-350's size (the answer-review template, 350 items, 123 raters). Each is
generated with a fixed study secret, so the packs are the same from run to run
(``--keep DIR`` copies them, to compare two versions byte for byte).

The baseline is bare xlsxwriter replaying *exactly the same calls*: every cell
(strings, blanks, formulas), merged range, format (with its properties), data
validation, conditional format, row and column setting, page setup, protection and
workbook property of every workbook, recorded from a generate run in order. What is
left to generate is sheetflow's own work: the layout, text splitting and hashing, the
answer rules, the manifest, the seal. Each phase runs in its own child process so the
peaks do not mix; the replay times only the writing (loading each recording is left
out). It prints medians of ``--repeats`` alternating runs: CPU time (the steadier
figure on a busy machine), wall time, peak RSS, and the ratios (target: 1.1x).
``--growth`` adds a table over three sizes each of raters and cases (paired) with the
growth exponents (the slope of log time over log size).
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import xlsxwriter
from synthetic import growth_table, write_internal_scores

from sheetflow.packs.generate import generate_packs

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"paired": (500, 50), "dices": (350, 123)}  # (cases or items, raters)
SECRET = bytes(range(32))  # a fixed study secret: the same packs from run to run


def synthesise(folder: Path, name: str, cases: int, raters: int) -> None:
    """Study ``name``: paired-rubric with ``cases`` cases of ~150-word responses, or
    answer-review (``dices``) with its items cycled to ``cases``; ``raters`` raters."""
    template = "paired-rubric" if name == "paired" else "answer-review"
    shutil.copytree(ROOT / "templates" / template, folder)
    rng = random.Random(1)
    words = ["factor", "evidence", "option", "risk", "cost", "policy", "trade-off",
             "scenario", "source", "plan"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)) + "."

    if name == "paired":
        with (folder / "items.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["case_id", "prompt", "response_baseline", "response_improved"])
            for i in range(cases):
                w.writerow([f"TC-{i:04d}", text(30), text(150), text(150)])
        write_internal_scores(folder, [f"TC-{i:04d}" for i in range(cases)])
    else:
        from bench_analyze import _repeat_items

        _repeat_items(folder / "items.csv", folder / "items.csv", cases)
    with (folder / "raters.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(raters):
            w.writerow([f"R-{i:03d}", f"Rater {i}", f"Last{i:03d}", f"r{i}@example.org",
                        "primary"])


SHEET_CALLS = ("write_string", "write_blank", "write_formula", "merge_range", "data_validation",
               "conditional_format", "set_row", "set_column", "activate", "hide",
               "very_hidden", "fit_to_pages", "freeze_panes", "hide_gridlines", "print_area",
               "protect", "repeat_rows", "set_h_pagebreaks", "set_landscape", "set_portrait",
               "set_margins", "set_paper", "set_print_scale")
BOOK_CALLS = ("add_format", "add_worksheet", "set_properties", "set_custom_property",
              "define_name")
OPTIONS = {"strings_to_formulas": False, "strings_to_urls": False, "strings_to_numbers": False}


class _Fmt:
    """A recorded format: its index among the workbook's ``add_format`` calls."""

    def __init__(self, index: int):
        self.index = index


def record(folder: Path, out: Path) -> None:
    """Run generate once, saving each workbook's xlsxwriter calls: every cell, merge,
    format (with its properties), validation, conditional format, row and page setting
    and workbook property, in order (only the outermost call of a nested one)."""
    import pickle

    from xlsxwriter.format import Format
    from xlsxwriter.workbook import Workbook
    from xlsxwriter.worksheet import Worksheet

    calls: list[tuple[str | None, str, tuple]] = []
    formats: dict[int, _Fmt] = {}
    depth = [0]

    def plain(value: object) -> object:
        if isinstance(value, Format):
            return formats[id(value)]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    def recorder(cls: type, name: str, on_sheet: bool):
        real = getattr(cls, name)

        def method(self, *args, **kwargs):
            outer = depth[0] == 0
            depth[0] += 1
            try:
                result = real(self, *args, **kwargs)
            finally:
                depth[0] -= 1
            if outer:
                calls.append((self.name if on_sheet else None, name,
                              tuple(plain(a) for a in args), plain(kwargs)))
                if name == "add_format":
                    formats[id(result)] = _Fmt(len(formats))
            return result
        return method

    for name in SHEET_CALLS:
        setattr(Worksheet, name, recorder(Worksheet, name, True))
    for name in BOOK_CALLS:
        setattr(Workbook, name, recorder(Workbook, name, False))
    real_init = Workbook.__init__

    def init(self, *args, **kwargs):  # its default formats are made by the replay's too
        depth[0] += 1
        try:
            real_init(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    Workbook.__init__ = init
    real_close = Workbook.close

    def close(self):
        with (out / (Path(self.filename).name + ".pickle")).open("wb") as fh:
            pickle.dump(list(calls), fh)
        calls.clear()
        formats.clear()
        return real_close(self)

    Workbook.close = close
    out.mkdir(parents=True, exist_ok=True)
    generate_packs(folder)


def bare(recordings: Path, out: Path) -> tuple[float, float]:
    """Replay every recording with bare xlsxwriter; wall and CPU seconds of the writing."""
    import pickle
    out.mkdir(parents=True, exist_ok=True)
    wall = cpu = 0.0
    for path in sorted(recordings.glob("*.pickle")):
        with path.open("rb") as fh:
            calls = pickle.load(fh)
        t0, c0 = time.perf_counter(), time.process_time()
        wb = xlsxwriter.Workbook(str(out / path.stem), OPTIONS)
        sheets: dict[str, object] = {}
        made: list[object] = []
        for sheet, method, args, kwargs in calls:
            args, kwargs = tuple(_real(a, made) for a in args), _real(kwargs, made)
            if sheet is None:
                result = getattr(wb, method)(*args, **kwargs)
                if method == "add_format":
                    made.append(result)
                elif method == "add_worksheet":
                    sheets[result.name] = result
            else:
                getattr(sheets[sheet], method)(*args, **kwargs)
        wb.close()
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        del calls
    return wall, cpu


def _real(value: object, made: list[object]) -> object:
    """A recorded argument with each recorded format replaced by the one made here."""
    if isinstance(value, _Fmt):
        return made[value.index]
    if isinstance(value, dict):
        return {k: _real(v, made) for k, v in value.items()}
    return value


def content(recordings: Path) -> str:
    """What one pack holds, from its recording: cells, merges, validation ranges."""
    import pickle
    path = sorted(recordings.glob("*.pickle"))[0]
    with path.open("rb") as fh:
        calls = pickle.load(fh)
    cells = sum(1 for _, m, _, _ in calls if m.startswith("write_"))
    merges = sum(1 for _, m, _, _ in calls if m == "merge_range")
    formats = sum(1 for _, m, _, _ in calls if m == "add_format")
    rules = [a for _, m, a, _ in calls if m == "data_validation"]
    ranges = sum(len(a[-1].get("multi_range", "x").split()) for a in rules)
    return (f"one pack: {cells:,} cells, {merges:,} merged ranges, {formats} formats, "
            f"{len(rules):,} validation elements over {ranges:,} ranges")


def _phase(queue: multiprocessing.Queue, name: str, folder: Path, out: Path) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    t0 = time.perf_counter()
    if name in ("generate", "record"):
        shutil.rmtree(folder / "packs", ignore_errors=True)
        shutil.rmtree(folder / "sealed", ignore_errors=True)
    if name == "generate":
        generate_packs(folder, secret=SECRET)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu0
    elif name == "record":
        record(folder, out)
        wall = cpu = 0.0
    else:
        wall, cpu = bare(out, out / "bare")
    queue.put((wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def measure(name: str, folder: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one phase, in a fresh child."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_phase, args=(queue, name, folder, out))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def medians(folder: Path, rec: Path, repeats: int) -> dict[str, tuple[float, ...]]:
    """Median (wall, CPU, peak MiB) of generate and of the bare replay, alternating."""
    runs: dict[str, list[tuple[float, float, float]]] = {"generate": [], "bare": []}
    measure("record", folder, rec)
    for _ in range(repeats):
        for name in runs:
            runs[name].append(measure(name, folder, rec))
    return {name: tuple(statistics.median(r[i] for r in got) for i in range(3))
            for name, got in runs.items()}


def run_study(name: str, raters: int, cases: int, repeats: int, keep: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, rec = Path(tmp) / "study", Path(tmp) / "rec"
        synthesise(folder, name, cases, raters)
        m = medians(folder, rec, repeats)
        size = sum(p.stat().st_size for p in (folder / "packs").glob("*.xlsx"))
        held = content(rec)
        if keep is not None:
            shutil.rmtree(keep / name, ignore_errors=True)
            shutil.copytree(folder / "packs", keep / name)
    (g_wall, g_cpu, g_mem), (b_wall, b_cpu, b_mem) = m["generate"], m["bare"]
    what = "paired cases" if name == "paired" else "items (answer-review)"
    print(f"{name}: {raters} packs x {cases} {what}; medians of {repeats}")
    print(f"  generate_packs : cpu {g_cpu:7.2f} s  wall {g_wall:7.2f} s  peak RSS "
          f"{g_mem:6.0f} MiB  ({size / 2**20:.1f} MiB of packs)")
    print(f"  bare xlsxwriter: cpu {b_cpu:7.2f} s  wall {b_wall:7.2f} s  peak RSS "
          f"{b_mem:6.0f} MiB  ({held})")
    print(f"  ratio          : {g_cpu / b_cpu:.3f}x CPU, {g_wall / b_wall:.3f}x wall, "
          f"{g_mem / b_mem:.2f}x peak memory   (target: 1.1x or less)")


def growth(repeats: int) -> None:
    """generate and the replay over three sizes each of raters and cases; exponents."""
    def measure(cases: int, raters: int) -> tuple[float, float]:
        with tempfile.TemporaryDirectory() as tmp:
            folder, rec = Path(tmp) / "study", Path(tmp) / "rec"
            synthesise(folder, "paired", cases, raters)
            m = medians(folder, rec, repeats)
        return m["generate"][1], m["bare"][1]

    growth_table("generate", "bare", measure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=["paired", "dices", "all"], default="all")
    parser.add_argument("--raters", type=int, default=0, help="override the panel size")
    parser.add_argument("--cases", type=int, default=0, help="override the number of cases")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--growth", action="store_true", help="add the growth table")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy each study's packs here (to compare two versions)")
    args = parser.parse_args()
    for name in (["paired", "dices"] if args.study == "all" else [args.study]):
        cases, raters = SIZES[name]
        run_study(name, args.raters or raters, args.cases or cases, args.repeats, args.keep)
    if args.growth:
        growth(args.repeats)


if __name__ == "__main__":
    main()
