"""Per-unit limits applied to every episode and check (the knobs `SandboxSettings` lacks).

They travel to the jail as JSON on the zygote's command line; each unit's member applies them to itself
before any untrusted code runs, and the host checks from outside (/proc/<pid>/limits) that it did.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


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
    frame_cap: int = Field(default=4 << 20, ge=4096, description="Largest reply the host will read at all.")
    max_depth: int = Field(default=64, ge=4, le=200,
                           description="Deepest nesting of a state or result; the host refuses deeper replies "
                                       "before parsing them (downstream serialisers recurse).")
    seccomp: bool = Field(default=True, description="Load the syscall filter when the platform supports it.")
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

    def unit_memory_bytes(self) -> int:
        return (self.cgroup_memory_mb or self.memory_mb + 64) << 20
