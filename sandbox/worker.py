"""The in-jail half of the sandbox: the zygote's entry point and what a unit's member runs.

This file runs under the jail's interpreter (`python -s -P -S -B worker.py '<limits json>'`, environment
PATH, PYTHONHASHSEED=0 and TZ=UTC only: backend.py) and imports
the standard library only (plus the jail_* modules and seccomp_filter.py copied next to it). The
zygote (jail_zygote.py) only ever runs trusted code; untrusted code (env classes, check functions) is
exec'd exclusively in a unit's member process (jail_unit.py), after it has dropped its capabilities,
taken its rlimits, closed every inherited descriptor but its pipes and loaded the seccomp filter. A
member's damage (patched builtins, threads, a corrupted heap) dies with its unit.

A member serves one episode (a `load` frame, then `call` frames on the same live instance), one
check (a single `check` frame) or, in a unit of kind "batch", one batch of checks (jail_batch.py:
the member is then a trusted supervisor forking one child per check), then exits.

Wire formats (never pickle):
* control, zygote <-> host: one JSON object per SOCK_SEQPACKET message on the inherited control fd
  (its number is `control_fd` in the limits); `spawn` answers carry the unit's request pipe, reply
  pipe and setup socket as SCM_RIGHTS descriptors.
* member <-> host: frames of a 4-byte big-endian length followed by UTF-8 JSON, over two pipes; the
  member serialises with jail_json.dumps, the host parses with jail_json.loads (same limits). An episode's
  requests carry a sequence number (`seq`) that each reply repeats; a `sync` request is answered at once,
  so the host can tell a frame a tool wrote itself from the worker's own replies (docs/sandbox.md, "Wire").
"""

import ctypes

ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0 before anything else: no jail process may
# ptrace the zygote or open its /proc files; every unit inherits it (checked by the host per unit).

import builtins  # noqa: E402
import inspect  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

if sys.version_info < (3, 11):
    sys.exit("the jail interpreter must be Python >= 3.11 (sandbox.python)")
# Started without -E so that PYTHONHASHSEED applies (backend.PYTHON_FLAGS; 0 for every episode, others only in
# the pool's check-repeat zygotes): refuse to run if the hash seed is not fixed or if any other PYTHON*
# variable reached us, so that can never change silently.
_stray = sorted(k for k in os.environ if k.startswith("PYTHON") and k != "PYTHONHASHSEED")
_seed = os.environ.get("PYTHONHASHSEED", "")
# (`sys.flags.hash_randomization` is 1 for any seed but 0, fixed or not; -E would make the interpreter ignore it.)
if sys.flags.ignore_environment or not _seed.isdigit() or (_seed == "0" and sys.flags.hash_randomization) or _stray:
    sys.exit(f"the jail interpreter needs a fixed PYTHONHASHSEED and no other PYTHON* variable (got {_stray or 'no fixed seed'})")
# `-P` keeps the script's own directory off sys.path; the other jail modules sit next to this file in
# the read-only jail directory (copied there by SandboxPool with the worker).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jail_hooks  # noqa: E402
from jail_io import CappedOutput, read_frame, write_frame  # noqa: E402
import jail_json  # noqa: E402
import jail_load  # noqa: E402
from jail_batch import run_batch  # noqa: E402
from jail_check_audit import check_gate, warm_imports  # noqa: E402
from jail_check_guards import guard_check_classes  # noqa: E402
from jail_unit import INTERNAL_ERROR, become_spare, harden_member, report  # noqa: E402
from jail_zygote import close_ends, serve  # noqa: E402
from seccomp_filter import install_seccomp, prepared_child_rules  # noqa: E402

# Installed packages the pool copied next to us (sandbox/imports.py); last, so they never shadow stdlib.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "site"))
# Every module a check may import, pre-imported: forked children get them for free, and none is read from disk
# while a check runs (its audit hook refuses `open` and `import` then: jail_check_audit.py).
warm_imports()

TB_CHARS = 2000
MISSING = object()

