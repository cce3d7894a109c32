"""Real mail servers on 127.0.0.1 for the tests: aiosmtpd (SMTP) and Dovecot (IMAP).

Each is started by the test on a free port and stopped after it. A part that is missing
skips the test on a developer's machine and fails it under CI (``CI`` set), where
``.ci/run`` installs Dovecot and ``pip install -e ".[test]"`` installs aiosmtpd.
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import pwd
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def require(why_missing: str | None) -> None:
    """Skip when a real part is missing, but fail under CI, which must have it."""
    if why_missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{why_missing}; under CI these tests must run (.ci/run installs it)")
    pytest.skip(why_missing)


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, read, closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert file, key file)."""
    require(None if shutil.which("openssl") else "openssl is not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


# --------------------------------------------------------------------------- SMTP


@dataclass
class Delivered:
    """One message the SMTP server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    content: bytes


@dataclass
class Recorder:
    """An aiosmtpd handler that keeps what it is given and refuses what it is told to."""

    delivered: list[Delivered] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)
    drop_after: set[str] = field(default_factory=set)
    """Recipients whose message is kept, then the connection cut before the answer."""

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address in self.refuse:
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.delivered.append(Delivered(envelope.mail_from, list(envelope.rcpt_tos),
                                        envelope.content))
        if self.drop_after & set(envelope.rcpt_tos):
            server.transport.abort()  # delivered, but the 250 never reaches the client
        return "250 2.0.0 queued as test"


@contextlib.contextmanager
def smtp_server(*, tls: ssl.SSLContext | None = None,
                login: tuple[str, str] | None = None,
                busy: int = 0) -> Iterator[tuple[int, Recorder]]:
    """An SMTP server on 127.0.0.1 (STARTTLS offered with ``tls``; AUTH required with
    ``login`` as (user, password)); yields (port, recorder). Its first ``busy``
    authentication attempts are answered "454 4.7.0 Temporary authentication failure",
    as a server whose sign-in service is overloaded answers them."""
    try:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult
    except ImportError:
        require("aiosmtpd is not installed (pip install -e '.[test]')")
        raise
    recorder = Recorder()
    options: dict[str, Any] = {}
    if tls is not None:
        options.update(tls_context=tls, require_starttls=True)
    if login is not None:
        attempts = []

        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str,
                         data: Any) -> Any:
            attempts.append(mechanism)
            if len(attempts) <= busy:
                return AuthResult(success=False, handled=False,
                                  message="454 4.7.0 Temporary authentication failure")
            ok = (data.login.decode(), data.password.decode()) == login
            return AuthResult(success=ok, handled=False)
        options.update(authenticator=authenticate, auth_required=True,
                       auth_require_tls=tls is not None)
    port = free_port()
    controller = Controller(recorder, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield port, recorder
    finally:
        controller.stop()


@contextlib.contextmanager
def cutting_proxy(upstream: int, cut_after: int) -> Iterator[int]:
    """A TCP proxy on 127.0.0.1 in front of the server on port ``upstream``; yields its
    port. It passes the client's first ``cut_after`` bytes on, then stops reading (its
    small receive buffer fills, so the rest of what the client wrote is never
    acknowledged) and resets both connections: a line cut in the middle of a message."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # inherited on accept
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                client, _ = listener.accept()
                server = socket.create_connection(("127.0.0.1", upstream))
                threading.Thread(target=_pipe, args=(client, server, cut_after),
                                 daemon=True).start()
                threading.Thread(target=_pipe, args=(server, client, 0), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        listener.close()


def _pipe(source: socket.socket, sink: socket.socket, limit: int) -> None:
    """Copy ``source`` to ``sink``; with ``limit``, only that many bytes, then reset."""
    passed = 0
    with contextlib.suppress(OSError):
        while data := source.recv(1024):
            if limit and passed + len(data) >= limit:
                sink.sendall(data[:limit - passed])
                time.sleep(0.5)  # the client writes on into the full window
                break
            sink.sendall(data)
            passed += len(data)
    # the side read from is reset, as by a line that dropped (no orderly close); the
    # other is shut down, which wakes the thread reading it
    with contextlib.suppress(OSError):
        source.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    source.close()
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_RDWR)
    sink.close()


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


# --------------------------------------------------------------------------- IMAP

_DOVECOT_CONF = """\
protocols = imap
listen = 127.0.0.1
base_dir = {tmp}/run
state_dir = {tmp}/run
log_path = {tmp}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{tmp}/mail/%u
default_internal_user = dovecot
default_login_user = dovenull
default_internal_group = dovecot
first_valid_uid = 100
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {tmp}/users
}}
userdb {{
  driver = static
  args = uid=dovecot gid=dovecot home={tmp}/mail/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
"""


