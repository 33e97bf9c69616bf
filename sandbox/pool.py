"""`SandboxPool`: the production `EnvRuntime` — warm zygotes in jails, one fresh child per episode.

Thread-safe: zygote control round trips are serialised per zygote (they only fork), while episodes and
check batches talk to their own children over their own pipes, so N threads run N calls in parallel.
"""

from __future__ import annotations

import itertools
import os
import shutil
import stat
import tempfile
import threading
import weakref
from pathlib import Path
from typing import Any

from envscaler_core.config import SandboxSettings
from envscaler_core.runtime import CheckOutcome
from sandbox.backend import Backend, SandboxUnavailable, select_backend
from sandbox.checks import run_checks
from sandbox.child import Child
from sandbox.episode import SandboxEpisode
from sandbox.imports import JailImports, stage_imports
from sandbox.limits import SandboxLimits
from sandbox.zygote import Zygote, ZygoteError

JAIL_FILES = ("worker.py", "seccomp_filter.py")  # stdlib-only modules the jail runs, copied side by side


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
        # Runs on close(), on garbage collection and at interpreter exit: no jail or temp dir outlives us.
        self._finalizer = weakref.finalize(self, _release, self.zygotes, self._workdir)
        try:
            stage_imports(self.imports, self._workdir)
            self.backend: Backend = select_backend(self.settings, self._workdir)
            boot = {"preload": list(self.imports.preload)}
            for _ in range(self.settings.workers or os.cpu_count() or 1):
                self.zygotes.append(Zygote(self.backend, self.limits, self._workdir, boot=boot))
        except ValueError as exc:
            self.close()
            raise SandboxUnavailable(str(exc)) from None
        except ZygoteError as exc:
            self.close()
            raise SandboxUnavailable(str(exc)) from None
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _make_workdir() -> str:
        """A world-readable copy of the worker: the sandbox uid cannot read the project checkout."""
        path = tempfile.mkdtemp(prefix="envscaler-sandbox-")
        os.chmod(path, 0o755)
        for name in JAIL_FILES:
            target = Path(path) / name
            shutil.copyfile(Path(__file__).with_name(name), target)
            os.chmod(target, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        return path

    # -- EnvRuntime ---------------------------------------------------------------------------
    def open_episode(self, code: str, class_name: str, initial_state: dict[str, Any] | None,
                     tools: list[dict[str, Any]] | None = None) -> SandboxEpisode:
        return SandboxEpisode(self, code, class_name, initial_state, tools)

    def run_checks(self, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
                   timeout_s: float | None = None) -> list[CheckOutcome]:
        return run_checks(self, list(checks), initial_state, final_state, timeout_s or self.settings.call_timeout_s)

    # -- plumbing -----------------------------------------------------------------------------
    def spawn_child(self, kind: str) -> Child:
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox pool is closed")
            zygote = self.zygotes[next(self._rr) % len(self.zygotes)]
        return Child(zygote, kind, self.settings.call_timeout_s, self.limits.frame_cap)

    def info(self) -> dict[str, Any]:
        """What protects untrusted code here (for `envscaler sandbox check` and logs)."""
        hello = self.zygotes[0].hello if self.zygotes else {}
        protections = list(self.backend.protections)
        if hello.get("seccomp"):
            protections.append("seccomp filter: EPERM for socket/fork/exec/ptrace/kill-others/mount/... ")
        else:
            protections.append(f"NO seccomp filter ({hello.get('seccomp_problem') or 'unknown'})")
        return {"backend": self.backend.name, "python": self.backend.python, "jail_python": hello.get("python"),
                "uid": hello.get("uid"), "workers": len(self.zygotes), "seccomp": bool(hello.get("seccomp")),
                "protections": protections, "limits": self.limits.model_dump()}

    def host_pids(self) -> list[int]:
        """Host pids of the zygote jails' root processes (tests walk their descendants)."""
        return [z.pid for z in self.zygotes if z.pid is not None]

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release(zygotes: list[Zygote], workdir: str) -> None:
    for zygote in zygotes:
        zygote.close()
    shutil.rmtree(workdir, ignore_errors=True)
