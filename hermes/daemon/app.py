"""``hermes daemon``: the whole supervision tree as an application.

    hermes (rest_for_one)
    |-- store       the database (the only writer)
    |-- providers   the model client; the fake provider (offline demo model) without a key
    |-- sessions    SessionsManager -> sup (dynamic) -> session-<id> ...
    |-- gateway     WebSocket + HTTP on one loopback port, one actor per connection
    |-- cron        the scheduler of jobs (hermes/cron; each run a fresh session)
    |-- kanban      the board's dispatcher (hermes/kanban; each card a worker session)
    |-- watchdog    the event-loop stall detector
    `-- curator     the skills curator (hermes/skills/curator_actor.py), last: a crash
                    of it restarts nothing else

The gateway is handed in (``surface.py``): it uses the manager's client, so it
sits above this package, and ``hermes daemon`` (``hermes/cli``) passes
``GatewayActor``.

``rest_for_one`` rather than the sketch's one_for_one: each child uses the
ones before it (the manager holds the store's ref and the model client, the
gateway the manager's), so a restart of one restarts those that depend on it
and nobody keeps a dead reference.

Signals (``supervisors.run``): SIGTERM/SIGINT start the phased shutdown
(``shutdown.py``: input refused, turns and subagents cancelled, the stores
flushed, the surfaces closed, then the tree stopped within
``daemon.shutdown_timeout``: processes killed, the database closed). Another
SIGTERM meanwhile changes nothing, another SIGINT forces exit. What ran over is
logged and kept for ``hermes daemon stop``. SIGHUP reloads the configuration
without dropping sessions.
"""

from __future__ import annotations

import gc
import logging
import os
import secrets
import sys
import time
from typing import TextIO

from actors import ActorRef, ActorSystem, LoopStallDetector, Task, gc_pauses, tune_gc
from hermes.cron import cron_tree
from hermes.kanban import kanban_tree
from hermes.paths import Paths
from hermes.procgroup import record_user_umask
from hermes.skills.curator import CuratorPolicy
from hermes.skills.curator_actor import Curator
from hermes.store import StoreActor
from supervisors import (
    ChildSpec,
    Restart,
    Strategy,
    Supervisor,
    SupervisorFlags,
    run,
    task_spec,
)

from .config import Config, ConfigError, load_config, prepare, reload_changes
from .cron_runner import locate as cron_locate
from .exitnote import GiveUpWatch, StartWatch, describe_exit
from .kanban_runner import locate as kanban_locate
from .lock import AlreadyRunning, DaemonLock
from .logs import set_level, setup_logging
from .manager import SessionsManager
from .providers import ProvidersActor
from .security import write_token
from .settings import Settings
from .shutdown import daemon_phases
from .shutdown_report import write_report
from .startup import (
    UMASK,
    StartupError,
    os_failure,
    prepare_data_dir,
    prepare_runtime_dir,
    tighten,
)
from .surface import GetAddress, SurfaceFactory

log = logging.getLogger("hermes.daemon")

ROOT = "hermes"


class Watchdog(Task[None]):
    """Runs the loop-stall detector until stopped (a task that never returns)."""

    async def run(self) -> None:
        await LoopStallDetector(threshold=1.0, bus=self.ctx.system.events).run()


def build_root(settings: Settings, token: str, surface: SurfaceFactory) -> Supervisor:
    """The daemon's tree; ``surface`` builds its ``gateway`` child (``surface.py``)."""
    data_dir = settings.config.data_dir(settings.paths)
    return Supervisor(
        [
            ChildSpec(
                "store", StoreActor, args=(data_dir, None, settings.store_lane), shutdown=10.0
            ),
            ChildSpec("providers", ProvidersActor, args=(settings.config,), shutdown=3.0),
            ChildSpec("sessions", SessionsManager, args=(settings,), shutdown=60.0),
            ChildSpec("gateway", surface, args=(settings, token), shutdown=3.0),
            ChildSpec("cron", cron_tree, args=(cron_locate(settings),), shutdown=25.0),
            ChildSpec("kanban", kanban_tree, args=(kanban_locate(settings),), shutdown=25.0),
            task_spec("watchdog", Watchdog, shutdown=0, restart=Restart.PERMANENT),
            ChildSpec(
                "curator",
                Curator,
                args=(data_dir / "skills", CuratorPolicy.from_config(settings.config.get)),
                shutdown=5.0,
            ),
        ],
        SupervisorFlags(strategy=Strategy.REST_FOR_ONE, intensity=5, period=30.0),
    )


