"""Per-unit cgroups, written by the host: a memory cap for everything one unit can allocate (RSS, kernel
memory such as pipe buffers and page tables, page cache, anything RLIMIT_AS does not see), a pids cap
for its threads and, where the `cpu` controller is there too, at most one core's worth of CPU (so a
unit with many threads cannot take the whole machine from the others and the orchestrator).

cgroup v1 (this machine: `memory`, `pids` and `cpu` hierarchies writable by root) and cgroup v2 with
`memory` and `pids` (and optionally `cpu`) delegated to the host's own cgroup are supported. Each pool gets one parent
directory below the host process's own cgroup (so the machine's accounting of the host still holds),
and each unit one child, created (or reused once empty: the limits are the same) before any untrusted
code runs; the pool removes them when it closes.
Where neither is possible the pool says so loudly (`reason`) and RLIMIT_AS is the only memory bound.

The pool's parent directory carries caps of its own (pids, memory; cgroup v1 and v2 charge a child's usage
to its parents), so that many units, each within its own caps, cannot together exhaust the host's pid
space or RAM: a hog then hurts only the pool. Only units are ever moved below the parent; the host process
and the zygotes stay in the host's cgroup (units are cloned there and moved once verified).

Disk reads are throttled per unit (v1 `blkio.throttle.read_bps_device`/`read_iops_device` on every whole
disk in /sys/block that accepts the rule; v2 `io.max` where `io` is delegated) and on the parent. Under v1
blk-throttle is *flat* (measured here: a child without a rule read at 511 MB/s below a parent limited to
2 MB/s), so the parent's rule binds no unit there; under v2 it is hierarchical.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("sandbox")
PREFIX = "envscaler-sandbox-"


CPU_PERIOD_US = 100_000  # the kernel's default period
CPU_QUOTA_US = 100_000  # one core
MAX_FREE = 32


@dataclass(frozen=True)
class CgroupCaps:
    """What the pool writes: per unit, and on the pool's parent directory (0 = no pool memory cap)."""
    unit_memory: int
    unit_pids: int
    pool_memory: int
    pool_pids: int
    read_bps: int
    read_iops: int
    pool_read_bps: int
    pool_read_iops: int


def block_devices() -> dict[str, str]:
    """maj:min -> name of every whole disk (/sys/block lists no partitions): any of them may hold a file the
    jail reads, and a rule on a disk covers its partitions."""
    out = {}
    for entry in sorted(Path("/sys/block").glob("*")):
        try:
            out[(entry / "dev").read_text().strip()] = entry.name
        except OSError:
            pass
    return out


def _counter(path: Path, name: str) -> int:
    """One counter of a `key value` per line cgroup file (memory.events, memory.oom_control); 0 if absent."""
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class UnitCgroup:
    version: int
    dirs: list[Path]  # memory first
    removed: bool = False
    oom_base: int = 0  # the kernel's OOM-kill count when the current unit moved in (directories are reused)
    pool_memory: Path | None = None  # the pool's memory directory, to tell its cap from the unit's own
    pool_base: int = 0  # how often the pool's memory cap had been hit when the current unit moved in

    def attach(self, host_pid: int) -> None:
        self.oom_base, self.pool_base = self._oom_kills(), self._pool_hits()
        self.add(host_pid)

    def _pool_hits(self) -> int:
        """Charges refused at the pool's level (a charge fails at the first cgroup over its limit, walking up
        from the unit, so the unit's own cap does not count here)."""
        if self.pool_memory is None:
            return 0
        if self.version == 1:
            try:
                return int((self.pool_memory / "memory.failcnt").read_text())
            except (OSError, ValueError):
                return 0
        return _counter(self.pool_memory / "memory.events", "max")

    def pool_cap_hit(self) -> bool:
        """Did the pool's memory cap (rather than the unit's own) refuse memory since this unit moved in?"""
        return self._pool_hits() > self.pool_base

    def add(self, host_pid: int) -> None:
        """Another process of the same unit (a pair unit's spare, forked before the member was attached)."""
        for d in self.dirs:
            (d / "cgroup.procs").write_text(str(host_pid))

    def reusable(self) -> bool:
        """No process left in it, and every hierarchy's directory still there: a directory that lost one of
        them (a removal that half succeeded) would fail the next unit's attach."""
        try:
            return not (self.dirs[0] / "cgroup.procs").read_text().strip() and all(d.is_dir() for d in self.dirs[1:])
        except OSError:
            return False

    def _oom_kills(self) -> int:
        return _counter(self.dirs[0] / ("memory.oom_control" if self.version == 1 else "memory.events"), "oom_kill")

    def oom_killed(self) -> bool:
        """Did the kernel kill something of the current unit for exceeding its memory cap?"""
        return self._oom_kills() > self.oom_base

    def take_oom_kill(self) -> bool:
        """Like oom_killed, and counts it as seen (a check batch attributes each kill to one check)."""
        count = self._oom_kills()
        hit, self.oom_base = count > self.oom_base, count
        return hit

    def remove(self) -> bool:
        """rmdir every hierarchy's directory; False while a process still lingers in one (retry later)."""
        ok = True
        for d in self.dirs:
            try:
                d.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                ok = False
        self.removed = ok
        return ok


