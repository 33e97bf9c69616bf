"""Per-unit and pool-wide limits applied to every episode and check (the knobs `SandboxSettings` lacks).

They travel to the jail as JSON on the zygote's command line; each unit's member applies them to itself
before any untrusted code runs, and the host checks from outside (/proc/<pid>/limits) that it did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from envscaler_core.wire_values import MAX_STATE_VALUES  # the one number, for the host and the core

POOL_PIDS_CEILING = 32_768  # the default pool pids cap never exceeds this, however large pid_max is
MIB = 1 << 20
MAX_REQUEST_BYTES = 4 * MIB
"""Largest tool call the host takes, as JSON bytes (the arguments; for MCP the whole message line or POST
body): like `frame_cap` for replies, a request over it is refused after reading, before any parsing, since
parsing costs the host 30-50x the input in memory (red team round 6, F6)."""


def host_pid_max() -> int:
    """The host's pid space (threads count too): what a pool must never be able to exhaust."""
    try:
        return int(Path("/proc/sys/kernel/pid_max").read_text())
    except (OSError, ValueError):
        return 32_768  # the kernel's default


def host_memory_mb() -> int:
    """MemTotal in MiB (the host's RAM), or 0 where /proc/meminfo cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) >> 10
    except (OSError, ValueError, IndexError):
        pass
    return 0


class SandboxLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_mb: int = Field(default=512, ge=64, description="RLIMIT_AS of a unit's process.")
    cpu_budget_s: int = Field(default=600, ge=1, description="Hard RLIMIT_CPU over an episode's life.")
    fsize_mb: int = Field(default=16, ge=1, description="RLIMIT_FSIZE (the jail's file systems are read-only anyway).")
    nofile: int = Field(default=64, ge=8)
    nproc: int = Field(default=256, ge=8, description="RLIMIT_NPROC: threads of one unit (own user namespace).")
    sigpending: int = Field(default=64, ge=8,
                            description="RLIMIT_SIGPENDING: queued signals and POSIX timers of one unit. The kernel "
                                        "also counts them against the uid's host-wide budget, so a unit gets a "
                                        "small share of its own.")
    output_cap: int = Field(default=64 << 10, ge=0, description="Characters of print() output kept per call.")
    state_cap: int = Field(default=1 << 20, ge=1024, description="Serialised state, characters.")
    result_cap: int = Field(default=1 << 20, ge=1024, description="Serialised tool result, characters.")
    state_values_cap: int = Field(default=MAX_STATE_VALUES, ge=1000,
                                  description="Values (containers and scalars) in one state or result; the "
                                              "worker refuses more as `oversize`, the host refuses a reply "
                                              "holding more than twice this before parsing it.")
    frame_cap: int = Field(default=4 << 20, ge=4096, description="Largest reply the host will read at all.")
    max_depth: int = Field(default=64, ge=4, le=200,
                           description="Deepest nesting of a state or result; the host refuses deeper replies "
                                       "before parsing them (downstream serialisers recurse).")
    seccomp: bool = Field(default=True, description="Load the syscall filter when the platform supports it.")
    check_audit: bool = Field(default=True, description="While a check's own code runs, refuse the audit events a "
                              "pure check never needs (jail_check_audit.py). Off only for specs of the layers "
                              "beneath it, which must see what such a check would meet without it.")
    control_timeout_s: float = Field(default=10.0, gt=0, description="Zygote control round trip before it is replaced.")
    isolation: Literal["namespaces", "shared"] = Field(
        default="namespaces",
        description="'namespaces': every episode and check in its own user/pid/IPC/mount namespaces with a "
                    "private /proc (the design). 'shared': all units of a zygote share its namespaces (the "
                    "pre-issue-10 design, kept for benchmarks and for hosts without nested user namespaces; "
                    "weak, logged as such).")
    cgroup: Literal["auto", "require", "off"] = Field(
        default="auto",
        description="Per-unit memory+pids cgroup: 'auto' uses it where this host can create cgroups (and says "
                    "loudly when it cannot), 'require' refuses to start without it, 'off' never uses it.")
    cgroup_memory_mb: int | None = Field(
        default=None, ge=64,
        description="Memory cap of one unit (RSS, kernel memory, page cache); default memory_mb + 64 so that "
                    "RLIMIT_AS raises MemoryError first and the cgroup is the backstop.")

    pool_pids_max: int | None = Field(
        default=None, ge=16,
        description="pids.max of the pool's parent cgroup: threads of all its units together (each unit has "
                    "nproc). Default: a quarter of the host's /proc/sys/kernel/pid_max, at most 32768, so that open "
                    "hostile episodes (frozen between calls, holding their threads) exhaust the pool, never the "
                    "host's pid space. At least nproc, at most pid_max.")
    pool_memory_mb: int | None = Field(
        default=None, ge=128,
        description="Memory cap of the pool's parent cgroup: everything its units hold together (RSS, kernel "
                    "memory, page cache). Default: half the host's MemTotal, so that many episodes each under "
                    "their own cap cannot together take the host's RAM; past it the kernel's OOM killer picks a "
                    "unit of this pool. At least one unit's cap, at most MemTotal.")
    io_read_bps: int = Field(
        default=16 * MIB, ge=MIB,
        description="Disk read bytes/s of one unit (cgroup v1 blkio.throttle.read_bps_device on every whole disk "
                    "that accepts it; v2 io.max rbps). Units read almost nothing (the zygote imported everything "
                    "before forking); the cap keeps one unit reading /usr with O_DIRECT from slowing the host's "
                    "disk, yet lets a cold import of a stdlib module finish quickly.")
    io_read_iops: int = Field(
        default=400, ge=16,
        description="Disk read operations/s of one unit (blkio.throttle.read_iops_device; v2 io.max riops).")
    pool_io_read_bps: int = Field(
        default=64 * MIB, ge=MIB,
        description="Disk read bytes/s on the pool's parent cgroup. Hierarchical under cgroup v2 (io.max): all "
                    "units together. Under cgroup v1 blk-throttle is flat (measured on this machine): the parent's "
                    "rule binds only processes directly in it, i.e. none, so there the pool's bound is units x "
                    "io_read_bps.")
    pool_io_read_iops: int = Field(default=1600, ge=16,
                                   description="Disk read operations/s on the pool's parent cgroup (see "
                                               "pool_io_read_bps).")

    @model_validator(mode="after")
    def _pool_caps_fit(self) -> SandboxLimits:
        """A pool cap that cannot hold one unit, or that exceeds what the host has, protects nothing: refuse it."""
        unit_mb = self.unit_memory_bytes() >> 20
        if self.pool_memory_mb is not None:
            if self.pool_memory_mb < unit_mb:
                raise ValueError(f"pool_memory_mb ({self.pool_memory_mb}) is below one unit's memory cap "
                                 f"({unit_mb} MiB): not even one unit could run")
            total = host_memory_mb()
            if total and self.pool_memory_mb > total:
                raise ValueError(f"pool_memory_mb ({self.pool_memory_mb}) exceeds the host's RAM ({total} MiB): "
                                 f"the pool could still exhaust the host")
        if self.pool_pids_max is not None:
            if self.pool_pids_max < self.nproc:
                raise ValueError(f"pool_pids_max ({self.pool_pids_max}) is below nproc ({self.nproc}): one unit "
                                 f"could not have its own threads")
            if self.pool_pids_max >= host_pid_max():
                raise ValueError(f"pool_pids_max ({self.pool_pids_max}) is not below the host's pid_max "
                                 f"({host_pid_max()}): the pool could still exhaust the host's pid space")
        if self.pool_io_read_bps < self.io_read_bps or self.pool_io_read_iops < self.io_read_iops:
            raise ValueError("pool_io_read_bps/pool_io_read_iops must be at least io_read_bps/io_read_iops "
                             "(one unit's disk budget)")
        return self

    def unit_memory_bytes(self) -> int:
        return (self.cgroup_memory_mb or self.memory_mb + 64) << 20

    def pool_memory_bytes(self) -> int:
        """The pool's memory cap: configured, else half of MemTotal (never below one unit's cap)."""
        if self.pool_memory_mb is not None:
            return self.pool_memory_mb << 20
        return max(self.unit_memory_bytes(), (host_memory_mb() // 2) << 20) if host_memory_mb() else 0

    def pool_pids(self) -> int:
        """The pool's pids cap: configured, else a quarter of pid_max, at most POOL_PIDS_CEILING."""
        if self.pool_pids_max is not None:
            return self.pool_pids_max
        return max(self.nproc, min(host_pid_max() // 4, POOL_PIDS_CEILING))
