"""Spec: a pool's warm-up episodes (`JailImports.warm_up`) run in the zygote, before any unit is forked.

They go through the worker's own episode code (load, then each call), `warm_up_rounds` times, so
every unit starts from a zygote whose code paths are warm; what they leave in a preloaded module is
what every unit inherits (trusted code only, as for preloading). The per-call CPU window they set is
the zygote's own limit while they run and is put back afterwards, and a warm-up that fails stops the
pool with its error, as a failing preload does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import JailImports, SandboxPool, SandboxUnavailable

MODULE = '''
CALLS = []


class Warm:
    def __init__(self, config=None):
        self.tag = (config or {}).get("tag")

    def touch(self, n: int) -> int:
        CALLS.append(n)
        return len(CALLS)


class Probe:
    def __init__(self, config=None):
        self.calls = list(CALLS)
'''


def _pool(tmp_path: Path, warm_up: list[dict], rounds: int = 3) -> SandboxPool:
    source = tmp_path / "warm_module.py"
    source.write_text(MODULE, encoding="utf-8")
    imports = JailImports(packages=[source], preload=["warm_module"], warm_up=warm_up, warm_up_rounds=rounds)
    return SandboxPool(SandboxSettings(workers=1), imports=imports)


EPISODE = {"code": "from warm_module import Warm\n", "class_name": "Warm", "init": {"tag": "w"},
           "calls": [{"tool": "touch", "args": {"n": 1}}, {"tool": "touch", "args": {"n": 2}}]}


def test_warm_up_episodes_run_each_round_in_the_zygote_before_any_unit(tmp_path: Path) -> None:
    with _pool(tmp_path, [EPISODE], rounds=3) as pool:
        with pool.open_episode("from warm_module import Probe\n", "Probe", None) as probe:
            assert probe.state["calls"] == [1, 2, 1, 2, 1, 2]


def test_the_zygote_keeps_no_cpu_window_from_its_warm_up(tmp_path: Path) -> None:
    with _pool(tmp_path, [EPISODE]) as pool:
        [zygote] = pool.zygote_host_pids()
        limits = Path(f"/proc/{zygote}/limits").read_text().splitlines()
        [cpu] = [line for line in limits if line.startswith("Max cpu time")]
        soft, hard = cpu.split()[3:5]
        assert soft == hard


def test_a_failing_warm_up_stops_the_pool_with_its_error(tmp_path: Path) -> None:
    broken = {**EPISODE, "class_name": "Missing"}
    with pytest.raises(SandboxUnavailable, match="warm-up failed"):
        _pool(tmp_path, [broken])
