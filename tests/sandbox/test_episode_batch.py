"""Spec: `pool.episode_batch(code, cls, config, tools)` runs many short episodes of one class in serial
units (sandbox/episode_batch.py, sandbox/jail_serial.py) with exactly the outcomes of fresh episodes.

What must hold, each checked from the host: every episode runs in a process of its own, a member forked
by the unit's trusted supervisor (so the specs below would pass vacuously if the batch fell back to
ordinary episodes: `_member_of_a_serial_unit` asserts it); outcomes (result, state, diff, error kind and
message) equal a fresh episode's for ok calls, exceptions, schema refusals, timeouts, crashes, exits,
memory exhaustion; a probe that crashes, times out, exhausts memory or exits changes no sibling's
outcome; no probe sees what an earlier one left (module globals, builtins, os.environ, /tmp, the memory
it held); two batches never share a unit; untrusted code never runs in the supervisor (it is pid 1
and may fork; every member is not, carries one more seccomp filter and may not fork).
"""

from __future__ import annotations

import os
import re
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from sandbox import SandboxPool

CODE = '''
import builtins, ctypes, os, sys, time

STASH = []


class Probe:
    def __init__(self, config=None):
        self.items = {"a": 1}
        self.pid = os.getpid()

    def ping(self):
        return {"success": True, "pid": os.getpid()}

    def add(self, key: str, value: int):
        self.items[key] = value
        return {"success": True}

    def boom(self):
        raise ValueError("boom")

    def spin(self):
        while True:
            pass

    def sleep(self):
        time.sleep(60)

    def exit(self, code: int):
        os._exit(code)

    def segv(self):
        ctypes.string_at(0)

    def hog(self):
        return len(bytearray(1 << 30))

    def hold(self, mib: int):
        block = bytearray(mib << 20)
        block[::4096] = b"x" * len(block[::4096])
        STASH.append(block)
        return {"success": True, "held": mib}

    def unserializable(self):
        return {1, 2}

    def fork(self):
        try:
            os.fork()
            return "forked"
        except OSError as exc:
            return type(exc).__name__

    def stash(self, secret: str):
        STASH.append(secret)
        builtins.SECRET = secret
        os.environ["SECRET"] = secret
        try:
            with open("/tmp/secret", "w") as fh:
                fh.write(secret)
            wrote = True
        except OSError:
            wrote = False
        return {"success": True, "wrote_tmp": wrote}

    def look(self):
        try:
            with open("/tmp/secret") as fh:
                tmp = fh.read()
        except OSError:
            tmp = None
        return {"stash": [s for s in STASH if isinstance(s, str)], "builtins": getattr(builtins, "SECRET", None),
                "environ": os.environ.get("SECRET"), "tmp": tmp, "procs": sorted(os.listdir("/proc"))}

    def signal_all(self):
        out = {}
        for pid in range(1, 20):
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, 9)
                out[pid] = "killed"
            except OSError as exc:
                out[pid] = type(exc).__name__
        return out
'''
STARVED = re.compile(r" \(plus [0-9.]+ s it waited for a busy CPU\)")
TOOL_SCHEMA = [{"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "integer"}},
    "required": ["key", "value"], "additionalProperties": False}}}]


