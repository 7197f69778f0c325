"""Where a study lives, and the locks that keep its trial budget exact.

* **journal** (default): Optuna's journal file storage, ``RUN_DIR/journal.log``.
  Every operation is one appended, fsynced line, so several local worker
  processes can share it and a process killed with SIGKILL loses no finished
  trial. (SQLite is not safe with parallel workers: Optuna 5 can lose trials.)
* **rdb**: ``--storage postgresql://...`` (or another SQLAlchemy URL): workers
  on several machines share one study. Heartbeats are on: a trial whose worker
  stopped beating for ``grace_period`` seconds is marked failed and re-queued
  with the same parameters (``RetryFailedTrialCallback``).

The budget lock serialises "count the trials, then start one" across workers
(a file lock for the journal, a PostgreSQL advisory lock for PostgreSQL,
``GET_LOCK`` for MySQL), so that N workers stop at exactly the budget and a
grid point is never claimed twice. The run-folder lock keeps two commands off
one run folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ._experiment import SweepError

__all__ = [
    "BudgetLock",
    "RunDirLock",
    "StorageSpec",
    "recover_orphans",
    "redact_url",
    "storage_spec",
]

#: Seconds between heartbeats of a running trial (RDB storage).
HEARTBEAT_INTERVAL = 10
#: Seconds without a heartbeat after which a running trial is failed and retried.
GRACE_PERIOD = 60
#: Retries of one failed trial (a trial whose worker died) before it is left failed.
MAX_RETRY = 3


def redact_url(url: str) -> str:
    """``url`` without its password (for manifests and messages).

    Examples
    --------
    >>> redact_url("postgresql://bob:secret@db:5432/optuna?sslmode=require")
    'postgresql://bob@db:5432/optuna?sslmode=require'
    >>> redact_url("postgresql+psycopg2://:pw@db/x")
    'postgresql+psycopg2://db/x'
    """
    from sqlalchemy.engine import URL, make_url

    try:
        parsed = make_url(url)
    except Exception:  # an unparsable URL is shown without anything before "@"
        return url.split("://", 1)[0] + "://" + url.split("@")[-1] if "@" in url else url
    clean = URL.create(
        parsed.drivername,
        username=parsed.username or None,
        password=None,
        host=parsed.host,
        port=parsed.port,
        database=parsed.database,
        query=parsed.query,
    )
    return clean.render_as_string(hide_password=False)


@dataclass(frozen=True)
class StorageSpec:
    """How to open a study's storage (picklable, for worker processes)."""

    kind: str  # "journal" or "rdb"
    path: str | None = None
    url: str | None = None
    heartbeat_interval: int = HEARTBEAT_INTERVAL
    grace_period: int = GRACE_PERIOD

    @property
    def dialect(self) -> str | None:
        """The SQLAlchemy dialect of an RDB URL (``postgresql``, ``mysql``, ``sqlite``...)."""
        if self.url is None:
            return None
        return self.url.split(":", 1)[0].split("+", 1)[0].lower()

    def describe(self) -> dict[str, Any]:
        """JSON description, password removed."""
        if self.kind == "journal":
            return {"kind": "journal", "path": self.path}
        assert self.url is not None
        return {
            "kind": "rdb",
            "dialect": self.dialect,
            "url": redact_url(self.url),
            "heartbeat_interval": self.heartbeat_interval,
            "grace_period": self.grace_period,
        }

    def open(self) -> Any:
        """A fresh Optuna storage object (create one per process)."""
        import optuna
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        if self.kind == "journal":
            assert self.path is not None
            return JournalStorage(JournalFileBackend(self.path))
        assert self.url is not None
        if self.dialect == "sqlite":
            return optuna.storages.RDBStorage(self.url)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                self.url,
                engine_kwargs={"pool_pre_ping": True},
                heartbeat_interval=self.heartbeat_interval,
                grace_period=self.grace_period,
                heartbeat_stale_trial_callback=_retry_callback(),
            )


