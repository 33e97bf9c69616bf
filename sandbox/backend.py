"""Which jail to build, with which interpreter, and the exact command line that starts a zygote.

`bwrap`: setpriv drops root to uid/gid 65534 (as root, bwrap's user namespace would map to host uid
0), then bubblewrap unshares every namespace (no network but an unconfigured loopback, own pid
space), binds only /usr (+ the interpreter's prefix) and the worker read-only, and remounts
everything read-only, including /tmp and /dev. `rlimit`: the same zygote as a plain subprocess with a
scrubbed environment (and uid 65534 when we are root); it has no filesystem or network isolation of
its own beyond seccomp, so it is refused unless `allow_weak=True`.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from envscaler_core.config import SandboxSettings

log = logging.getLogger("sandbox")

NOBODY = 65534
PYTHON_CANDIDATES = ("/usr/bin/python3.11", "/usr/bin/python3")
JAIL_WORKDIR = "/sandbox"
# The jail interpreter's flags: what `-I` implies minus `-E` (-s: no user site, -P: the script's directory
# is not put on sys.path), plus -S (no site) and -B (no bytecode). `-E` is left out on purpose: it would
# also ignore PYTHONHASHSEED, and a fixed hash seed is what makes str/bytes hash() and so set and frozenset
# iteration order the same in every zygote, unit and replay (a state built with list(some_set) would
# otherwise differ between two runs of the same calls). The environment the interpreter sees is exactly
# JAIL_ENV (bwrap --clearenv, and the rlimit backend's Popen gets only it), so no other PYTHON* variable
# can reach it; worker.py refuses to start if one does or if hash randomisation is on.
PYTHON_FLAGS = ("-s", "-P", "-S", "-B")
HASH_SEED = "0"
TIME_ZONE = "UTC"
"""Every jail's local time zone, whatever the host's: a check or tool reading local time (`astimezone()`,
a naive `.timestamp()`, `fromtimestamp(t)`) gives the same answer on every host and under both backends
(bwrap's jail has no /etc/localtime, the rlimit backend would read the host's)."""
JAIL_ENV = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": HASH_SEED, "TZ": TIME_ZONE}


class SandboxUnavailable(RuntimeError):
    """No backend can run here under the current settings; the message says what to change."""


@dataclass(frozen=True)
class Backend:
    name: str  # "bwrap" | "rlimit"
    python: str
    binds: tuple[str, ...] = ()
    drop_to_nobody: bool = False
    protections: tuple[str, ...] = field(default=())
    hash_seed: str = HASH_SEED
    """PYTHONHASHSEED of the zygotes started with this backend: HASH_SEED for every episode and first check
    evaluation; the pool's check-repeat zygotes take others (SandboxPool.check_zygote)."""

    def command(self, host_workdir: str, worker_args: list[str]) -> list[str]:
        """argv of one zygote; `host_workdir` holds worker.py (bound at /sandbox in the jail)."""
        prefix: list[str] = []
        if self.drop_to_nobody:
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]
        if self.name == "rlimit":
            return prefix + [self.python, *PYTHON_FLAGS, str(Path(host_workdir) / "worker.py"), *worker_args]
        jail = ["bwrap", "--unshare-all", "--new-session", "--cap-drop", "ALL", "--clearenv",
                "--setenv", "PATH", "/usr/bin", "--setenv", "PYTHONHASHSEED", self.hash_seed, "--setenv", "TZ", TIME_ZONE,
                "--hostname", "sandbox"]
        for path in self.binds:
            jail += ["--ro-bind", path, path]
        for top in ("lib", "lib64", "bin", "sbin", "lib32", "libx32"):
            host = Path("/") / top
            if host.is_symlink():
                jail += ["--symlink", os.readlink(host), f"/{top}"]
            elif host.is_dir() and f"/{top}" not in self.binds:
                jail += ["--ro-bind", str(host), f"/{top}"]
        jail += ["--ro-bind", host_workdir, JAIL_WORKDIR, "--proc", "/proc", "--dev", "/dev",
                 "--tmpfs", "/tmp", "--remount-ro", "/tmp", "--remount-ro", "/dev", "--remount-ro", "/",
                 "--chdir", "/tmp", "--"]
        return prefix + jail + [self.python, *PYTHON_FLAGS, f"{JAIL_WORKDIR}/worker.py", *worker_args]

    def env(self) -> dict[str, str]:
        """The whole environment the zygote is started with (bwrap clears it again and sets its own)."""
        return {**JAIL_ENV, "PYTHONHASHSEED": self.hash_seed}


def _world_usable(path: Path) -> str | None:
    """Why uid 65534 could not execute `path` (every directory o+x, the file o+rx), or None."""
    path = path.resolve()
    for parent in reversed(path.parents):
        if not parent.stat().st_mode & stat.S_IXOTH:
            return f"directory {parent} is not searchable by other users"
    mode = path.stat().st_mode
    if not (mode & stat.S_IXOTH and mode & stat.S_IROTH):
        return f"{path} is not readable and executable by other users"
    return None