@dataclass
class Cgroups:
    version: int
    parents: dict[str, Path]  # controller -> the pool's directory in its hierarchy (v2: one for all)
    caps: CgroupCaps
    swap: bool = field(default_factory=lambda: len(Path("/proc/swaps").read_text().splitlines()) > 1)
    _free: list[UnitCgroup] = field(default_factory=list)  # released, to be reused once empty
    _doomed: list[UnitCgroup] = field(default_factory=list)  # past MAX_FREE: being removed, never reused
    _lock: threading.Lock = field(default_factory=threading.Lock)
    io_devices: dict[str, str] = field(default_factory=dict)  # maj:min -> name: disks whose rule was accepted
    io_note: str = ""  # why there is no disk I/O limit (empty when there is one)

    @property
    def io_controller(self) -> str | None:
        return next((c for c in ("blkio", "io") if c in self.parents), None) if self.io_devices else None

    @property
    def description(self) -> str:
        caps = self.caps
        cpu = ", one core of CPU" if "cpu" in self.parents else " (no cpu controller: CPU not shared fairly)"
        pool_memory = f"memory {caps.pool_memory >> 20} MiB" if caps.pool_memory else "NO pool memory cap"
        return (f"per-unit cgroup v{self.version}: memory cap {caps.unit_memory >> 20} MiB "
                f"(RSS + kernel memory + page cache), pids.max {caps.unit_pids}{cpu}; pool-wide caps on the "
                f"pool's parent cgroup: pids.max {caps.pool_pids}, {pool_memory}")

    @property
    def io_description(self) -> str:
        caps = self.caps
        if self.io_controller is None:
            return f"NO per-unit disk I/O limit ({self.io_note})"
        pool = ("all units together (hierarchical)" if self.version == 2 else
                "on the parent, which under v1 binds no unit: blk-throttle is flat there")
        return (f"disk reads per unit <= {caps.read_bps >> 20} MiB/s and {caps.read_iops} IO/s on "
                f"{', '.join(self.io_devices.values())}; pool {caps.pool_read_bps >> 20} MiB/s and "
                f"{caps.pool_read_iops} IO/s {pool}")

    def _write_io(self, d: Path, bps: int, iops: int, devices: list[str]) -> list[str]:
        """Throttle reads of `d` on `devices`; returns those that accepted the rule (a disk without a request
        queue, or a zram device, may refuse it)."""
        accepted = []
        for dev in devices:
            try:
                if self.version == 1:
                    (d / "blkio.throttle.read_bps_device").write_text(f"{dev} {bps}")
                    (d / "blkio.throttle.read_iops_device").write_text(f"{dev} {iops}")
                else:
                    (d / "io.max").write_text(f"{dev} rbps={bps} riops={iops}")
                accepted.append(dev)
            except OSError:
                pass
        return accepted

    def set_pool_caps(self) -> None:
        """The caps of the pool's parent directories (written once, before any unit exists); also finds which
        disks accept an I/O rule."""
        caps, memory, pids = self.caps, self.parents["memory"], self.parents["pids"]
        if caps.pool_memory:
            if self.version == 1:
                (memory / "memory.limit_in_bytes").write_text(str(caps.pool_memory))
                if self.swap and (memory / "memory.memsw.limit_in_bytes").exists():
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(caps.pool_memory))
            else:
                (memory / "memory.max").write_text(str(caps.pool_memory))
                (memory / "memory.swap.max").write_text("0")
        (pids / "pids.max").write_text(str(caps.pool_pids))
        io = next((c for c in ("blkio", "io") if c in self.parents), None)
        if io is None:
            self.io_note = self.io_note or f"no {'blkio' if self.version == 1 else 'io'} controller for this pool"
            return
        disks = block_devices()
        accepted = self._write_io(self.parents[io], caps.pool_read_bps, caps.pool_read_iops, list(disks))
        self.io_devices = {dev: disks[dev] for dev in accepted}
        if not accepted:
            self.io_note = f"no disk in /sys/block accepts a {io} rule"

    def create_unit(self) -> UnitCgroup:
        """A cgroup for one unit: an emptied one from an earlier unit, else a new one."""
        with self._lock:
            for i, unit in enumerate(self._free):
                if unit.reusable():
                    return self._free.pop(i)
            # random, not a counter: a unit reads its own path in /proc/self/cgroup, and a count of the units
            # made before it is a number other episodes move (each crash or restart makes a unit)
            name = f"u{uuid.uuid4().hex[:12]}"
        made: list[Path] = []
        try:
            dirs = {}
            for controller, parent in self.parents.items():
                d = parent / name
                if d not in made:
                    d.mkdir()
                    made.append(d)
                dirs[controller] = d
            memory_bytes = self.caps.unit_memory
            if self.version == 1:
                (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory_bytes))
                if self.swap and (dirs["memory"] / "memory.memsw.limit_in_bytes").exists():  # no escape into swap
                    (dirs["memory"] / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                if "cpu" in dirs:
                    (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(CPU_QUOTA_US))
            else:
                (dirs["memory"] / "memory.max").write_text(str(memory_bytes))
                (dirs["memory"] / "memory.swap.max").write_text("0")
                if "cpu" in dirs:
                    (dirs["cpu"] / "cpu.max").write_text(f"{CPU_QUOTA_US} {CPU_PERIOD_US}")
            (dirs["pids"] / "pids.max").write_text(str(self.caps.unit_pids))
            io = self.io_controller
            if io is not None:
                devices = list(self.io_devices)
                if self._write_io(dirs[io], self.caps.read_bps, self.caps.read_iops, devices) != devices:
                    raise OSError(f"a disk refused this unit's {io} rule (it took the pool's)")
        except OSError:
            UnitCgroup(self.version, made).remove()
            raise
        return UnitCgroup(self.version, made, pool_memory=self.parents["memory"] if self.caps.pool_memory else None)

    def release(self, unit: UnitCgroup) -> None:
        """The unit is killed (perhaps still exiting): keep its cgroup for a later unit, within reason.

        Past MAX_FREE the oldest is removed instead, and never handed out again even while its removal is
        still pending: rmdir can succeed in one hierarchy and fail in another (a process still exiting),
        and a unit attached to such a half-removed cgroup failed, which took its zygote's health check and
        every episode of that jail with it (seen at 100x the demo's batch)."""
        with self._lock:
            self._free.append(unit)
            while len(self._free) > MAX_FREE:
                self._doomed.append(self._free.pop(0))
            self._doomed = [u for u in self._doomed if not u.remove()]

    def discard(self, unit: UnitCgroup) -> None:
        """A cgroup that must not serve another unit (its attach failed): removed once empty."""
        with self._lock:
            self._doomed.append(unit)
            self._doomed = [u for u in self._doomed if not u.remove()]

    def close(self, patience_s: float = 5.0) -> None:
        """Remove every unit's directory and the pool's own. Units killed a moment ago may still be exiting
        (and, without a jail pid namespace, waiting to be reaped), which keeps a cgroup busy: retry a while."""
        parents = list(dict.fromkeys(self.parents.values()))
        deadline = time.monotonic() + patience_s
        while True:
            left = []
            for parent in parents:
                for child in parent.glob("u*"):
                    try:
                        child.rmdir()
                    except FileNotFoundError:
                        pass
                    except OSError:
                        left.append(child)
                try:
                    parent.rmdir()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    left.append(parent)
                    problem = exc
            if not left:
                return
            if time.monotonic() > deadline:
                log.warning("sandbox cgroups not removed: %s (%s)", ", ".join(map(str, left)), problem)
                return
            time.sleep(0.02)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _, rest = right.partition(" ")
        if fstype in ("cgroup", "cgroup2"):
            out.append((left.split()[4], fstype, set(rest.split()[-1].split(","))))
    return out


def _own_paths() -> dict[str, str]:
    """controller (or '' for v2) -> this process's cgroup path in that hierarchy."""
    out = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _v1_parents(tag: str) -> dict[str, Path]:
    mounts = {c: point for point, fstype, opts in _mounts() if fstype == "cgroup" for c in opts}
    own = _own_paths()
    missing = [c for c in ("memory", "pids") if c not in mounts or c not in own]
    if missing:
        raise OSError(f"no cgroup v1 {'/'.join(missing)} hierarchy")
    wanted = ["memory", "pids"] + [c for c in ("cpu", "blkio") if c in mounts and c in own]
    return {c: Path(mounts[c]) / own[c].lstrip("/") / tag for c in wanted}


def _v2_parents(tag: str) -> dict[str, Path]:
    point = next((p for p, fstype, _ in _mounts() if fstype == "cgroup2"), None)
    if point is None or "" not in _own_paths():
        raise OSError("no cgroup v2 mount")
    own = Path(point) / _own_paths()[""].lstrip("/")
    delegated = set((own / "cgroup.subtree_control").read_text().split())
    if not {"memory", "pids"} <= delegated:
        raise OSError(f"cgroup v2: memory and pids are not enabled in {own}/cgroup.subtree_control")
    return {c: own / tag for c in ("memory", "pids", "cpu", "io") if c in delegated}


def sweep_stale(where: Path) -> None:
    """Remove the (empty) cgroups of pools whose host process is gone: killed hosts cannot clean up."""
    for pool_dir in where.glob(f"{PREFIX}*"):
        owner = pool_dir.name[len(PREFIX):].split("-", 1)[0]
        if not owner.isdigit() or Path(f"/proc/{owner}").exists():
            continue
        for unit in pool_dir.glob("u*"):
            try:
                unit.rmdir()
            except OSError:
                pass
        try:
            pool_dir.rmdir()
        except OSError:
            pass


def open_cgroups(caps: CgroupCaps) -> tuple[Cgroups | None, str]:
    """The pool's cgroups with its caps in place, or (None, why not). Tries v1 (memory+pids hierarchies),
    then delegated v2."""
    tag = f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    problems = []
    for version in (1, 2):
        made: list[Path] = []
        try:
            parents = _v1_parents(tag) if version == 1 else _v2_parents(tag)
            for parent in dict.fromkeys(parents.values()):
                sweep_stale(parent.parent)
                parent.mkdir()
                made.append(parent)
            if version == 2:
                (parents["memory"] / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in parents))
            cgroups = Cgroups(version, parents, caps)
            cgroups.set_pool_caps()
            cgroups.release(cgroups.create_unit())  # prove that units can be made here
            return cgroups, cgroups.description
        except OSError as exc:
            for parent in reversed(made):
                try:
                    parent.rmdir()
                except OSError:
                    pass
            problems.append(f"v{version}: {exc.strerror or exc}" + (f" ({exc.filename})" if exc.filename else ""))
    return None, "; ".join(problems)