def storage_spec(
    run_dir: Path,
    url: str | None,
    *,
    heartbeat_interval: int = HEARTBEAT_INTERVAL,
    grace_period: int = GRACE_PERIOD,
) -> StorageSpec:
    """The storage of a run: ``url`` when given, else the run folder's journal file."""
    if url is None or url == "":
        return StorageSpec("journal", path=str(run_dir / "journal.log"))
    if "://" not in url:
        raise SweepError(
            f"--storage must be a database URL such as postgresql://user@host/db; got {url!r} "
            "(without --storage the run folder's journal file is used)"
        )
    if heartbeat_interval < 1 or grace_period <= heartbeat_interval:
        raise SweepError("the grace period must be longer than the heartbeat interval (>= 1 s)")
    return StorageSpec(
        "rdb", url=url, heartbeat_interval=heartbeat_interval, grace_period=grace_period
    )


class _FileLock:
    """An exclusive ``flock`` on a file (released by the kernel if the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self, *, blocking: bool = True) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            handle.close()
            return False
        self._handle = handle
        return True

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


class RunDirLock:
    """Only one ``harness sweep`` command per run folder at a time."""

    def __init__(self, run_dir: Path) -> None:
        self._lock = _FileLock(run_dir / ".sweep.lock")

    def __enter__(self) -> RunDirLock:
        if not self._lock.acquire(blocking=False):
            raise SweepError(
                f"{self._lock.path.parent}: another sweep is running on this run folder "
                "(wait for it, or use another --out)"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class BudgetLock:
    """The lock held from "count the trials" to "the new trial is running".

    ``release`` may be called more than once (the objective releases it as its
    first step; the worker's ``finally`` again).
    """

    def __init__(self, spec: StorageSpec, study_name: str, run_dir: Path) -> None:
        self.spec = spec
        self._held = False
        self._file: _FileLock | None = None
        self._engine: Any = None
        self._connection: Any = None
        self._key = zlib.crc32(f"loopguard-sweep\x1f{study_name}".encode()) & 0x7FFFFFFF
        self._name = f"loopguard-sweep-{self._key}"
        dialect = spec.dialect
        if spec.kind == "journal" or dialect not in ("postgresql", "mysql", "mariadb"):
            target = Path(spec.path) if spec.path else run_dir / "journal.log"
            self._file = _FileLock(target.with_name(target.name + ".budget.lock"))

    def _connect(self) -> Any:
        if self._connection is None:
            import sqlalchemy

            assert self.spec.url is not None
            self._engine = sqlalchemy.create_engine(
                self.spec.url, poolclass=sqlalchemy.pool.NullPool
            )
            self._connection = self._engine.connect()
        return self._connection

    def acquire(self) -> None:
        import sqlalchemy

        if self._file is not None:
            self._file.acquire()
        elif self.spec.dialect == "postgresql":
            connection = self._connect()
            connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": self._key})
            connection.commit()
        else:
            connection = self._connect()
            connection.execute(sqlalchemy.text("SELECT GET_LOCK(:n, -1)"), {"n": self._name})
            connection.commit()
        self._held = True

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        import sqlalchemy

        if self._file is not None:
            self._file.release()
        elif self.spec.dialect == "postgresql":
            self._connection.execute(
                sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": self._key}
            )
            self._connection.commit()
        else:
            self._connection.execute(sqlalchemy.text("SELECT RELEASE_LOCK(:n)"), {"n": self._name})
            self._connection.commit()

    def close(self) -> None:
        self.release()
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._engine.dispose()
            self._connection = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()


def _retry_callback() -> Any:
    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY)


def recover_orphans(study: Any) -> list[int]:
    """Fail every RUNNING trial and queue a copy of it; return the failed trial numbers.

    Only safe when no worker can be running on the study: the journal storage
    under the run-folder lock before workers start (a previous command was
    killed). RDB storages rely on heartbeats instead.
    """
    from optuna.trial import TrialState

    retry = _retry_callback()
    failed: list[int] = []
    storage = study._storage
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
        retry(study, storage.get_trial(trial._trial_id))
        failed.append(trial.number)
    return failed


def remove_stale_journal_lock(spec: StorageSpec) -> bool:
    """Remove the journal's own lock file left by a killed writer (under the run-folder lock)."""
    if spec.kind != "journal" or spec.path is None:
        return False
    stale = Path(spec.path + ".lock")
    if stale.is_symlink() or stale.exists():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(stale)
        return True
    return False
