"""The in-jail half of the sandbox: a zygote that forks one fresh process per episode (or check batch).

This file runs under the jail's interpreter (`python -I -S -B worker.py '<limits json>'`) and imports
the standard library only. The zygote itself only ever runs this trusted code; untrusted code (env
classes, check functions) is exec'd exclusively in forked children, after they have dropped to their
rlimits, closed every inherited descriptor but their two pipes, and loaded the seccomp filter. A
child's damage (monkey-patched builtins, leaked threads, a corrupted heap) therefore dies with it and
never reaches the zygote or the next episode.

Wire formats (never pickle):
* control, zygote <-> host: one JSON object per SOCK_SEQPACKET message on the inherited control fd
  (its number is `control_fd` in the limits); `spawn` answers carry
  the child's two pipe ends as SCM_RIGHTS descriptors.
* child <-> host: frames of a 4-byte big-endian length followed by UTF-8 JSON, over two pipes.
"""

from __future__ import annotations

import builtins
import ctypes
import inspect
import io
import json
import os
import random
import resource
import signal
import socket
import struct
import sys
import time
import traceback
import types

# `-I` keeps the script's own directory off sys.path; the filter module sits next to this file in the
# read-only jail directory (copied there by SandboxPool with the worker).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seccomp_filter import install_seccomp, probe_seccomp  # noqa: E402

# Installed packages the pool copied next to us (sandbox/imports.py); last, so they never shadow stdlib.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "site"))
# Pre-imported so that forked children get them for free (generated code commonly needs them).
import collections  # noqa: F401
import copy
import dataclasses  # noqa: F401
import datetime  # noqa: F401
import decimal  # noqa: F401
import enum  # noqa: F401
import functools  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
import re  # noqa: F401
import string  # noqa: F401
import typing  # noqa: F401
import uuid  # noqa: F401

HEADER = struct.Struct(">I")
TB_CHARS = 2000
MISSING = object()

# ---------------------------------------------------------------------------------------------
# framing
# ---------------------------------------------------------------------------------------------
def read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict | None:
    head = read_exact(fd, 4)
    if head is None:
        return None
    body = read_exact(fd, HEADER.unpack(head)[0])
    return None if body is None else _json_loads(body)


def write_frame(fd: int, text: str) -> None:
    data = text.encode("utf-8")
    data = HEADER.pack(len(data)) + data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ---------------------------------------------------------------------------------------------
# child: limits and hygiene
# ---------------------------------------------------------------------------------------------
class CappedOutput(io.TextIOBase):
    """sys.stdout/sys.stderr of a child: keeps the first `cap` characters of a call, drops the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.parts, self.size, self.dropped = cap, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = self.cap - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[... {self.dropped} characters dropped]"
        self.parts, self.size, self.dropped = [], 0, 0
        return out


def close_other_fds(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def set_cpu_window(seconds: float) -> None:
    """Soft CPU limit = CPU used so far + this call's budget (SIGXCPU); the hard limit stays put."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def enter_child(req_fd: int, rep_fd: int, limits: dict) -> CappedOutput:
    os.setsid()  # own session and process group: the zygote kills the whole group
    try:  # die with the zygote (single-threaded, so the parent-death signal is reliable)
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    close_other_fds({0, 1, 2, req_fd, rep_fd})
    out = CappedOutput(int(limits["output_cap"]))
    sys.stdout = sys.stderr = out
    sys.stdin = io.StringIO("")
    mib = 1 << 20
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_mb"] * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize_mb"] * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"],) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_budget_s"],) * 2)
    random.seed()  # the zygote's random state must not be shared by every episode
    if limits.get("seccomp"):
        why = install_seccomp()
        if why is not None:
            raise SystemExit(f"seccomp requested but failed: {why}")
    return out