def dovecot_missing() -> str | None:
    """Why a private Dovecot cannot run here, or None when it can."""
    if shutil.which("dovecot") is None:
        return "dovecot is not installed (Debian: dovecot-imapd)"
    if os.geteuid() != 0:
        return "a private Dovecot instance needs root here (its mail user is dovecot)"
    try:
        pwd.getpwnam("dovecot")
        pwd.getpwnam("dovenull")
    except KeyError:
        return "the dovecot and dovenull users are missing"
    return None


@dataclass
class Dovecot:
    """A running private Dovecot: its port, one user and its password."""

    folder: Path
    port: int
    user: str = "coord"
    password: str = "imap-secret-for-test"

    def client(self, seconds: float = 30.0) -> imaplib.IMAP4:
        """A logged-in client. A login the server cannot check for now (UNAVAILABLE: its
        auth process busy on a loaded machine, which has lasted over 3 s) is tried again
        for up to ``seconds``; if it never passes, the error quotes the server's log."""
        client = imaplib.IMAP4("127.0.0.1", self.port, timeout=30)
        end = time.monotonic() + seconds
        while True:
            try:
                client.login(self.user, self.password)
                return client
            except imaplib.IMAP4.error as exc:
                if "UNAVAILABLE" not in str(exc):
                    client.logout()
                    raise
                if time.monotonic() >= end:
                    client.logout()
                    raise imaplib.IMAP4.error(f"{exc} for {seconds:g} s; the server's log "
                                              f"ends: {self.log_tail()}") from None
                time.sleep(0.5)

    def log_tail(self, lines: int = 12) -> str:
        """The last lines of the server's log (to tell why a login failed)."""
        log = self.folder / "dovecot.log"
        text = log.read_text(errors="replace") if log.exists() else "(no log)"
        return " | ".join(text.splitlines()[-lines:])

    def append(self, message: bytes) -> None:
        """Put one message in the user's INBOX (unread)."""
        client = self.client()
        try:
            typ, data = client.append("INBOX", "", imaplib.Time2Internaldate(time.time()),
                                      message)
            assert typ == "OK", data
        finally:
            client.logout()

    def unseen(self) -> int:
        """How many messages of the INBOX are unread."""
        client = self.client()
        try:
            client.select("INBOX", readonly=True)
            typ, data = client.search(None, "UNSEEN")
            assert typ == "OK", data
            return len(data[0].split())
        finally:
            client.logout()


@contextlib.contextmanager
def dovecot_server() -> Iterator[Dovecot]:
    """Start Dovecot from a config in a folder of its own; stop it (and wait for it)
    and remove the folder after.

    The folder is a new one in the system's temporary folder, not under pytest's: the
    mail processes (user dovecot) must reach it, and pytest sets its own root folder
    back to 0700 whenever a pytest process starts, so a parent opened up for them
    could close in the middle of a test.
    """
    require(dovecot_missing())
    with tempfile.TemporaryDirectory(prefix="sheetflow-dovecot-") as work:
        folder = Path(work)
        folder.chmod(0o755)
        with _dovecot_in(folder) as server:
            yield server


@contextlib.contextmanager
def _dovecot_in(folder: Path) -> Iterator[Dovecot]:
    server = Dovecot(folder, free_port())
    (folder / "run").mkdir()
    (folder / "mail").mkdir()
    shutil.chown(folder / "mail", "dovecot", "dovecot")
    (folder / "users").write_text(f"{server.user}:{{PLAIN}}{server.password}\n")
    conf = folder / "dovecot.conf"
    conf.write_text(_DOVECOT_CONF.format(tmp=folder, port=server.port))
    # it daemonises: its children would hold captured pipes open, so output goes to a file
    with (folder / "start.log").open("wb") as log:
        subprocess.run(["dovecot", "-c", str(conf)], check=True, stdin=subprocess.DEVNULL,
                       stdout=log, stderr=log)
    pid_file = folder / "run" / "master.pid"
    try:
        _wait_for(server.port, pid_file)
        _wait_for_login(server)
        yield server
    finally:
        _stop(pid_file)


def _wait_for(port: int, pid_file: Path, seconds: float = 20.0) -> None:
    """Until the port accepts and the pid file is written (it comes after the port)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pid_file.exists():
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port),
                                                                        1):
                return
        time.sleep(0.1)
    raise RuntimeError(f"dovecot did not start on port {port}")


def _wait_for_login(server: Dovecot, seconds: float = 20.0) -> None:
    """Until a login succeeds: the port opens before the auth process is ready, and a
    login in between fails with "[UNAVAILABLE] Temporary authentication failure"."""
    end = time.monotonic() + seconds
    while True:
        try:
            server.client().logout()
            return
        except (imaplib.IMAP4.error, OSError) as exc:
            if time.monotonic() >= end:
                raise RuntimeError(f"dovecot on port {server.port} refused every login: "
                                   f"{exc}") from None
            time.sleep(0.2)


def _stop(pid_file: Path) -> None:
    """Stop the master whose pid is in ``pid_file`` and wait until it has exited."""
    end = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < end:
        time.sleep(0.1)
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().strip())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
