"""Per-process limits applied to every episode and check process (the knobs `SandboxSettings` lacks).

They travel to the jail as JSON on the zygote's command line; the zygote hands them to each child,
which applies them to itself before any untrusted code runs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_mb: int = Field(default=512, ge=64, description="RLIMIT_AS of an episode process.")
    cpu_budget_s: int = Field(default=600, ge=1, description="Hard RLIMIT_CPU over an episode's life.")
    fsize_mb: int = Field(default=16, ge=1, description="RLIMIT_FSIZE (the jail's file systems are read-only anyway).")
    nofile: int = Field(default=64, ge=8)
    nproc: int = Field(default=256, ge=8, description="RLIMIT_NPROC; counts threads of the sandbox uid in one jail.")
    output_cap: int = Field(default=64 << 10, ge=0, description="Characters of print() output kept per call.")
    state_cap: int = Field(default=1 << 20, ge=1024, description="Serialised state, characters.")
    result_cap: int = Field(default=1 << 20, ge=1024, description="Serialised tool result, characters.")
    frame_cap: int = Field(default=4 << 20, ge=4096, description="Largest reply the host will read at all.")
    seccomp: bool = Field(default=True, description="Load the syscall filter when the platform supports it.")
    control_timeout_s: float = Field(default=10.0, gt=0, description="Zygote control round trip before it is replaced.")