# ---------------------------------------------------------------------------------------------
# child: limits and hygiene
# ---------------------------------------------------------------------------------------------
def set_cpu_window(seconds: float) -> None:
    """Soft CPU limit = CPU used so far + this call's budget (SIGXCPU); the hard limit stays put."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def traceback_tail(exc: BaseException, format_lines=traceback.format_exception) -> str:
    """`Type: message` plus the last frames of untrusted code only (the worker's frames are dropped);
    a check's is formatted under its audit gate (`Gate.format_exception`)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    lines = format_lines(type(exc), exc, tb)
    text = "".join(lines).strip()
    if len(text) > TB_CHARS:
        text = "..." + text[-TB_CHARS:]
    return text


_json_dumps, _json_loads = json.dumps, json.loads  # captured: user code rebinding json.* cannot reach us


def dumps(obj) -> str:
    return _json_dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def strict_dumps(obj, max_depth: int, max_chars: int, max_values: int | None = None) -> str:
    """What the host accepts (jail_json): valid UTF-8 without lone surrogates (they would poison every later
    consumer: store, exports), no NaN, at most `max_depth` levels, 64-bit integers, at most `max_chars`.
    Raises jail_json.JSONTooLarge, TypeError or ValueError."""
    return jail_json.dumps(obj, max_depth, max_chars, max_values)


def clean(text: str) -> str:
    """Free text from untrusted code (print output, messages) made encodable, never rejected."""
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def error_reply(kind: str, message: str, output: str = "") -> str:
    return dumps({"ok": False, "error_kind": kind, "error": clean(message), "output": clean(output)})


# ---------------------------------------------------------------------------------------------
# child: an episode (one live instance, many calls)
# ---------------------------------------------------------------------------------------------
class EpisodeChild:
    def __init__(self, out: CappedOutput, limits: dict) -> None:
        self.out, self.limits = out, limits
        self.inst = None
        self.hooks = None
        self.result_hook = None  # a class's `__sandbox_result__(value)`: its way to write non-JSON results
        self.committed = "{}"
        self.signatures: dict[str, inspect.Signature] = {}
        self.envscaler = False  # the load's `rules`: play EnvScaler's `step` (results shown as text, raised calls keep state)

    def public_state(self) -> dict:
        """The state the host sees: the instance's public attributes, or its own `__sandbox_state__`."""
        if self.hooks is None:  # base methods only: a str subclass key cannot answer startswith() itself
            d = vars(self.inst)
            for k in dict.keys(d):
                if not isinstance(k, str):  # `self.__dict__[101] = 1`: no attribute, and JSON would write "101"
                    raise TypeError(f"the instance's __dict__ holds the non-string key {_key_repr(k)}; attributes "
                                    "are named by strings")
            return {k: v for k, v in dict.items(d) if not str.startswith(k, "_")}
        state = self.hooks[0](self.inst)
        if not isinstance(state, dict):
            raise TypeError(f"__sandbox_state__ returned {type(state).__name__}, not a dict")
        return state

    def overwrite(self, state: dict) -> None:
        """Make the live instance hold a committed snapshot (its public attributes, or its own restore hook)."""
        if self.hooks is not None:
            return self.hooks[1](self.inst, state)
        d = vars(self.inst)
        for key in [k for k in dict.keys(d) if not isinstance(k, str) or not str.startswith(k, "_")]:
            dict.__delitem__(d, key)  # non-string keys too: a committed state never holds one
        dict.update(d, state)

    def rollback(self) -> None:  # back to the last committed state
        self.overwrite(_json_loads(self.committed))

    def serialise_state(self) -> tuple[str | None, str | None, str | None]:
        """(state_json, error_kind, error)."""
        try:
            text = strict_dumps(self.public_state(), self.limits["max_depth"], self.limits["state_cap"],
                                self.limits.get("state_values_cap"))
        except jail_json.JSONTooManyValues as exc:
            return None, "oversize", f"state holds {exc.size} values, over the cap of {exc.cap} (state_values_cap)"
        except jail_json.JSONTooLarge as exc:
            return None, "oversize", f"state is {exc.size} characters, over the cap of {exc.cap}"
        except Exception as exc:  # noqa: BLE001 - a class's own __sandbox_state__ may raise anything
            return None, "unserializable", f"state is not JSON-serialisable: {type(exc).__name__}: {exc}"
        return text, None, None

    def load(self, msg: dict) -> str:
        # A real module registered under its name: `@dataclass` (and typing helpers) look the class's
        # module up in sys.modules; `dont_inherit` keeps this file's `from __future__ import
        # annotations` out of the env code (it would turn the env's annotations into strings).
        module = types.ModuleType("envcode")
        module.__dict__["__builtins__"] = builtins.__dict__  # a dict, as in EnvScaler's (imported) runtime
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
        self.envscaler = msg.get("rules") == "envscaler"
        try:
            self.hooks = jail_hooks.state_hooks(cls)
            hook = jail_hooks.hook(cls, "result")
            self.result_hook = hook if callable(hook) else None
            self.inst, held = jail_load.construct(cls, init)
            if not hasattr(self.inst, "__dict__"):
                return error_reply("load", f"{cls.__name__} instances have no __dict__ (slots are not supported)")
            forged = jail_hooks.own_dict_attribute(type(self.inst))
            if forged is not None:
                return error_reply("load", f"{forged.__name__} defines __dict__ itself; the state is read from the "
                                   "instance's own attribute dictionary, which such a class would hide")
            if msg.get("restore") is not None:
                self.overwrite(msg["restore"])
        except BaseException as exc:  # noqa: BLE001
            return error_reply("load", f"constructing {cls.__name__} failed: {traceback_tail(exc)}", self.out.take())
        text, kind, err = self.serialise_state()
        if text is None:
            return error_reply("load", f"after construction: {err}", self.out.take())
        self.committed = text
        extra = "".join(f',"{name}":{dumps(keys)}' for name, keys in held.items() if name != "loaded" and keys)
        return ('{"ok":true,"state":' + text + ',"loaded":' + dumps(held["loaded"]) + extra + ',"output":'
                + dumps(clean(self.out.take())) + "}")

    def call(self, msg: dict) -> str:
        tool, args = msg["tool"], msg["args"]
        if not isinstance(tool, str) or tool.startswith("_"):
            return error_reply("schema", f"{tool!r} is private; only public methods are tools")
        if not isinstance(args, dict):
            return error_reply("schema", "arguments must be a JSON object")
        static = inspect.getattr_static(self.inst, tool, MISSING)
        if static is MISSING:
            return error_reply("schema", f"unknown tool {tool!r}: {type(self.inst).__name__} has no such method")
        if tool in vars(self.inst):
            return error_reply("schema", f"{tool!r} is not a method of {type(self.inst).__name__}")
        plain = isinstance(static, (types.FunctionType, staticmethod, classmethod))
        if plain:  # a def, or an alias or lambda bound at class level (`lend = lend_book`)
            fn = getattr(self.inst, tool)
        else:
            # a property or another class attribute: EnvScaler's runtime, `getattr(env, name)(**arguments)`,
            # reads the value (a getter runs) and calls it; a value that is not callable raises its TypeError
            # there (the episode ends at 0, its state as the getter left it), and is no method here
            set_cpu_window(self.limits["call_timeout_s"])
            try:
                fn = getattr(self.inst, tool)
            except BaseException as exc:  # noqa: BLE001
                return self.raised(traceback_tail(exc))
            if not callable(fn):
                if self.envscaler:
                    return self.raised(f"TypeError: '{type(fn).__name__}' object is not callable")
                self.restore_if_changed()
                return error_reply("schema", f"{tool!r} is not a method of {type(self.inst).__name__}",
                                   self.out.take())
        sig = self.signatures.get(tool) if plain else None
        if sig is None:
            try:
                sig = inspect.signature(fn)
                if plain:
                    self.signatures[tool] = sig
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
            if self.envscaler:
                result = as_envscaler_shows(result, self.limits)
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt are tool errors too
            return self.raised(traceback_tail(exc))
        if self.result_hook is not None:
            try:
                result = self.result_hook(result)
            except BaseException as exc:  # noqa: BLE001
                self.restore_if_changed()
                return error_reply("unserializable", f"the result could not be written: {traceback_tail(exc)}",
                                   self.out.take())
        try:
            result_text = strict_dumps(result, self.limits["max_depth"], self.limits["result_cap"],
                                       self.limits.get("state_values_cap"))
        except jail_json.JSONTooManyValues as exc:
            self.restore_if_changed()
            return error_reply("oversize", f"the result holds {exc.size} values, over the cap of {exc.cap} "
                               "(state_values_cap)", self.out.take())
        except jail_json.JSONTooLarge as exc:
            self.restore_if_changed()
            return error_reply("oversize", f"the result is {exc.size} characters, over the cap of {exc.cap}",
                               self.out.take())
        except Exception as exc:  # noqa: BLE001 - TypeError, ValueError, RecursionError: jail_json reads through
            # the base types' own methods, so no code of the env's runs here (a dict subclass's items() is not called)
            self.restore_if_changed()
            return error_reply("unserializable", f"the result is not JSON-serialisable: {type(exc).__name__}: {exc}",
                               self.out.take())
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

    def raised(self, message: str) -> str:
        """The reply to a call whose tool raised. Factory rules undo what it changed. EnvScaler's `step` keeps
        the instance as the method left it (its recorded final state shows a partial change), so under
        envscaler rules the state it left is committed and sent with the error, unless our JSON cannot carry
        it (then it is undone, as after any call: docs/interop.md, differences table)."""
        if not self.envscaler:
            self.restore_if_changed()
            return error_reply("exception", message, self.out.take())
        text, _, _ = self.serialise_state()
        reply = error_reply("exception", message, self.out.take())
        if text is None:
            self.rollback()
        elif text != self.committed:
            self.committed = text
            reply = reply[:-1] + ',"state":' + text + "}"
        return reply


def as_envscaler_shows(result: object, limits: dict) -> object:
    """The result as EnvScaler's `step` observes it when our JSON cannot carry it: `f"{result}"` (a raise there
    is the tool's raise). A result JSON can carry, or one only over the size cap, is left to the caller."""
    try:
        strict_dumps(result, limits["max_depth"], limits["result_cap"])
        return result
    except jail_json.JSONTooLarge:
        return result
    except Exception:  # noqa: BLE001 - TypeError, ValueError, RecursionError: not JSON
        pass
    return clean(str.__str__(format(result, "")))


def _key_repr(key: object) -> str:
    """A key of a foreign type, named without running its code (no `__repr__` of the env's own)."""
    base = next((b for b in (bool, int, float, complex, bytes, type(None)) if isinstance(key, b)), None)
    name = type(key).__name__[:40]
    return f"of type {name}" if base is None else f"{base.__repr__(key)[:80]} ({name})"


def warm_episode(episode: dict, limits: dict) -> None:
    """One warm-up episode in the zygote (jail_zygote.py, `warm_up`): load and calls exactly as a unit runs
    them, minus the pipes. Trusted code on trusted data only (the pool's `JailImports.warm_up`)."""
    child = EpisodeChild(CappedOutput(int(limits["output_cap"])), dict(limits, call_timeout_s=60.0))
    child.load({"code": episode["code"], "class_name": episode["class_name"], "init": episode.get("init")})
    if child.inst is None:
        raise RuntimeError(f"the warm-up episode {episode['class_name']} did not load")
    for call in episode.get("calls", ()):
        child.call({"tool": call["tool"], "args": call["args"]})


def run_episode(first: dict, req_fd: int, rep_fd: int, out: CappedOutput, limits: dict) -> None:
    child = EpisodeChild(out, dict(limits, call_timeout_s=float(first.get("cpu_s", 5.0))))
    msg = first
    while msg is not None:
        op = msg.get("op")
        if op == "load" and child.inst is None:
            reply = child.load(msg)
        elif op == "call" and child.inst is not None:
            reply = child.call(msg)
        elif op == "sync":  # the host asks for nothing but this reply: every frame before it was for earlier requests
            reply = '{"ok":true,"output":""}'
        else:
            reply = error_reply("protocol", f"unexpected op {op!r}")
        seq = msg.get("seq")
        if type(seq) is int:  # each reply names the request it answers (the host checks it)
            reply = '{"seq":' + str(seq) + "," + reply[1:]
        write_frame(rep_fd, reply)
        msg = read_frame(req_fd)


# ---------------------------------------------------------------------------------------------
# member: one check function
# ---------------------------------------------------------------------------------------------
CHECK_DEPTH = 990
"""Nested calls a check can make before RecursionError, wherever it runs (EnvScaler's plain exec reaches ~997)."""


def _calls_left() -> int:
    """How many nested calls this frame can still make: measured, not counted, so a C frame on the way counts too."""
    def down(n: int) -> int:
        try:
            return down(n + 1)
        except RecursionError:
            return n
    return down(0)


def run_check(msg: dict, out: CappedOutput, limits: dict) -> str:
    """`check_func(final_state)` with `initial_state` as a global; the unit serves this one check only. The
    recursion limit is set relative to the depth this is called at: a batch's child, a unit of its own and
    a repeat's zygote reach it through different stacks, and a check whose verdict follows the depth it can
    reach was verified at one and paid 0.0 at another (outside check rt14-A F4)."""
    set_cpu_window(float(msg.get("cpu_s", 5.0)))
    guard_check_classes()
    sys.setrecursionlimit(sys.getrecursionlimit() - _calls_left() + CHECK_DEPTH)
    states = msg["states"]
    # The globals EnvScaler's `run_check_function` gives a check, no more: `__builtins__` is the dict, as
    # that imported module passes it (checks may index it: `__builtins__["len"]`), and there is no
    # `__name__`, so a check reading it (or defining a class) finds the builtins' own: "builtins"
    ns = {"__builtins__": builtins.__dict__, "initial_state": states["initial_state"]}
    gate = check_gate(run_check.__code__, limits.get("check_audit", True))  # opened and closed by this code only
    code = None
    try:
        code = compile(msg["source"], "<check>", "exec", dont_inherit=True)
        gate.start(code, module_level=True)  # EnvScaler's marker wrapper compiles its helper here
        try:
            exec(code, ns)
        finally:
            gate.stop(code)
        func = ns.get("check_func")
        gate.start(code)
        try:
            value = func(states["final_state"]) if callable(func) else None
        finally:
            gate.stop(code)
        if not callable(func):
            reply = {"passed": None, "error": "the source defines no callable check_func"}
        elif type(value) is bool:
            reply = {"passed": value, "error": None}
        else:
            reply = {"passed": None, "error": f"check_func returned {type(value).__name__}, not bool"}
    except BaseException as exc:  # noqa: BLE001
        reply = {"passed": None, "error": clean(traceback_tail(exc, gate.format_exception(code)))}
    reply = gate.poisoned(reply, clean)  # a refusal the check caught is no verdict either
    out.take()
    return dumps(reply)


# ---------------------------------------------------------------------------------------------
# member entry (called by jail_zygote in the unit's member process)
# ---------------------------------------------------------------------------------------------
def member_main(req_fd: int, rep_fd: int, ready, limits: dict, spare: tuple | None = None) -> None:
    """Harden, tell the host we are ready (it verifies us from outside before sending any code), serve.

    A unit of kind "batch" is a check-batch supervisor (jail_batch.py): trusted code that forks one
    child per check; it alone loads the supervisor seccomp variant, and it serves only a `batch` frame.

    `spare` (a unit of kind "pair": the unit ends of a second request pipe, reply pipe and setup socket):
    after hardening, fork a second member on those channels that serves one episode of its own.
    Forked before any frame arrived, it has run nothing of ours when the host gives it code. Both
    harden as one: the member loads the supervisor variant of the filter (which may fork), forks,
    and then each process stacks the process rules for its own pid (jail_batch.py does the same for
    its check children), so each ends with exactly the unit filter; the rest (session, signals,
    descriptors, capabilities, rlimits) the spare inherits. This member, which will run an episode's
    code, closes the spare's channels and can then neither reach it nor forge what it says: its filter
    refuses signals, ptrace and process_vm_* to any pid but its own, and both are non-dumpable.
    Why: a second clean process in the same unit costs a fork; a second unit costs a clone into new
    namespaces, its hardening, verification, cgroup and teardown (a BFCL task scores in the spare)."""
    batch = limits.get("unit_kind") == "batch"
    keep = {req_fd, rep_fd, ready.fileno()}
    if spare is not None:
        keep |= {spare[0], spare[1], spare[2].fileno()}
    try:
        harden_member(keep, limits, lambda: install_seccomp(supervisor=batch or spare is not None))
        if spare is not None:
            if os.fork() == 0:
                close_ends((req_fd, rep_fd, ready))
                req_fd, rep_fd, ready = spare
                become_spare()
            else:
                close_ends(spare)
            if limits.get("seccomp"):
                why = prepared_child_rules().load(os.getpid())
                if why is not None:
                    raise OSError(f"stacking the process rules failed: {why}")
    except BaseException as exc:  # noqa: BLE001
        report(ready, dumps({"ok": False, "error": clean(f"member setup: {type(exc).__name__}: {exc}")[:400]}).encode())
        os._exit(INTERNAL_ERROR)
    serve_member(req_fd, rep_fd, ready, limits, batch)


def serve_member(req_fd: int, rep_fd: int, ready, limits: dict, batch: bool) -> None:
    """A hardened member: report ready, then serve one episode, one check or one batch, then exit."""
    code = 0
    try:
        random.seed()  # the zygote's random state must not be shared by every unit
        report(ready, b'{"ok":true}')
        ready.close()
        out = CappedOutput(int(limits["output_cap"]))
        sys.stdout = sys.stderr = out
        sys.stdin = io.StringIO("")
        first = read_frame(req_fd)
        if first is None:
            return
        if batch:
            if first.get("op") == "batch":
                run_batch(first, rep_fd, limits, lambda msg: run_check(msg, out, limits), dumps, write_frame)
        elif first.get("op") == "check":
            write_frame(rep_fd, run_check(first, out, limits))
        else:
            run_episode(first, req_fd, rep_fd, out, limits)
    except BaseException:  # noqa: BLE001 - never fall back into the zygote's loop
        code = INTERNAL_ERROR
    finally:
        os._exit(code)


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]), member_main, warm_episode)
