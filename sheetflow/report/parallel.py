"""Independent output files written by worker processes while this one goes on.

A panel of hundreds of raters gives hundreds of feedback workbooks and pairwise tables
of a million rows; written one after the other they take longer than the whole
analysis. Each such output depends only on its own arguments, so it can be written by
another interpreter: each job is pickled, as soon as it is handed in, to the least
loaded of a few ``python -c`` children (plain subprocesses, as collect's sandboxes:
spawn would re-import the caller's ``__main__`` and rerun a script that has no
``if __name__ == "__main__"`` guard), and the caller goes on meanwhile (with the rest
of the analysis, see :mod:`.overlap`, or its own outputs).
A failing job fails the whole run with the child's one-line reason; the caller's
:class:`~sheetflow.outputs.OutputSet` then discards every staged file.
"""

from __future__ import annotations

import contextlib
import pickle
import queue
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
        Number of child processes.
    weights : list of int
        Each job's expected cost (e.g. cells), used to balance the children's loads.
    meanwhile : callable
        Run in this process while the children work.

    Raises
    ------
    OutputError
        When a child fails; the message is its reason.
    """
    with WorkerPool(max(1, min(workers, len(jobs)))) as pool:
        for index in sorted(range(len(jobs)), key=lambda i: -weights[i]):  # largest first
            pool.submit(jobs[index], weights[index])
        meanwhile()
        pool.finish()


class WorkerPool:
    """Child processes that run jobs as they are handed in, each to the least loaded.

    Use as a context manager and call :meth:`finish` at the end of the block; leaving
    it by an exception stops the children instead (their staged files are then the
    caller's :class:`~sheetflow.outputs.OutputSet`'s to discard).

    Parameters
    ----------
    workers : int
        Number of child processes, started at once (their imports overlap with
        whatever the caller does next).
    """

    def __init__(self, workers: int) -> None:
        self._children = [subprocess.Popen([sys.executable, "-c", _CHILD],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE)
                          for _ in range(max(1, workers))]
        self._loads = [0] * len(self._children)
        self._queues: list[queue.SimpleQueue[Job | None]] = [
            queue.SimpleQueue() for _ in self._children]
        self._threads = ThreadPoolExecutor(max_workers=3 * len(self._children))  # pipes
        self._feeders = [self._threads.submit(_feed, child, jobs)
                         for child, jobs in zip(self._children, self._queues, strict=True)]
        self._answers = [(self._threads.submit(child.stdout.read),  # type: ignore[union-attr]
                          self._threads.submit(child.stderr.read))  # type: ignore[union-attr]
                         for child in self._children]

    def submit(self, job: Job, weight: int) -> None:
        """Hand ``job`` to the child with the least expected work so far."""
        lightest = self._loads.index(min(self._loads))
        self._loads[lightest] += max(weight, 1)
        self._queues[lightest].put(job)

    def finish(self) -> None:
        """Wait for every job; raise :class:`OutputError` with a failing child's reason."""
        for jobs in self._queues:
            jobs.put(None)
        for feeder in self._feeders:
            feeder.result()
        for child, (out, err) in zip(self._children, self._answers, strict=True):
            child.wait()
            answer = out.result().decode("utf-8", "replace").strip().splitlines()
            if child.returncode != 0 or answer[-1:] != [_OK]:
                reason = answer or err.result().decode("utf-8", "replace").strip().splitlines()
                raise OutputError("an output writer failed: "
                                  + (reason[-1] if reason else f"exit {child.returncode}"))

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is not None:
            for child in self._children:
                child.kill()
            for jobs in self._queues:
                jobs.put(None)
        for child in self._children:
            child.wait()
        self._threads.shutdown(wait=True)


def _feed(child: subprocess.Popen[bytes], jobs: queue.SimpleQueue[Job | None]) -> None:
    """Pickle each queued job into the child's stdin until ``None``, then close it."""
    stdin = child.stdin
    assert stdin is not None
    try:
        while (job := jobs.get()) is not None:
            pickle.dump(job, stdin, protocol=5)
            stdin.flush()
    except (BrokenPipeError, OSError):  # the child stopped; its answer says why
        while jobs.get() is not None:
            pass
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


def _worker() -> None:
    """Child: run each pickled job from stdin until it closes; answer ``ok`` or the
    first failure, one line (and stop there)."""
    stdin = sys.stdin.buffer
    while True:
        try:
            job = pickle.load(stdin)
        except EOFError:
            break
        answer = _run_chunk([job])
        if answer != _OK:
            sys.stdout.write(answer + "\n")
            return
    sys.stdout.write(_OK + "\n")


def _run_chunk(chunk: list[Job]) -> str:
    for write, args, path in chunk:
        try:
            write(*args, path)
        except Exception as exc:  # reported to the parent as one line, never a traceback
            final = Path(path).name.lstrip(".").rsplit(".", 2)[0]  # .NAME.PID.partial
            return f"{final}: {type(exc).__name__}: {exc}".replace("\n", " ")
    return _OK
