"""Independent output files written by worker processes while this one goes on.

A panel of hundreds of raters gives hundreds of feedback workbooks and pairwise tables
of a million rows; written one after the other they take longer than the whole
analysis. Each such output depends only on its own arguments, so it can be written by
another interpreter: the jobs are split into balanced chunks, each chunk is pickled
to a fresh ``python -c`` child (a plain subprocess, as collect's sandboxes: spawn
would re-import the caller's ``__main__`` and rerun a script that has no
``if __name__ == "__main__"`` guard), and the caller writes its own outputs meanwhile.
A failing job fails the whole run with the child's one-line reason; the caller's
:class:`~sheetflow.outputs.OutputSet` then discards every staged file.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..outputs import OutputError

Job = tuple[Callable[..., Any], tuple[Any, ...], Path]
_CHILD = "from sheetflow.report.parallel import _worker; _worker()"
_OK = "ok"


def run_jobs(jobs: list[Job], workers: int, weights: list[int],
             meanwhile: Callable[[], None]) -> None:
    """Run each job ``write(*args, path)`` in ``workers`` child processes.

    Parameters
    ----------
    jobs : list of (callable, tuple, pathlib.Path)
        Module-level functions and picklable arguments.
    workers : int
        Number of child processes (each gets one chunk).
    weights : list of int
        Each job's expected cost (e.g. cells), used to balance the chunks.
    meanwhile : callable
        Run in this process while the children work.

    Raises
    ------
    OutputError
        When a child fails; the message is its reason.
    """
    chunks = _balanced(jobs, weights, workers)
    children = [subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in chunks]
    with ThreadPoolExecutor(max_workers=len(children)) as feeders:  # pipes, not the GIL
        done = [feeders.submit(child.communicate, pickle.dumps(chunk, protocol=5))
                for child, chunk in zip(children, chunks, strict=True)]
        try:
            meanwhile()
        finally:
            results = [future.result() for future in done]
    for child, (out, err) in zip(children, results, strict=True):
        answer = out.decode("utf-8", "replace").strip().splitlines()
        if child.returncode != 0 or answer[-1:] != [_OK]:
            reason = answer or err.decode("utf-8", "replace").strip().splitlines()
            raise OutputError("an output writer failed: "
                              + (reason[-1] if reason else f"exit {child.returncode}"))


def _balanced(jobs: list[Job], weights: list[int], workers: int) -> list[list[Job]]:
    """Jobs in ``workers`` chunks of similar weight (largest first to the lightest)."""
    chunks: list[list[Job]] = [[] for _ in range(max(1, min(workers, len(jobs))))]
    loads = [0] * len(chunks)
    for index in sorted(range(len(jobs)), key=lambda i: -weights[i]):
        lightest = loads.index(min(loads))
        chunks[lightest].append(jobs[index])
        loads[lightest] += max(weights[index], 1)
    return chunks


def _worker() -> None:
    """Child: run the pickled chunk on stdin; answer ``ok`` or the failure, one line."""
    chunk = pickle.loads(sys.stdin.buffer.read())
    sys.stdout.write(_run_chunk(chunk) + "\n")


def _run_chunk(chunk: list[Job]) -> str:
    for write, args, path in chunk:
        try:
            write(*args, path)
        except Exception as exc:  # reported to the parent as one line, never a traceback
            final = Path(path).name.lstrip(".").rsplit(".", 2)[0]  # .NAME.PID.partial
            return f"{final}: {type(exc).__name__}: {exc}".replace("\n", " ")
    return _OK