def _python_prefix(python: str) -> str:
    out = subprocess.run([python, "-I", "-S", "-c", "import sys; print(sys.base_prefix)"],
                         capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    if out.returncode != 0:
        raise SandboxUnavailable(f"interpreter {python} does not run: {out.stderr.strip()[-300:]}")
    return out.stdout.strip()


def interpreter_problem(path: str, drop: bool) -> str | None:
    """Why `path` cannot be the jail's interpreter (not absolute, missing, no file, not executable, or with
    `drop` not reachable by uid 65534), or None. Looked at without running it: the run checks a configured
    `sandbox.python` this way before it writes its row."""
    if not os.path.isabs(path):
        return "not an absolute path"
    if not os.path.exists(path):
        return "no such file"
    if not os.path.isfile(path):
        return "not a file"
    if not os.access(path, os.X_OK):
        return "not executable"
    if drop and (why := _world_usable(Path(path))):
        return f"not usable by the sandbox user (uid {NOBODY}): {why}"
    return None


def configured_python_problem(settings: SandboxSettings, origin: str | None = None) -> str | None:
    """One line naming `sandbox.python` (and `origin`, the variable that set it, if known), its value and
    why it cannot be used; None when unset or usable. A typo here is a config mistake to fix, not a reason
    to weaken the sandbox (rt22-R11 F4: the refusal of the rlimit backend led the message and the path's
    problem sat in a parenthesis)."""
    if not settings.python:
        return None
    why = interpreter_problem(settings.python, drop=os.geteuid() == 0)
    where = f" (from {origin})" if origin else ""
    return None if why is None else (f"sandbox.python={settings.python}{where}: {why}; set it to the absolute path "
                                     "of a Python >= 3.11, or unset it to use the system's")


def resolve_python(settings: SandboxSettings, drop: bool) -> str:
    """The jail's interpreter: settings.python, else a system python 3.9+ usable by uid 65534."""
    candidates = [settings.python] if settings.python else [*PYTHON_CANDIDATES, os.path.realpath(sys.executable)]
    problems = []
    for cand in candidates:
        if not cand:
            continue
        if (why := interpreter_problem(cand, drop)) is not None:
            problems.append(f"{cand}: {why}")
            continue
        return cand
    raise SandboxUnavailable("no usable interpreter for the jail: " + "; ".join(problems)
                             + " (set sandbox.python to an absolute path readable by uid 65534)")


def _probe(cmd: list[str]) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"},
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{exc.__class__.__name__}: {exc}"
    if out.returncode != 0 or out.stdout.strip() != "ok":
        return (out.stderr.strip() or f"exit {out.returncode}")[-300:]
    return None


def bwrap_backend(settings: SandboxSettings, probe_dir: str) -> Backend:
    """Build the bwrap backend and prove it runs here (raises SandboxUnavailable with the reason)."""
    if shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin") is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed (`apt-get install bubblewrap`)")
    drop = os.geteuid() == 0
    if drop and shutil.which("setpriv", path="/usr/bin:/bin") is None:
        raise SandboxUnavailable("running as root but setpriv is missing, cannot drop to uid 65534")
    python = resolve_python(settings, drop)
    prefix = _python_prefix(python)
    binds = ["/usr"]
    for extra in (prefix, str(Path(python).parent)):
        if not extra.startswith("/usr/") and extra != "/usr" and extra not in binds:
            binds.append(extra)
    backend = Backend(
        name="bwrap", python=python, binds=tuple(binds), drop_to_nobody=drop,
        protections=(
            f"uid {NOBODY if drop else os.getuid()} in a user namespace, all capabilities dropped",
            "empty environment (--clearenv) but PATH, a fixed PYTHONHASHSEED and TZ=UTC",
            "network namespace with only a down loopback (no network)",
            "pid/ipc/uts/cgroup namespaces (host processes invisible)",
            "read-only filesystem: only /usr, the interpreter and the worker are visible; /tmp and /dev read-only",
            "per-process rlimits (AS, CPU, FSIZE, NOFILE, NPROC, CORE=0)",
            "wall-clock timeout per call (process killed, episode rebuilt from the last state)",
        ),
    )
    probe = backend.command(probe_dir, [])[:-1] + ["-c", "print('ok')"]
    why = _probe(probe)
    if why:
        raise SandboxUnavailable(f"bwrap probe failed: {why}")
    return backend


def rlimit_backend(settings: SandboxSettings) -> Backend:
    drop = os.geteuid() == 0 and shutil.which("setpriv", path="/usr/bin:/bin") is not None
    python = resolve_python(settings, drop)
    return Backend(
        name="rlimit", python=python, drop_to_nobody=drop,
        protections=(
            f"uid {NOBODY if drop else os.getuid()}" + ("" if drop else " (NOT dropped: not root)"),
            "empty environment but PATH, a fixed PYTHONHASHSEED and TZ=UTC",
            "per-process rlimits (AS, CPU, FSIZE, NOFILE, NPROC, CORE=0)",
            "wall-clock timeout per call",
            "NO filesystem isolation, NO network namespace, host processes visible",
        ),
    )


def select_backend(settings: SandboxSettings, probe_dir: str) -> Backend:
    """`auto`: bwrap when its probe succeeds, else rlimit only with allow_weak (loudly). A configured
    interpreter that cannot be used is named first: no backend would run it."""
    if (problem := configured_python_problem(settings)) is not None:
        raise SandboxUnavailable(problem)
    bwrap_problem = None
    if settings.backend in ("auto", "bwrap"):
        try:
            return bwrap_backend(settings, probe_dir)
        except SandboxUnavailable as exc:
            if settings.backend == "bwrap":
                raise
            bwrap_problem = str(exc)
    if not settings.allow_weak:
        reason = f" (bwrap unusable: {bwrap_problem})" if bwrap_problem else ""
        raise SandboxUnavailable(
            "refusing the rlimit-only sandbox backend: it has no filesystem or network isolation; "
            f"set sandbox.allow_weak=true to accept that{reason}")
    log.warning("SANDBOX IS WEAK: using the rlimit-only backend%s. Untrusted code can read world-readable "
                "host files and (without seccomp) open network connections.",
                f" because {bwrap_problem}" if bwrap_problem else "")
    return rlimit_backend(settings)
