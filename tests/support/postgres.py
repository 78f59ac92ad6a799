"""A real PostgreSQL server for the results store's tests (docs/history.md).

Debian's ``postgresql`` package (scripts/install-test-deps.sh installs it as root): a cluster made
by its ``initdb`` in a temporary directory and its ``postgres`` started on a free port of
127.0.0.1, as the ``postgres`` user when the suite runs as root (the server refuses root), with
trust authentication (a URL's password is taken and never checked, so the tests can show that
none is printed) and without fsync (a test's data need not survive a crash). Each test takes a
database of its own; the server stops, and its directory goes, when its tests end.

``PostgresServers.server()`` starts it on first use and skips, saying how to get it, where the
package or psycopg is missing; under CI=true a skip fails the run (tests/conftest.py).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

MISSING = "Debian's postgresql package is not installed: run scripts/install-test-deps.sh as root"
PASSWORD = "s3cret-never-shown"  # in every test database's URL: no output may ever hold it


def bindir() -> Path | None:
    """The newest installed server's programs: Debian keeps them off PATH, in
    /usr/lib/postgresql/VERSION/bin; elsewhere they are on PATH."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PostgresServer:
    """One cluster and its server process."""

    def __init__(self, programs: Path) -> None:
        import psycopg

        self._psycopg = psycopg
        self.root = Path(tempfile.mkdtemp(prefix="llmload-postgres-"))
        self.port = _free_port()
        self._databases = 0
        user = "postgres" if os.geteuid() == 0 else None
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        data, self.log = self.root / "data", self.root / "postgres.log"
        initdb = [str(programs / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*initdb, "--no-sync", "-E", "UTF8", "--locale=C"],
            user=user,
            cwd=self.root,
            capture_output=True,
            check=True,
            timeout=120,
        )
        settings = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=50")
        where = ("-p", str(self.port), "-h", "127.0.0.1", "-k", str(self.root))
        options = [a for setting in settings for a in ("-c", setting)]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [str(programs / "postgres"), "-D", str(data), *where, *options],
                user=user,
                cwd=self.root,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self._wait_ready()

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://postgres:{password}@127.0.0.1:{self.port}/{database}"

    def _wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"postgres exited ({self.proc.returncode}): {self.log.read_text()[-2000:]}"
                )
            try:
                self._psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except self._psycopg.OperationalError:
                time.sleep(0.1)
        raise TimeoutError(f"postgres not ready in {timeout_s:g} s: {self.log.read_text()[-2000:]}")

    def database(self) -> str:
        """A new, empty database; its URL, with a password."""
        self._databases += 1
        name = f"store_{self._databases}"
        with self._psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # a fast shutdown: open connections are closed
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class PostgresServers:
    """At most one server per module, started by the first test that asks for it."""

    def __init__(self) -> None:
        self._server: PostgresServer | None = None

    def server(self) -> PostgresServer:
        if self._server is None:
            programs = bindir()
            if programs is None:
                pytest.skip(MISSING)
            pytest.importorskip("psycopg", reason="psycopg is not installed: make test-venv")
            self._server = PostgresServer(programs)
        return self._server

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
