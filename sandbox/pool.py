"""`SandboxPool`: the production `EnvRuntime` — warm zygotes in jails, one isolation unit per episode
and per batch of checks, units made ready and killed off the caller's path (sandbox/warm.py).

Thread-safe: zygote control round trips are serialised per zygote (they only create and reap units),
while units talk to the host over their own pipes, so N threads run N calls in parallel.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import os
import secrets
import shutil
import stat
import tempfile
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from collections.abc import Callable
from typing import Any

from envscaler_core.config import SandboxSettings
from envscaler_core.runtime import CheckOutcome
from envscaler_core import wire_values
from sandbox.backend import Backend, SandboxUnavailable, select_backend
from sandbox.cgroups import CgroupCaps, Cgroups, open_cgroups
from sandbox.checks import run_checks
from sandbox.child import Child
from sandbox.episode import SandboxEpisode
from sandbox.health import health_problem
from sandbox.imports import JailImports, stage_imports
from sandbox.limits import SandboxLimits
from sandbox.warm import UnitKeeper
from sandbox.workdirs import PREFIX, claim, release, sweep_stale
from sandbox.zygote import Zygote, ZygoteError

# stdlib-only modules the jail runs, copied side by side into a world-readable directory
JAIL_FILES = ("worker.py", "jail_io.py", "jail_zygote.py", "jail_unit.py", "jail_batch.py", "jail_json.py",
              "jail_hooks.py", "jail_load.py", "jail_check_guards.py", "jail_check_audit.py",
              "seccomp_filter.py")
CORE_JAIL_FILES = ("wire_values.py",)  # stdlib-only envscaler_core modules jail_json needs
log = logging.getLogger("sandbox")


class SandboxPool:
    def __init__(self, settings: SandboxSettings | None = None, limits: SandboxLimits | None = None,
                 *, imports: JailImports | None = None) -> None:
        """`imports`: installed packages made importable read-only in the jail (sandbox/imports.py)."""
        self.settings = settings or SandboxSettings()
        self.limits = limits or SandboxLimits()
        self.imports = imports or JailImports()
        self._workdir = self._make_workdir()
        self._lock = threading.Lock()
        self._rr = itertools.count()
        self._closed = False
        self.zygotes: list[Zygote] = []
        self._check_zygotes: list[Zygote] = []  # started on first use, one per hash seed but 0 (check_zygote)
        self._check_lock = threading.Lock()
        self._repeat_seeds: list[int] = []  # drawn on first use, one per check repeat (check_zygote)
        self.cgroups: Cgroups | None = None
        self.cgroup_note = "disabled (limits.cgroup='off')"
        # Runs on close(), on garbage collection and at interpreter exit: no jail, cgroup or temp dir outlives us.
        self._owned_cgroups: list[Cgroups] = []
        self._keepers: list[UnitKeeper] = []
        self._finalizer = weakref.finalize(self, _release, self.zygotes, self._check_zygotes, self._workdir,
                                           self._owned_cgroups, self._keepers)
        try:
            stage_imports(self.imports, self._workdir)
            self.backend: Backend = select_backend(self.settings, self._workdir)
            self._open_cgroups()
            allow_shared = self._allow_shared = self.settings.allow_weak or self.limits.isolation == "shared"
            # A partial, not a bound method: zygotes must not keep the pool alive (its finaliser closes them).
            self._health = functools.partial(health_problem, limits=self.limits, cgroups=self.cgroups,
                                             timeout_s=self.settings.call_timeout_s)
            boot = {"preload": list(self.imports.preload), "warm_up": bool(self.imports.warm_up)}
            self._start_zygotes(self.settings.workers or os.cpu_count() or 1, allow_shared, boot)
            self.keeper = UnitKeeper(self.zygotes, functools.partial(_make_unit, limits=self.limits,
                                                                     cgroups=self.cgroups))
            self._keepers.append(self.keeper)
            if not self.zygotes[0].isolated:
                log.warning("SANDBOX IS WEAK: all episodes and checks of a jail share its pid, IPC and mount "
                            "namespaces and /proc (%s)", self.zygotes[0].hello.get("units_problem")
                            or "limits.isolation='shared'")
        except ValueError as exc:
            self.close()
            raise SandboxUnavailable(str(exc)) from None
        except ZygoteError as exc:
            self.close()
            raise SandboxUnavailable(str(exc)) from None
        except BaseException:
            self.close()
            raise

    def _start_zygotes(self, count: int, allow_shared: bool, boot: dict[str, Any]) -> None:
        """Start the jails side by side: each start mostly waits for its zygote's hello (~80 ms idle, much
        more on a loaded box), and every run, CLI call and test opens a pool. The first failure is
        raised once every start has ended; the jails that did start are ours to close."""
        def start(_: int) -> Zygote:
            return Zygote(self.backend, self.limits, self._workdir, allow_shared, self._health, boot=boot)

        with ThreadPoolExecutor(count, thread_name_prefix="zygote-start") as ex:
            futures = [ex.submit(start, i) for i in range(count)]
        failures = [f.exception() for f in futures if f.exception() is not None]
        self.zygotes.extend(f.result() for f in futures if f.exception() is None)
        if failures:
            raise failures[0]

    def _open_cgroups(self) -> None:
        if self.limits.cgroup == "off":
            return
        lim = self.limits
        caps = CgroupCaps(unit_memory=lim.unit_memory_bytes(), unit_pids=lim.nproc, pool_memory=lim.pool_memory_bytes(),
                          pool_pids=lim.pool_pids(), read_bps=lim.io_read_bps, read_iops=lim.io_read_iops,
                          pool_read_bps=lim.pool_io_read_bps, pool_read_iops=lim.pool_io_read_iops)
        self.cgroups, self.cgroup_note = open_cgroups(caps)
        if self.cgroups is not None:
            self._owned_cgroups.append(self.cgroups)
            if self.cgroups.io_controller is None:
                log.warning("SANDBOX DISK I/O IS NOT LIMITED: %s; one unit reading with O_DIRECT can slow the host's "
                            "disk", self.cgroups.io_description)
        else:
            if self.limits.cgroup == "require":
                raise SandboxUnavailable(f"limits.cgroup='require' but no per-unit cgroup can be made here: "
                                         f"{self.cgroup_note}")
            log.warning("SANDBOX MEMORY IS CAPPED PER PROCESS ONLY: no per-unit cgroup (%s); kernel memory, pipe "
                        "buffers and page cache of a unit are not bounded, only RLIMIT_AS", self.cgroup_note)

    @staticmethod
    def _make_workdir() -> str:
        """A world-readable copy of the worker: the sandbox uid cannot read the project checkout.
        Removes first what killed pools left behind (sandbox/workdirs.py)."""
        sweep_stale()
        path = tempfile.mkdtemp(prefix=PREFIX)
        claim(path)
        os.chmod(path, 0o755)
        core = Path(wire_values.__file__).parent
        for source in [Path(__file__).with_name(n) for n in JAIL_FILES] + [core / n for n in CORE_JAIL_FILES]:
            target = Path(path) / source.name
            shutil.copyfile(source, target)
            os.chmod(target, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        return path

    # -- EnvRuntime ---------------------------------------------------------------------------
    def open_episode(self, code: str, class_name: str, initial_state: dict[str, Any] | None,
                     tools: list[dict[str, Any]] | None = None, *, spare: bool = False,
                     load_calls: Callable[[dict[str, Any] | None], int] | None = None,
                     rules: str = "factory") -> SandboxEpisode:
        """`spare=True`: the episode's unit also holds a clean spare process, so that `episode.open_spare`
        costs a fork instead of a new unit (a BFCL task scores there, sandbox/worker.py `member_main`).
        `load_calls`, `rules`: see `SandboxEpisode`."""
        return SandboxEpisode(self, code, class_name, initial_state, tools, spare=spare, load_calls=load_calls,
                              rules=rules)

    def run_checks(self, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
                   timeout_s: float | None = None, repeat: int = 0) -> list[CheckOutcome]:
        return run_checks(self, list(checks), initial_state, final_state, timeout_s or self.settings.call_timeout_s,
                          repeat)

    def check_zygote(self, repeat: int) -> Zygote:
        """The jail that evaluates checks for `repeat` (> 0; 0 is every episode's and first evaluation's,
        `self.zygotes`): started on first use under a PYTHONHASHSEED this pool drew at random for that
        repeat, nothing preloaded (a check imports only computing modules), kept until close. A repeat there
        hashes strings, and so orders sets of strings, as another process would (EnvScaler's runtime draws a
        seed per process), so a verdict that depends on that order disagrees with the first evaluation; drawn,
        not fixed, so that no check can be tuned to the seeds (rt12-B F3: one tuned to 1 and 2 always passed)."""
        if repeat < 1:
            raise ValueError(f"a check repeat is numbered from 1, got {repeat}")
        with self._check_lock:
            if self._closed:
                raise ZygoteError("the sandbox pool is closed")
            while len(self._repeat_seeds) < repeat:
                seed = secrets.randbelow(2 ** 32 - 1) + 1
                if seed not in self._repeat_seeds:
                    self._repeat_seeds.append(seed)
            seed = str(self._repeat_seeds[repeat - 1])
            for zygote in self._check_zygotes:
                if zygote.backend.hash_seed == seed:
                    return zygote
            zygote = Zygote(dataclasses.replace(self.backend, hash_seed=seed), self.limits, self._workdir,
                            self._allow_shared, self._health)
            self._check_zygotes.append(zygote)
            return zygote

    def spawn_check_unit(self, repeat: int) -> Child:
        """A batch unit of `check_zygote(repeat)`; a zygote that produced a bad one has been replaced, and we
        try once more (as `spawn_child`)."""
        zygote = self.check_zygote(repeat)
        try:
            return Child(zygote, self.limits, self.cgroups, False, "batch")
        except ZygoteError:
            return Child(zygote, self.limits, self.cgroups, False, "batch")

    # -- plumbing -----------------------------------------------------------------------------
    def spawn_child(self, freeze_between_calls: bool = False, kind: str = "episode") -> Child:
        """A verified unit (a ready one when the keeper has it, sandbox/warm.py); a zygote that produced a bad
        one has been replaced, and we try once more."""
        for attempt in (1, 2):
            with self._lock:
                if self._closed:
                    raise ZygoteError("the sandbox pool is closed")
                index = next(self._rr) % len(self.zygotes)
                zygote = self.zygotes[index]
            ready = self.keeper.take(index, kind)
            if ready is not None:
                ready.set_freeze(freeze_between_calls)
                return ready
            try:
                return Child(zygote, self.limits, self.cgroups, freeze_between_calls, kind)
            except ZygoteError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def release(self, child: Child) -> None:
        """A unit we are done with and whose exit status nobody needs: killed off the caller's path."""
        if child.alive:
            self.keeper.dispose(child)

    def warm_up(self, timeout_s: float = 30.0) -> bool:
        """Have a ready unit of each kind on every zygote (benchmarks, and specs that count processes)."""
        kinds = ("episode", "batch")
        self.keeper.want([(i, kind) for i in range(len(self.zygotes)) for kind in kinds])
        return self.keeper.wait_ready(len(self.zygotes) * len(kinds), timeout_s)

    def heal(self, zygote: Zygote) -> bool:
        """Health-check `zygote` after a failure its code does not explain; replace it if it fails.
        True when it was replaced (the caller may retry on a fresh one)."""
        with zygote.lock:
            generation = zygote.generation
            problem = self._health(zygote)
            if problem is None:
                return False
            zygote.replace(generation, f"failed its health check: {problem}")
            return True

    def info(self) -> dict[str, Any]:
        """What protects untrusted code here (for `envscaler sandbox check` and logs)."""
        zygote = self.zygotes[0] if self.zygotes else None
        hello = zygote.hello if zygote else {}
        protections = list(self.backend.protections)
        if zygote is not None and zygote.isolated:
            protections.append("every episode and every check batch in its own unit: user/pid/IPC/mount namespaces, "
                               "a private /proc, non-dumpable, verified from outside before it gets any code; each "
                               "check in its own process, forked before any check ran, run one at a time")
        else:
            protections.append("NO per-unit namespaces: the units of a jail share pid/IPC namespaces and /proc "
                               f"({hello.get('units_problem') or 'limits.isolation=shared'})")
        if hello.get("seccomp"):
            protections.append("seccomp filter: EPERM for sockets, fork/exec, ptrace/process_vm, signals/limits/"
                               "F_SETOWN on other processes, SysV IPC, mqueues, memfd, namespaces, mounts, ...")
        else:
            protections.append(f"NO seccomp filter ({hello.get('seccomp_problem') or 'unknown'})")
        if self.cgroups is not None:
            protections += [self.cgroups.description, self.cgroups.io_description]
        else:
            protections += [f"NO per-unit memory cap beyond RLIMIT_AS and NO pool-wide pids/memory cap "
                            f"({self.cgroup_note})", f"NO per-unit disk I/O limit ({self.cgroup_note})"]
        protections.append("units stopped (SIGSTOP) between the calls of an episode")
        return {"backend": self.backend.name, "python": self.backend.python, "jail_python": hello.get("python"),
                "uid": hello.get("uid"), "workers": len(self.zygotes), "seccomp": bool(hello.get("seccomp")),
                "isolation": "namespaces" if zygote is not None and zygote.isolated else "shared",
                "cgroup": None if self.cgroups is None else self.cgroups.version,
                "protections": protections, "limits": self.limits.model_dump()}

    def host_pids(self) -> list[int]:
        """Host pids of the zygote jails' root processes (tests walk their descendants)."""
        return [z.pid for z in self.zygotes if z.pid is not None]

    def zygote_host_pids(self) -> list[int]:
        """Host pids of the zygote processes themselves (tests read their /proc status and limits)."""
        return [z.host_pid for z in self.zygotes if z.host_pid is not None]

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_unit(zygote: Zygote, kind: str, limits: SandboxLimits, cgroups: Cgroups | None) -> Child:
    return Child(zygote, limits, cgroups, False, kind)


def _release(zygotes: list[Zygote], check_zygotes: list[Zygote], workdir: str, cgroups: list[Cgroups],
             keepers: list[UnitKeeper]) -> None:
    for keeper in keepers:
        keeper.close()
    keepers.clear()
    for zygote in zygotes + check_zygotes:
        zygote.close()
    for group in cgroups:
        group.close()
    cgroups.clear()
    release(workdir)
