"""Independent output files written by worker processes while this one goes on.

A panel of hundreds of raters gives hundreds of feedback workbooks and pairwise tables
of a million rows; written one after the other they take longer than the whole
analysis. Each such output depends only on its own arguments, so it can be written by
another interpreter: jobs are queued as they are handed in, heaviest first, and each
of a few ``python -c`` children (plain subprocesses, as collect's sandboxes: spawn
would re-import the caller's ``__main__`` and rerun a script that has no
``if __name__ == "__main__"`` guard) is sent the next one, pickled, whenever it is
free. The caller goes on meanwhile (with the rest of the analysis, see
:mod:`.overlap`, or its own outputs).
A failing job fails the whole run with the error it would have raised in this process
(an operating-system error naming the output, a :class:`~sheetflow.errors.WriteError`,
else the child's one-line reason); the caller's :class:`~sheetflow.staging.OutputSet`
then discards every staged file.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import pickle
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..collect.outputs import OutputError
from ..errors import WriteError

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
    OSError, WriteError
        When a child could not write its output: the error it raised, naming the
        file as the same failure in this process would (a write that names no file,
        as on a full disk, by the output's final path).
    OutputError
        When a child fails otherwise; the message is its reason.
    """
    with WorkerPool(max(1, min(workers, len(jobs)))) as pool:
        for index in sorted(range(len(jobs)), key=lambda i: -weights[i]):  # largest first
            pool.submit(jobs[index], weights[index])
        meanwhile()
        pool.finish()


class WorkerPool:
    """Child processes that take the largest waiting job whenever one is free.

    Each child gets one job at a time and answers when it is done, so the loads
    balance themselves however unevenly the jobs arrive (a feedback workbook is 10 ms,
    a pairwise table several seconds). Use as a context manager and call
    :meth:`finish` at the end of the block; leaving it by an exception stops the
    children instead (their staged files are then the caller's
    :class:`~sheetflow.staging.OutputSet`'s to discard).

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
        self._waiting: queue.PriorityQueue[tuple[float, int, Job | None]] = \
            queue.PriorityQueue()
        self._order = itertools.count()  # equal weights keep their order
        self._failed = threading.Event()
        self._threads = ThreadPoolExecutor(max_workers=2 * len(self._children))  # pipes
        self._errors = [self._threads.submit(child.stderr.read)  # type: ignore[union-attr]
                        for child in self._children]
        self._feeders = [self._threads.submit(self._feed, child) for child in self._children]

    @property
    def size(self) -> int:
        """The number of child processes."""
        return len(self._children)

    def submit(self, job: Job, weight: int) -> None:
        """Queue ``job``; the next free child takes the heaviest job waiting."""
        self._waiting.put((-float(weight), next(self._order), job))

    def finish(self) -> None:
        """Wait for every job; raise a failing child's error (:func:`run_jobs`)."""
        for _ in self._children:
            self._waiting.put((math.inf, next(self._order), None))  # after every job
        failures = [feeder.result() for feeder in self._feeders]
        for child, failure, err in zip(self._children, failures, self._errors, strict=True):
            child.wait()
            if failure:
                raise _error_of(failure)
            if failure is not None:  # the child died without saying why
                reason = (err.result().decode("utf-8", "replace").strip().splitlines()
                          or [f"exit {child.returncode}"])[-1]
                raise OutputError(f"an output writer failed: {reason}")

    def _feed(self, child: subprocess.Popen[bytes]) -> str | None:
        """Hand ``child`` one job at a time until the end; ``None``, or the failure
        (``""`` when the child died without saying why)."""
        stdin, stdout = child.stdin, child.stdout
        assert stdin is not None and stdout is not None
        try:
            while not self._failed.is_set():
                job = self._waiting.get()[2]
                if job is None:
                    return None
                pickle.dump(job, stdin, protocol=5)
                stdin.flush()
                answer = stdout.readline().decode("utf-8", "replace").strip()
                if answer != _OK:
                    self._failed.set()
                    return answer
            return None
        except OSError:  # the child died; its stderr may say why
            self._failed.set()
            return ""
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is not None:
            self._failed.set()
            for child in self._children:
                child.kill()
            for _ in self._children:
                self._waiting.put((math.inf, next(self._order), None))
        for child in self._children:
            child.wait()
        self._threads.shutdown(wait=True)


def _worker() -> None:
    """Child: run each pickled job from stdin until it closes, answering ``ok`` after
    each, or the failure in one line (and stopping there)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout
    sys.stdout = sys.stderr  # anything a job prints stays off the answer channel
    while True:
        try:
            job = pickle.load(stdin)
        except EOFError:
            return
        answer = _run_job(job)
        stdout.write(answer + "\n")
        stdout.flush()
        if answer != _OK:
            return


def _run_job(job: Job) -> str:
    """``ok``, or the job's failure as one line of JSON (:func:`_error_of` reads it)."""
    write, args, path = job
    try:
        write(*args, path)
    except OSError as exc:
        if exc.errno is None:
            return _reason(path, exc)
        # the parent raises it again, so that it is told as this process tells its own;
        # one that names no file (a full disk) names the output, as staging.naming does
        named = _path_text(exc.filename) if exc.filename is not None else \
            os.fspath(Path(path).with_name(_final_name(path)))
        return json.dumps({"errno": exc.errno, "strerror": exc.strerror,
                           "filename": named, "filename2": _path_text(exc.filename2)})
    except WriteError as exc:  # already names the output and what to do
        return json.dumps({"write_error": str(exc)})
    except Exception as exc:  # reported to the parent as one line, never a traceback
        return _reason(path, exc)
    return _OK


def _reason(path: str | Path, exc: Exception) -> str:
    """An unforeseen failure, as the line the parent says after "an output writer
    failed:"."""
    return json.dumps({"reason": f"{_final_name(path)}: {type(exc).__name__}: {exc}"})


def _path_text(filename: Any) -> str | None:
    """A path an operating-system error names, as text (it may be bytes or a number)."""
    return None if filename is None else os.fsdecode(filename) \
        if isinstance(filename, (str, bytes, os.PathLike)) else str(filename)


def _error_of(failure: str) -> Exception:
    """The error a child's failure line stands for, to be raised in the parent."""
    said = json.loads(failure)
    if "errno" in said:
        return OSError(said["errno"], said["strerror"], said["filename"], None,
                       said["filename2"])
    if "write_error" in said:
        return WriteError(said["write_error"])
    return OutputError(f"an output writer failed: {said['reason']}")


def _final_name(path: str | Path) -> str:
    """The output's own name from its staged one (``.NAME.PID-TAG[.pK].partial``)."""
    staged = re.fullmatch(r"\.(.+)\.\d+(?:-[0-9a-f]+)?(?:\.p\d+)?\.partial", Path(path).name)
    return staged.group(1) if staged else Path(path).name
