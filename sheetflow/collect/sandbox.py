"""The sandbox: a parser runs in child processes with an address-space limit and a
timeout, so that a file which aborts or exhausts its reader costs that file alone.

python-calamine aborts the whole process (SIGABRT) on a cell at XFD1048576 and
openpyxl can exhaust memory (EXCEL-FACTS.md, R4); :mod:`sheetflow.collect.safety`
refuses what it can name before any parser runs, and this module contains the rest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from .._gc import collector_paused
from .safety import Limits, short_message


@dataclass(frozen=True)
class Outcome:
    """The result of one sandboxed job: ``value`` when ``ok``, else ``reason``.

    ``kind`` is ``"ok"``, ``"error"`` (the parser raised), or ``"aborted"`` (the
    child died, hit the memory limit, or ran out of time).
    """

    kind: str
    value: Any = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        """Whether the job returned a value."""
        return self.kind == "ok"


def _worker(read_fd: int, write_fd: int, target_name: str, memory_bytes: int,
            forked: bool = False) -> None:
    """Child process loop: limit memory, then run jobs until told to stop.

    ``memory_bytes`` is the address space the child may have; a ``forked`` child
    may have that much on top of the address space it inherits.
    """
    import importlib
    import resource

    if forked:
        memory_bytes += _address_space()
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    module, _, name = target_name.partition(":")
    target = getattr(importlib.import_module(module), name)
    jobs, results = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    while True:
        try:
            job = jobs.recv()
        except EOFError:
            return
        if job is None:
            return
        # the collector waits until the result is sent and dropped: a job builds some
        # 10^5 objects that live until then, and the young collection at the end of
        # the pause would otherwise traverse them all (a tenth of a 500-case check)
        with collector_paused():
            _run_job(target, job, results)


def _run_job(target: Callable[[Any], Any], job: Any, results: Connection) -> None:
    """Run one job and send its outcome."""
    try:
        results.send(Outcome("ok", target(job)))
    except MemoryError:
        results.send(Outcome("aborted", reason="memory limit reached"))
    except Exception as exc:  # any parser failure becomes a reason, never a crash
        results.send(Outcome("error", reason=f"{type(exc).__name__}: {short_message(exc)}"))


_CHILD = "import sys; from sheetflow.collect.sandbox import _worker; _worker(*{args!r})"


def _address_space() -> int:
    """This process's mapped address space in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _can_fork() -> bool:
    """Whether a child may be forked from this process rather than started afresh.

    Only on Linux (RLIMIT_AS over /proc's account of the address space), and only
    while this process runs a single thread: a fork copies the calling thread alone,
    and a lock another thread held would stay held in the child for good.
    """
    import threading

    return sys.platform.startswith("linux") and threading.active_count() == 1 and \
        os.path.exists("/proc/self/statm")