def run_daemon(
    surface: SurfaceFactory, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run in the foreground until stopped, serving through ``surface`` (the gateway);
    returns the exit code.

    Everything it creates is private (umask 0077); a failure to start, or a root
    supervisor that gives up, is one line on ``err`` naming the cause and the log.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    record_user_umask(os.umask(UMASK))  # tools create with the user's own umask
    try:
        config, paths = prepare()
    except ConfigError as exc:
        print(f"hermes daemon: invalid configuration, not starting:\n{exc}", file=err)
        return 1
    lock = DaemonLock(paths.lock_file)
    data_lock = DaemonLock(paths.data_dir / "daemon.lock", what="data directory")
    try:
        prepare_runtime_dir(paths.runtime_dir)
        try:
            lock.acquire()
        except OSError as exc:
            raise os_failure(exc, "lock", paths.lock_file, "HERMES_RUNTIME_DIR") from None
        prepare_data_dir(paths.data_dir)
        try:
            data_lock.acquire()
        except OSError as exc:
            raise os_failure(exc, "lock", data_lock.path) from None
        notes = tighten(paths.data_dir)
        handler = _logging(config, paths)
    except (StartupError, AlreadyRunning) as exc:
        print(f"hermes daemon: {exc}", file=err)
        data_lock.release()
        lock.release()
        return 1
    try:
        for note in notes:
            log.warning("%s", note)
        return _serve(config, paths, lock, surface, out, err)
    finally:
        for path in (paths.endpoint_file, paths.token_file):
            path.unlink(missing_ok=True)
        data_lock.release()
        lock.release()
        logging.getLogger().removeHandler(handler)
        handler.close()


def _logging(config: Config, paths: Paths) -> logging.Handler:
    try:
        return setup_logging(
            paths.log_file,
            config.get("logging", "level"),
            config.get("logging", "max_bytes"),
            config.get("logging", "backups"),
        )
    except OSError as exc:
        raise os_failure(exc, "open the log", paths.log_file) from None


GC_THRESHOLDS = (2_000, 100, 100)
"""The daemon's collector thresholds. A young collection's pause grows with the young
objects it walks: at ``tune_gc``'s 50,000 one took 30-60 ms under the cancel storm (a
stall of every request in flight), at 4,000 a few ms, for about the same work in all
(each object is walked once while young); the older generations stay as rare as
``tune_gc`` makes them (docs/benchmarks.md, control under load)."""


def _serve(
    config: Config,
    paths: Paths,
    lock: DaemonLock,
    surface: SurfaceFactory,
    out: TextIO,
    err: TextIO,
) -> int:
    """Run the tree (the locks are held and the log is open)."""
    if lock.stale_pid is not None:
        log.warning("took over a stale lock from pid %d", lock.stale_pid)
        print(f"hermes daemon: took over a stale lock (pid {lock.stale_pid})", file=err)
    host = config.get("daemon", "host")
    if host not in ("127.0.0.1", "::1", "localhost"):
        print(
            f"hermes daemon: warning: listening on {host}, not loopback: other machines "
            "can reach it (the token is still required)",
            file=err,
        )
        log.warning("listening on %s, not loopback", host)
    try:
        token = write_token(paths.token_file)
    except OSError as exc:
        failure = os_failure(exc, "write the token", paths.token_file, "HERMES_RUNTIME_DIR")
        print(f"hermes daemon: {failure}", file=err)
        return 1
    settings = Settings(
        config=config, paths=paths, boot_id=secrets.token_hex(6), started_at=time.time()
    )
    tune_gc(GC_THRESHOLDS)
    gc_pauses()  # daemon.stats reports the collector's pauses from here on
    roots: list[ActorRef] = []

    async def started(system: ActorSystem, root: ActorRef) -> None:
        roots.append(root)
        gateway = system.lookup(root.path + "/gateway")
        assert gateway is not None
        host, port = await gateway.call(GetAddress())
        model = settings.config.model
        note = (
            f"offline demo model {model} (no ANTHROPIC_API_KEY)"
            if settings.config.demo
            else f"model {model}"
        )
        print(f"hermes daemon: listening on http://{host}:{port} ({note})", file=out, flush=True)
        log.info("daemon started (pid %s, boot %s)", os.getpid(), settings.boot_id)
        gc.freeze()  # the start-up heap lives as long as the daemon: never traverse it again

    def reload(system: ActorSystem, root: ActorRef) -> None:
        try:
            new = load_config(paths.config_file)
        except ConfigError as exc:
            log.error("reload refused, keeping the running configuration:\n%s", exc)
            return
        applied, restart = reload_changes(settings.config, new)
        settings.config = new
        set_level(new.get("logging", "level"))
        log.info(
            "configuration reloaded; applied: %s; need a restart: %s",
            ", ".join(applied) or "nothing",
            ", ".join(restart) or "nothing",
        )

    watch = StartWatch()
    app_log = logging.getLogger("supervisors.application")
    app_log.addHandler(watch)
    give_up = GiveUpWatch()
    sup_log = logging.getLogger("supervisors")
    sup_log.addHandler(give_up)
    try:
        code = run(
            lambda: build_root(settings, token, surface),
            name=ROOT,
            shutdown_timeout=config.get("daemon", "shutdown_timeout"),
            on_started=started,
            on_reload=reload,
            phases=daemon_phases,
            on_report=lambda report: write_report(paths, report),
        )
    finally:
        app_log.removeHandler(watch)
        sup_log.removeHandler(give_up)
    log.info("daemon exited with code %d", code)
    if not roots:
        print(watch.describe(paths.log_file), file=err, flush=True)
    elif code != 0:
        root = roots[0]
        line = describe_exit(root.exit_reason, give_up.escalated.get(root.path), paths.log_file)
        if line is not None:
            print(line, file=err, flush=True)
    return code