def _status(host_pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{host_pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def _gone(host_pid: int) -> bool:
    """Exited: no process, or a zombie (its memory is freed; its parent reaps it)."""
    try:
        return _status(host_pid)["State"].startswith("Z")
    except FileNotFoundError:
        return True


def _member_of_a_serial_unit(ep: Any) -> int:
    """The supervisor's host pid; fails unless `ep` runs in a member forked by a serial unit's supervisor."""
    member = _status(ep.host_pid)
    supervisor_pid = int(member["PPid"])
    supervisor = _status(supervisor_pid)
    assert member["NSpid"].split()[-1] != "1" and supervisor["NSpid"].split()[-1] == "1"
    return supervisor_pid


def _outcome(pool: Any, tool: str, args: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> tuple:
    ep = pool.open_episode(CODE, "Probe", {"items": {"a": 1}}, tools)
    try:
        if hasattr(pool, "units_made"):
            _member_of_a_serial_unit(ep)
        out = ep.call(tool, args)
    finally:
        ep.close()
    state = dict(out.state, pid=None)  # a member is not pid 1 of its namespace; nothing else differs
    # how long a timed-out call waited for a busy CPU depends on the machine's load, in either kind of unit
    error = None if out.error is None else STARVED.sub("", out.error)
    return out.ok, out.error_kind, error, out.result if tool != "ping" else None, state, out.state_diff


CASES = [
    ("ping", {}), ("add", {"key": "b", "value": 2}), ("boom", {}), ("nope", {}), ("add", {"key": 1}),
    ("spin", {}), ("sleep", {}), ("exit", {"code": 3}), ("hog", {}), ("unserializable", {}),
    ("segv", {}),
]


@pytest.mark.parametrize(("tool", "args"), CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_outcomes_equal_a_fresh_episodes(jail: SandboxPool, tool: str, args: dict[str, Any]) -> None:
    with jail.episode_batch(CODE, "Probe", {"items": {"a": 1}}, None) as batch:
        assert _outcome(batch, tool, args) == _outcome(jail, tool, args)


def test_schema_refusals_equal_a_fresh_episodes(jail: SandboxPool) -> None:
    with jail.episode_batch(CODE, "Probe", {"items": {"a": 1}}, TOOL_SCHEMA) as batch:
        for args in ({"key": "b"}, {"key": "b", "value": "2"}, {"key": "b", "value": 2, "x": 1}):
            assert _outcome(batch, "add", args, TOOL_SCHEMA) == _outcome(jail, "add", args, TOOL_SCHEMA)


def test_a_failing_probe_changes_no_siblings_outcome(jail: SandboxPool) -> None:
    benign = _outcome(jail, "add", {"key": "b", "value": 2})
    with jail.episode_batch(CODE, "Probe", {"items": {"a": 1}}, None) as batch:
        seen = []
        for tool, args in [("spin", {}), ("exit", {"code": 9}), ("hog", {}), ("segv", {}), ("sleep", {}),
                           ("hold", {"mib": 150}), ("boom", {})]:
            failed = _outcome(batch, tool, args)
            seen.append(failed[1])
            assert _outcome(batch, "add", {"key": "b", "value": 2}) == benign
        assert seen == ["timeout", "crash", "exception", "crash", "timeout", None, "exception"]


def test_memory_a_closed_probe_held_is_free_for_the_next(jail: SandboxPool) -> None:
    """The unit's cgroup is shared (256 + 64 MiB here): a closed episode's member is killed and waited for
    before its unit serves another, so two 200 MiB probes in a row both succeed."""
    with jail.episode_batch(CODE, "Probe", None, None) as batch:
        supervisors = set()
        for _ in range(3):
            with batch.open_episode(CODE, "Probe", None, None) as ep:
                supervisors.add(_member_of_a_serial_unit(ep))
                out = ep.call("hold", {"mib": 200})
                assert out.ok and out.result == {"success": True, "held": 200}, out.error
                member = ep.host_pid
            assert _gone(member)  # when close() returns, not later (the pool's keeper kills ordinary units later)
        assert batch.units_made == 1 and len(supervisors) == 1


def test_a_probe_sees_nothing_an_earlier_one_left(jail: SandboxPool) -> None:
    with jail.episode_batch(CODE, "Probe", None, None) as batch:
        with batch.open_episode(CODE, "Probe", None, None) as first:
            sup = _member_of_a_serial_unit(first)
            assert first.call("stash", {"secret": "s3cret"}).result == {"success": True, "wrote_tmp": False}
            assert first.call("look", {}).result["stash"] == ["s3cret"]  # the stash works within an episode
        with batch.open_episode(CODE, "Probe", None, None) as second:
            assert _member_of_a_serial_unit(second) == sup  # same unit, fresh process
            seen = second.call("look", {}).result
        assert seen["stash"] == [] and seen["builtins"] is None and seen["environ"] is None and seen["tmp"] is None
        assert [p for p in seen["procs"] if p.isdigit()] == [str(second.state["pid"])]  # siblings are invisible


def test_a_probe_cannot_signal_its_siblings_or_the_supervisor(jail: SandboxPool) -> None:
    with jail.episode_batch(CODE, "Probe", None, None) as batch:
        with batch.open_episode(CODE, "Probe", None, None) as ep:
            sup = _member_of_a_serial_unit(ep)
            assert set(ep.call("signal_all", {}).result.values()) == {"PermissionError"}
        with batch.open_episode(CODE, "Probe", None, None) as ep:
            assert _member_of_a_serial_unit(ep) == sup
            assert ep.call("ping", {}).ok


def test_untrusted_code_runs_only_in_members_that_may_not_fork(jail: SandboxPool) -> None:
    with jail.episode_batch(CODE, "Probe", None, None) as batch:
        with batch.open_episode(CODE, "Probe", None, None) as ep:
            sup = _member_of_a_serial_unit(ep)
            member, supervisor = _status(ep.host_pid), _status(sup)
            assert ep.call("fork", {}).result == "PermissionError"
            assert ep.state["pid"] != 1  # the env's own view: not its namespace's init, i.e. not the supervisor
        assert member["Seccomp"] == supervisor["Seccomp"] == "2"
        assert int(member["Seccomp_filters"]) == int(supervisor["Seccomp_filters"]) + 1
        assert member["NoNewPrivs"] == "1" and member["CapEff"].strip("0") == "" and member["Threads"] == "1"


def test_two_batches_never_share_a_unit(jail: SandboxPool) -> None:
    other = CODE.replace("class Probe", "class Other")
    with jail.episode_batch(CODE, "Probe", None, None) as a, jail.episode_batch(other, "Other", None, None) as b:
        sups: dict[str, set[int]] = {"a": set(), "b": set()}
        for _ in range(3):
            for name, batch, code, cls in (("a", a, CODE, "Probe"), ("b", b, other, "Other")):
                with batch.open_episode(code, cls, None, None) as ep:
                    sups[name].add(_member_of_a_serial_unit(ep))
        assert sups["a"] and sups["b"] and not sups["a"] & sups["b"]
        with a.open_episode(other, "Other", None, None) as foreign:  # not this batch's class: an ordinary unit
            assert _status(foreign.host_pid)["NSpid"].split()[-1] == "1"


def test_a_probe_that_kills_the_unit_is_blamed_alone(jail: SandboxPool) -> None:
    """The supervisor dies mid-probe (here: killed from outside, as the cgroup's OOM killer might): that probe
    is a crash, the next one runs in a fresh unit with the outcome it would have had anyway."""
    benign = _outcome(jail, "add", {"key": "b", "value": 2})
    with jail.episode_batch(CODE, "Probe", {"items": {"a": 1}}, None) as batch:
        with batch.open_episode(CODE, "Probe", {"items": {"a": 1}}, None) as ep:
            sup = _member_of_a_serial_unit(ep)
            threading.Timer(0.3, os.kill, (sup, signal.SIGKILL)).start()
            out = ep.call("sleep", {})
            assert not out.ok and out.error_kind == "crash"
        assert _outcome(batch, "add", {"key": "b", "value": 2}) == benign
        assert batch.units_made == 2


def test_concurrent_callers_get_one_unit_each(jail: SandboxPool) -> None:
    with jail.episode_batch(CODE, "Probe", None, None) as batch:
        first = batch.open_episode(CODE, "Probe", None, None)
        second = batch.open_episode(CODE, "Probe", None, None)
        try:
            assert _member_of_a_serial_unit(first) != _member_of_a_serial_unit(second)
        finally:
            first.close()
            second.close()