def traceback_tail(exc: BaseException) -> str:
    """`Type: message` plus the last frames of untrusted code only (the worker's frames are dropped)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    text = "".join(lines).strip()
    if len(text) > TB_CHARS:
        text = "..." + text[-TB_CHARS:]
    return text


_json_dumps, _json_loads = json.dumps, json.loads  # captured: user code rebinding json.* cannot reach us


def dumps(obj) -> str:
    return _json_dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def strict_dumps(obj) -> str:
    """JSON that is also valid UTF-8: a lone surrogate would poison every later consumer (store, exports)."""
    text = dumps(obj)
    if not text.isascii():
        text.encode("utf-8")  # UnicodeEncodeError (a ValueError) on lone surrogates
    return text


def clean(text: str) -> str:
    """Free text from untrusted code (print output, messages) made encodable, never rejected."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def error_reply(kind: str, message: str, output: str = "") -> str:
    return dumps({"ok": False, "error_kind": kind, "error": clean(message), "output": clean(output)})


# ---------------------------------------------------------------------------------------------
# child: an episode (one live instance, many calls)
# ---------------------------------------------------------------------------------------------
def state_hooks(cls: type):
    """(snapshot, restore) of a class that owns its state representation (Python objects, not JSON):
    `__sandbox_state__(self) -> dict` is the JSON-able state (diffed, committed) and
    `__sandbox_restore__(self, snapshot)` rebuilds the live objects from one; else None."""
    snap, restore = getattr(cls, "__sandbox_state__", None), getattr(cls, "__sandbox_restore__", None)
    if snap is None and restore is None:
        return None
    if not (callable(snap) and callable(restore)):
        raise TypeError(f"{cls.__name__} must define both __sandbox_state__ and __sandbox_restore__, or neither")
    return snap, restore


