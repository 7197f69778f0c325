"""A throwaway PostgreSQL server for tests and local distributed sweeps.

Starts Debian's PostgreSQL (``/usr/lib/postgresql/<v>/bin``) in a temporary
directory on a free loopback port, with trust authentication, and stops and
removes it afterwards. ``initdb`` refuses to run as root, so as root the
server runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ._errors import HarnessError, PostgresUnavailable

__all__ = ["PostgresUnavailable", "find_postgres_bin", "postgres_server"]


def find_postgres_bin() -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding ``initdb`` and ``pg_ctl``."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if not candidates:
        raise PostgresUnavailable(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; "
            "install them with: apt-get install -y postgresql"
        )
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_user(command: list[str], user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--", *command] if user else command


@contextmanager
def postgres_server(*, database: str = "loopguard") -> Iterator[str]:
    """Run a private PostgreSQL server; yield its SQLAlchemy URL.

    Examples
    --------
    >>> with postgres_server() as url:  # doctest: +SKIP
    ...     optuna.create_study(storage=url)
    """
    bin_dir = find_postgres_bin()
    user = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="loopguard-pg-"))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    if user:
        entry = pwd.getpwnam(user)
        for path in (root, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    log = root / "server.log"

    def run(command: list[str]) -> None:
        subprocess.run(
            _as_user(command, user), check=True, capture_output=True, text=True, cwd=root
        )

    try:
        run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
            + ["-E", "UTF8", "--no-sync"]
        )
        options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options]
            + ["-w", "-t", "60", "start"]
        )
        run(
            [
                str(bin_dir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                database,
            ]
        )
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/{database}"
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip()
        server_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise HarnessError(
            f"PostgreSQL failed: {' '.join(exc.cmd)}\n{detail}\n{server_log}"
        ) from exc
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_user(
                    [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                    user,
                ),
                capture_output=True,
            )
        shutil.rmtree(root, ignore_errors=True)
