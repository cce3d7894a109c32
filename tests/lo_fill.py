"""Have LibreOffice itself enter answers into rater workbooks and save them as xlsx.

Run by a Python that can ``import uno`` (on Debian the system ``/usr/bin/python3`` with
``python3-uno``), never by the project's virtual environment, and imports nothing from
sheetflow::

    /usr/bin/python3 tests/lo_fill.py JOBS.json

``JOBS.json`` (UTF-8)::

    {"soffice": "/usr/bin/soffice",          # optional, default: soffice on PATH
     "profile": "/tmp/x/lo-profile",         # private profile folder (created)
     "timeout": 300,                         # seconds for the whole run
     "pid_file": "/tmp/x/soffice.pid",       # optional: the started soffice's pid
     "jobs": [{"src": "in.xlsx", "dst": "out.xlsx", "sheet": "Scoring",
               "cells": [["C12", "value", 3], ["D12", "string", "High"], ...]}]}

One headless soffice (private profile, a unique pipe, ``--norestore --nologo
--nodefault``) is started in its own process group and fills every job: load hidden
(no macros, no link updates), check each cell is unlocked when its sheet is protected
(the API itself ignores protection; a rater's keyboard does not), write it through the
cell API as a rater's entry (``value``: ``setValue``, what typing a number produces;
``string``: ``setString``, newlines, tabs and any Unicode kept), read every cell back,
``storeToURL`` with the "Calc MS Excel 2007 XML" filter, close. Then soffice is asked
to terminate and its process group (only the one this script started) is killed
whatever happens. A watchdog kills it when ``timeout`` is exceeded, so a hung call
cannot block forever.

Prints one JSON line (``{"ok": true, "files": [...], "seconds": ...}``); exit status 0
on success, 1 when a job failed, 2 on bad input.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

XLSX_FILTER = "Calc MS Excel 2007 XML"
CONNECT_SECONDS = 60  # soffice start (a fresh profile is created on first start)
TERMINATE_SECONDS = 10
NEVER_EXECUTE = 0  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
NO_UPDATE = 0  # com.sun.star.document.UpdateDocMode.NO_UPDATE
VALUE_CELL = "VALUE"  # com.sun.star.table.CellContentType
TEXT_CELL = "TEXT"


class FillError(Exception):
    """A job could not be done exactly as asked."""


def props(**values):
    """A tuple of PropertyValue (UNO's keyword arguments)."""
    out = []
    for name, value in values.items():
        prop = PropertyValue()
        prop.Name = name
        prop.Value = value
        out.append(prop)
    return tuple(out)


def file_url(path):
    return uno.systemPathToFileUrl(os.path.abspath(path))


class Office:
    """One headless soffice in its own process group, reached over a private pipe."""

    def __init__(self, soffice, profile, pid_file=None):
        os.makedirs(profile, exist_ok=True)
        self.pipe = f"sheetflow-lo-fill-{os.getpid()}-{uuid.uuid4().hex}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        # soffice's own temporary files go to a folder of ours, removed at the end.
        self.tmp = tempfile.mkdtemp(prefix="lo-fill-tmp-")
        args = [soffice, "--headless", "--invisible", "--norestore", "--nologo",
                "--nodefault", "--nolockcheck", "--nocrashreport",
                f"-env:UserInstallation={file_url(profile)}",
                f"--accept=pipe,name={self.pipe};urp;StarOffice.ComponentContext"]
        # A new session: soffice (a shell script exec'ing oosplash, which starts
        # soffice.bin) gets a process group of its own that can be killed as a whole
        # without touching any other LibreOffice on the machine.
        env = {**os.environ, "TMPDIR": self.tmp}
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     env=env)
        self.pgid = self.proc.pid
        if pid_file:
            with open(pid_file, "w", encoding="ascii") as fh:
                fh.write(str(self.pgid))
        self.desktop = None

    def connect(self, seconds):
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        url = f"uno:pipe,name={self.pipe};urp;StarOffice.ComponentContext"
        deadline = time.monotonic() + seconds
        while True:
            try:
                ctx = resolver.resolve(url)
                break
            except NoConnectException:
                if self.proc.poll() is not None:
                    raise FillError(f"soffice exited with status {self.proc.returncode} "
                                    f"before accepting a connection: {self.output()}"
                                    ) from None
                if time.monotonic() > deadline:
                    raise FillError(f"no connection to soffice within {seconds} s") from None
                time.sleep(0.1)
        self.desktop = ctx.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.Desktop", ctx)

    def output(self):
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-2000:]

    def alive(self):
        try:
            os.killpg(self.pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # pragma: no cover - not ours any more
            return False
        return True

    def kill(self):
        """Kill soffice's process group (only the one started here), then reap it."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not self.alive():
                break
            try:
                os.killpg(self.pgid, sig)
            except ProcessLookupError:
                break
            end = time.monotonic() + 3
            while self.alive() and time.monotonic() < end:
                self.proc.poll()
                time.sleep(0.05)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def close(self):
        """Ask soffice to terminate; kill its process group whatever the answer."""
        if self.desktop is not None:
            done = threading.Event()

            def terminate():
                with contextlib.suppress(Exception):  # the bridge dies with soffice
                    self.desktop.terminate()
                done.set()

            threading.Thread(target=terminate, daemon=True).start()
            done.wait(TERMINATE_SECONDS)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=TERMINATE_SECONDS)
        self.kill()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        # A killed soffice leaves its pipe's socket behind (LibreOffice puts it in
        # /tmp whatever TMPDIR says); the name is unique to this run.
        with contextlib.suppress(OSError):
            os.unlink(f"/tmp/OSL_PIPE_{os.getuid()}_{self.pipe}")


def fill_one(desktop, job):
    """Load ``job['src']``, enter its cells, save as xlsx at ``job['dst']``."""
    doc = desktop.loadComponentFromURL(
        file_url(job["src"]), "_blank", 0,
        props(Hidden=True, ReadOnly=False, MacroExecutionMode=NEVER_EXECUTE,
              UpdateDocMode=NO_UPDATE))
    if doc is None:
        raise FillError(f"LibreOffice could not load {job['src']}")
    try:
        sheets = doc.getSheets()
        if not sheets.hasByName(job["sheet"]):
            raise FillError(f"{job['src']}: no sheet {job['sheet']!r}")
        sheet = sheets.getByName(job["sheet"])
        protected = sheet.isProtected()
        for address, kind, value in job["cells"]:
            cell = sheet.getCellRangeByName(address)
            # The API writes through sheet protection; a rater's keyboard does not.
            if protected and cell.CellProtection.IsLocked:
                raise FillError(f"{job['src']}!{address} is locked on the protected "
                                f"sheet {job['sheet']!r}: a rater could not enter it")
            if kind == "value":
                cell.setValue(float(value))
            elif kind == "string":
                cell.setString(value)
            else:
                raise FillError(f"unknown cell kind {kind!r}")
        # Read every cell back: a locked cell on the protected sheet or an input
        # LibreOffice changed must fail here, not show up later as a collect error.
        for address, kind, value in job["cells"]:
            cell = sheet.getCellRangeByName(address)
            got_type = cell.getType().value
            if kind == "value":
                ok = got_type == VALUE_CELL and cell.getValue() == float(value)
                got = cell.getValue()
            else:
                ok = got_type == TEXT_CELL and cell.getString() == value
                got = cell.getString()
            if not ok:
                raise FillError(f"{job['src']}!{address}: entered {value!r} ({kind}), "
                                f"LibreOffice holds {got!r} ({got_type})")
        if os.path.exists(job["dst"]):
            os.unlink(job["dst"])
        doc.storeToURL(file_url(job["dst"]), props(FilterName=XLSX_FILTER, Overwrite=True))
    finally:
        try:  # closing must never hide the real error
            doc.close(True)
        except Exception:
            with contextlib.suppress(Exception):
                doc.dispose()
    if not os.path.exists(job["dst"]):
        raise FillError(f"LibreOffice did not write {job['dst']}")
    return len(job["cells"])


def run(spec):
    started = time.monotonic()
    soffice = spec.get("soffice") or shutil.which("soffice")
    if not soffice:
        raise FillError("soffice is not on PATH")
    timeout = float(spec.get("timeout", 300))
    office = Office(soffice, spec["profile"], spec.get("pid_file"))
    timed_out = threading.Event()

    def watchdog():
        timed_out.set()
        office.kill()  # any pending UNO call then fails with a bridge error

    timer = threading.Timer(timeout, watchdog)
    timer.daemon = True
    timer.start()
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    files = []
    try:
        office.connect(min(CONNECT_SECONDS, timeout))
        for job in spec["jobs"]:
            t0 = time.monotonic()
            cells = fill_one(office.desktop, job)
            files.append({"dst": job["dst"], "cells": cells,
                          "seconds": round(time.monotonic() - t0, 3)})
    except Exception as exc:
        if timed_out.is_set():
            raise FillError(f"timed out after {timeout:g} s ({len(files)} of "
                            f"{len(spec['jobs'])} files done)") from exc
        raise
    finally:
        timer.cancel()
        office.close()
        signal.signal(signal.SIGTERM, previous)
    return {"ok": True, "files": files, "seconds": round(time.monotonic() - started, 3)}


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as fh:
        spec = json.load(fh)
    try:
        result = run(spec)
    except Exception as exc:  # reported to the caller as JSON
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