class _Forked:
    """A forked child, with the parts of :class:`subprocess.Popen` the slots use."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            time.sleep(0.005)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


_PARENT_ENDS: set[int] = set()  # the pipe ends the parent holds, closed in each fork


class _Slot:
    """One child process and the job it runs.

    The child is a fork of this process when that is safe (:func:`_can_fork`): it
    starts in milliseconds with every module and the study already loaded, so a
    collect of a few small returns does not pay for fresh interpreters. Otherwise it
    is a fresh interpreter, a plain subprocess rather than multiprocessing's spawn:
    spawn re-imports the caller's ``__main__``, which would rerun any script that
    calls collect without an ``if __name__ == "__main__"`` guard. Either way the
    child has its own memory limit and dies alone.
    """

    def __init__(self, target_name: str, limits: Limits):
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        if _can_fork():
            self.process: Any = _fork((job_r, res_w), (job_w, res_r), target_name,
                                      limits.memory_bytes)
        else:
            code = _CHILD.format(args=(job_r, res_w, target_name, limits.memory_bytes))
            self.process = subprocess.Popen([sys.executable, "-c", code],
                                            pass_fds=(job_r, res_w), close_fds=True)
        os.close(job_r)
        os.close(res_w)
        _PARENT_ENDS.update((job_w, res_r))
        self.jobs = Connection(job_w, readable=False)
        self.conn = Connection(res_r, writable=False)
        self.job: int | None = None
        self.started = 0.0

    def give(self, index: int, job: Any) -> None:
        self.job, self.started = index, time.monotonic()
        self.jobs.send(job)

    def stop(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.jobs.send(None)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._close()

    def _close(self) -> None:
        for conn in (self.jobs, self.conn):
            if not conn.closed:
                _PARENT_ENDS.discard(conn.fileno())
            with contextlib.suppress(OSError):
                conn.close()


def _fork(ends: tuple[int, int], parent_ends: tuple[int, int], target_name: str,
          memory_bytes: int) -> _Forked:
    """Fork a child that runs :func:`_worker` on its two pipe ``ends`` (jobs in,
    results out), then exits."""
    pid = os.fork()
    if pid:
        return _Forked(pid)
    code = 1
    try:
        # the parent's ends, its own and the other slots': a child holding them would
        # keep those pipes open (and wait for jobs forever once the parent is gone)
        for fd in {*_PARENT_ENDS, *parent_ends}:
            with contextlib.suppress(OSError):
                os.close(fd)
        import faulthandler

        faulthandler.disable()  # a parser's abort is reported by the parent, once
        _worker(*ends, target_name, memory_bytes, forked=True)
        code = 0
    finally:
        os._exit(code)  # never the parent's cleanup (atexit, buffers, temp files)


class Sandbox:
    """Run ``target(job)`` for many jobs in child processes with memory and time limits.

    Parameters
    ----------
    target : callable
        A module-level function (it is imported by name in each child); it must
        return picklable data.
    limits : Limits, optional
        ``memory_bytes`` (RLIMIT_AS per child) and ``timeout_seconds`` (per job).
    workers : int
        Number of child processes.

    Notes
    -----
    Children are fresh interpreters (``sys.executable -c``) reused across jobs; a child that dies
    (SIGABRT, SIGKILL) or overruns the timeout is replaced and its job reported as
    ``aborted``. The other jobs are unaffected.
    """

    def __init__(self, target: Callable[[Any], Any], limits: Limits | None = None,
                 workers: int = 1):
        self.target = target
        self.limits = limits or Limits()
        self.workers = max(1, workers)
        self._target_name = f"{target.__module__}:{target.__qualname__}"

    def run(self, jobs: Sequence[Any]) -> list[Outcome]:
        """Run every job; the outcomes are in the order of ``jobs``.

        Parameters
        ----------
        jobs : sequence
            Picklable arguments, one per call of ``target``.

        Returns
        -------
        list of Outcome
        """
        results: list[Outcome | None] = [None] * len(jobs)
        for index, outcome in self.imap(jobs):
            results[index] = outcome
        return [r if r is not None else Outcome("aborted", reason="not run") for r in results]

    def imap(self, jobs: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        """Run every job; yield ``(index in jobs, outcome)`` as each one finishes.

        The caller can handle (and drop) each result while the children work on the
        next jobs, so it never holds every result at once.

        Parameters
        ----------
        jobs : sequence
            Picklable arguments, one per call of ``target``.

        Yields
        ------
        (int, Outcome)
        """
        pending = list(range(len(jobs)))[::-1]
        slots = [self._new_slot() for _ in range(min(self.workers, len(jobs)))]
        try:
            for slot in slots:
                if pending:
                    index = pending.pop()
                    slot.give(index, jobs[index])
            while any(slot.job is not None for slot in slots):
                yield from self._collect_one_round(slots, jobs, pending)
        finally:
            for slot in slots:
                slot.stop()

    def _new_slot(self) -> _Slot:
        return _Slot(self._target_name, self.limits)

    def _collect_one_round(self, slots: list[_Slot], jobs: Sequence[Any],
                           pending: list[int]) -> list[tuple[int, Outcome]]:
        busy = [s for s in slots if s.job is not None]
        waitables: list[Any] = [s.conn for s in busy]
        ready = wait(waitables, timeout=self._time_left(busy))
        done = []
        for i, slot in enumerate(slots):
            if slot.job is None:
                continue
            outcome = self._outcome_of(slot, ready)
            if outcome is None:
                continue
            done.append((slot.job, outcome))
            slot.job = None
            if outcome.kind == "aborted":
                slot.kill()
                slot = slots[i] = self._new_slot()
            if pending:
                index = pending.pop()
                slot.give(index, jobs[index])
        return done

    def _time_left(self, busy: list[_Slot]) -> float:
        now = time.monotonic()
        return max(0.05, min(s.started + self.limits.timeout_seconds - now for s in busy))

    def _outcome_of(self, slot: _Slot, ready: list[Any]) -> Outcome | None:
        """The finished job's outcome, or None while it is still running."""
        if slot.conn in ready:
            try:
                return slot.conn.recv()
            except (EOFError, OSError):
                pass
        if slot.conn in ready:
            try:
                code = slot.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            return Outcome("aborted", reason=_death_reason(code))
        if time.monotonic() - slot.started > self.limits.timeout_seconds:
            return Outcome("aborted",
                           reason=f"time limit of {self.limits.timeout_seconds:g} s reached")
        return None


def _death_reason(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the reader process was killed by {name}, usually an out-of-memory abort"
    return f"the reader process exited unexpectedly (code {exitcode})"