class EpisodeChild:
    def __init__(self, out: CappedOutput, limits: dict) -> None:
        self.out, self.limits = out, limits
        self.inst = None
        self.hooks = None
        self.committed = "{}"
        self.signatures: dict[str, inspect.Signature] = {}

    def public_state(self) -> dict:
        if self.hooks is None:
            return {k: v for k, v in vars(self.inst).items() if not k.startswith("_")}
        state = self.hooks[0](self.inst)
        if not isinstance(state, dict):
            raise TypeError(f"__sandbox_state__ returned {type(state).__name__}, not a dict")
        return state

    def overwrite(self, state: dict) -> None:  # make the live instance hold a committed snapshot
        if self.hooks is not None:
            return self.hooks[1](self.inst, state)
        d = vars(self.inst)
        for key in [k for k in d if not k.startswith("_")]:
            del d[key]
        d.update(state)

    def rollback(self) -> None:  # back to the last committed state
        self.overwrite(_json_loads(self.committed))

    def serialise_state(self) -> tuple[str | None, str | None, str | None]:
        """(state_json, error_kind, error)."""
        try:
            text = strict_dumps(self.public_state())
        except Exception as exc:  # noqa: BLE001 - a class's own __sandbox_state__ may raise anything
            return None, "unserializable", f"state is not JSON-serialisable: {type(exc).__name__}: {exc}"
        if len(text) > self.limits["state_cap"]:
            return None, "oversize", f"state is {len(text)} characters, over the cap of {self.limits['state_cap']}"
        return text, None, None

    def load(self, msg: dict) -> str:
        # A real module, registered: dataclasses and typing look a class's module up in sys.modules.
        # dont_inherit: this file's `from __future__ import annotations` must not leak into env code
        # (it turned every annotation into a string, and a @dataclass in the env could not load).
        module = types.ModuleType("envcode")
        module.__dict__["__builtins__"] = builtins
        sys.modules["envcode"] = module
        ns = module.__dict__
        try:
            exec(compile(msg["code"], "<env>", "exec", dont_inherit=True), ns)
        except BaseException as exc:  # noqa: BLE001 - untrusted code may raise anything
            return error_reply("load", f"the code does not run: {traceback_tail(exc)}", self.out.take())
        cls = ns.get(msg["class_name"])
        if not isinstance(cls, type):
            return error_reply("load", f"no class named {msg['class_name']!r} in the code", self.out.take())
        init = msg.get("init")
        try:
            self.hooks = state_hooks(cls)
            self.inst = self.construct(cls, init)
            if not hasattr(self.inst, "__dict__"):
                return error_reply("load", f"{cls.__name__} instances have no __dict__ (slots are not supported)")
            if msg.get("restore") is not None:
                self.overwrite(msg["restore"])
        except BaseException as exc:  # noqa: BLE001
            return error_reply("load", f"constructing {cls.__name__} failed: {traceback_tail(exc)}", self.out.take())
        text, kind, err = self.serialise_state()
        if text is None:
            return error_reply("load", f"after construction: {err}", self.out.take())
        self.committed = text
        return '{"ok":true,"state":' + text + ',"output":' + dumps(clean(self.out.take())) + "}"

    @staticmethod
    def construct(cls: type, init: dict | None):
        """EnvScaler's runtime, step for step: `cls(<deep copy of the config>)` (`cls({})` when there is
        none), `cls()` if that raises TypeError, then every top-level key of another deep copy set as an
        attribute. Classes in EnvScaler's own style declare empty containers and rely on that setattr;
        self-loading classes get the same values twice. The second copy keeps a stored `init_config`
        from aliasing the live containers (the reference aliases them: its `init_config` drifts)."""
        config = init or {}
        try:
            inst = cls(copy.deepcopy(config))
        except TypeError as first:
            try:
                inst = cls()
            except TypeError:
                raise first from None
        for key, value in copy.deepcopy(config).items():
            setattr(inst, key, value)
        return inst

    def call(self, msg: dict) -> str:
        tool, args = msg["tool"], msg["args"]
        if not isinstance(tool, str) or tool.startswith("_"):
            return error_reply("schema", f"{tool!r} is private; only public methods are tools")
        if not isinstance(args, dict):
            return error_reply("schema", "arguments must be a JSON object")
        static = inspect.getattr_static(self.inst, tool, MISSING)
        if static is MISSING:
            return error_reply("schema", f"unknown tool {tool!r}: {type(self.inst).__name__} has no such method")
        if tool in vars(self.inst) or not isinstance(static, (types.FunctionType, staticmethod, classmethod)):
            return error_reply("schema", f"{tool!r} is not a method of {type(self.inst).__name__}")
        fn = getattr(self.inst, tool)
        sig = self.signatures.get(tool)
        if sig is None:
            try:
                sig = self.signatures[tool] = inspect.signature(fn)
            except (TypeError, ValueError):
                sig = None
        if sig is not None:
            try:
                sig.bind(**args)
            except TypeError as exc:
                return error_reply("schema", f"arguments do not fit {tool}{sig}: {exc}")
        set_cpu_window(self.limits["call_timeout_s"])
        try:
            result = fn(**args)
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt are tool errors too
            message = traceback_tail(exc)
            self.restore_if_changed()
            return error_reply("exception", message, self.out.take())
        try:
            result_text = strict_dumps(result)
        except (TypeError, ValueError, RecursionError) as exc:
            self.restore_if_changed()
            return error_reply("unserializable", f"the result is not JSON-serialisable: {type(exc).__name__}: {exc}",
                               self.out.take())
        if len(result_text) > self.limits["result_cap"]:
            self.restore_if_changed()
            return error_reply("oversize", f"the result is {len(result_text)} characters, over the cap of "
                               f"{self.limits['result_cap']}", self.out.take())
        text, kind, err = self.serialise_state()
        if text is None:
            self.rollback()
            return error_reply(kind, err + "; the previous state is kept", self.out.take())
        reply = '{"ok":true,"result":' + result_text + ',"output":' + dumps(clean(self.out.take()))
        if text != self.committed:
            self.committed = text
            reply += ',"state":' + text
        return reply + "}"

    def restore_if_changed(self) -> None:
        text, _, _ = self.serialise_state()
        if text != self.committed:
            self.rollback()


def run_episode(req_fd: int, rep_fd: int, out: CappedOutput, limits: dict) -> None:
    child = EpisodeChild(out, limits)
    while True:
        msg = read_frame(req_fd)
        if msg is None:
            return
        op = msg.get("op")
        if op == "load":
            reply = child.load(msg)
        elif op == "call" and child.inst is not None:
            reply = child.call(msg)
        else:
            reply = error_reply("protocol", f"unexpected op {op!r}")
        write_frame(rep_fd, reply)


# ---------------------------------------------------------------------------------------------
# child: check functions
# ---------------------------------------------------------------------------------------------
def run_checks(req_fd: int, rep_fd: int, out: CappedOutput, limits: dict) -> None:
    states = read_frame(req_fd)
    if states is None:
        return
    initial, final = states["initial_state"], states["final_state"]
    while True:
        msg = read_frame(req_fd)
        if msg is None:
            return
        set_cpu_window(limits["call_timeout_s"])
        ns = {"__name__": "check", "__builtins__": builtins, "initial_state": copy.deepcopy(initial)}
        try:
            exec(compile(msg["source"], "<check>", "exec", dont_inherit=True), ns)
            func = ns.get("check_func")
            if not callable(func):
                reply = {"passed": None, "error": "the source defines no callable check_func"}
            else:
                value = func(copy.deepcopy(final))
                if type(value) is bool:
                    reply = {"passed": value, "error": None}
                else:
                    reply = {"passed": None, "error": f"check_func returned {type(value).__name__}, not bool"}
        except BaseException as exc:  # noqa: BLE001
            reply = {"passed": None, "error": clean(traceback_tail(exc))}
        out.take()
        write_frame(rep_fd, dumps(reply))


# ---------------------------------------------------------------------------------------------
# zygote
# ---------------------------------------------------------------------------------------------
def child_main(kind: str, req_fd: int, rep_fd: int, limits: dict) -> None:
    code = 0
    try:
        out = enter_child(req_fd, rep_fd, limits)
        (run_episode if kind == "episode" else run_checks)(req_fd, rep_fd, out, limits)
    except BaseException:  # noqa: BLE001 - never fall back into the zygote's loop
        code = 70
    finally:
        os._exit(code)


def describe_status(status: int) -> dict:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return {"signal": sig, "signal_name": name}
    return {"exit_code": os.WEXITSTATUS(status)}


def zygote(limits: dict) -> None:
    ctl = socket.socket(fileno=int(limits["control_fd"]))
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    for name in limits.get("preload") or ():  # trusted installed packages only (sandbox/imports.py)
        try:
            __import__(name)
        except BaseException as exc:  # noqa: BLE001 - any failure means no usable zygote; the host shows stderr
            raise SystemExit(f"preloading {name} failed: {type(exc).__name__}: {exc}") from None
    seccomp_problem = probe_seccomp() if limits.get("seccomp") else "disabled by configuration"
    limits = dict(limits, seccomp=seccomp_problem is None)
    ctl.send(dumps({"hello": True, "pid": os.getpid(), "uid": os.getuid(), "seccomp": seccomp_problem is None,
                    "seccomp_problem": seccomp_problem, "python": sys.version.split()[0]}).encode())
    exited: dict[int, int] = {}
    while True:
        data = ctl.recv(1 << 16)
        if not data:
            return
        try:
            req = json.loads(data)
            op = req["op"]
        except (ValueError, KeyError, TypeError):
            ctl.send(dumps({"ok": False, "error": "bad control message"}).encode())
            continue
        while True:  # opportunistic reaping so finished children never pile up as zombies
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            exited[pid] = status
        if op == "spawn":
            child_limits = dict(limits, call_timeout_s=float(req.get("call_timeout_s", 5.0)))
            req_r, req_w = os.pipe()
            rep_r, rep_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                ctl.close()
                os.close(req_w)
                os.close(rep_r)
                child_main(req.get("kind", "episode"), req_r, rep_w, child_limits)
            os.close(req_r)
            os.close(rep_w)
            socket.send_fds(ctl, [dumps({"ok": True, "pid": pid}).encode()], [req_w, rep_r])
            os.close(req_w)
            os.close(rep_r)
        elif op == "reap":
            pid = int(req["pid"])
            status = exited.pop(pid, None)
            if status is None:
                for kill in (os.killpg, os.kill):
                    try:
                        kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    status = os.waitpid(pid, 0)[1]
                except ChildProcessError:
                    status = None
            ctl.send(dumps({"ok": True, "status": None if status is None else describe_status(status)}).encode())
        elif op == "ping":
            ctl.send(dumps({"ok": True, "children": len(exited)}).encode())
        else:
            ctl.send(dumps({"ok": False, "error": f"unknown op {op!r}"}).encode())
        if len(exited) > 10000:  # statuses nobody asked for; keep memory bounded
            exited.clear()


if __name__ == "__main__":
    zygote(json.loads(sys.argv[1]))
