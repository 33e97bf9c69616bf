"""Sandbox cost against same-run baselines: warm call vs in-process, episode start, throughput, checks, a
30-call episode vs the naive "fresh `python -c` per call" approach, and what the per-unit isolation of
issue 10 costs against the design before it (units sharing the jail's namespaces, no cgroup), measured
in the same run. Last, inside a real jail, the ways of giving a unit its own namespaces that were
considered (docs/sandbox.md explains the choice), and a fresh bwrap jail per episode.

Targets (docs/sandbox.md): warm call p50 <= 1 ms, episode start p50 <= 30 ms, >= 50x faster than naive.
Numbers are noisy on a shared 2-core machine; the ratios are what to compare across runs.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from envscaler_core.config import load_settings

CODE = '''
class Inventory:
    def __init__(self, init_config: dict = None):
        cfg = init_config or {}
        self.items = cfg.get("items", {})
        self.log = cfg.get("log", [])

    def get_item(self, sku: str) -> dict:
        item = self.items.get(sku)
        return {"success": True, "data": item} if item else {"success": False, "error": "no item"}

    def restock(self, sku: str, qty: int) -> dict:
        self.items[sku]["qty"] += qty
        self.log.append([sku, qty])
        return {"success": True, "data": self.items[sku]["qty"]}
'''
STATE = {"items": {f"s{i}": {"sku": f"s{i}", "name": f"item {i}", "qty": i} for i in range(20)}, "log": []}
PLAN = [("get_item", {"sku": f"s{i % 20}"}) if i % 3 else ("restock", {"sku": f"s{i % 20}", "qty": 1}) for i in range(30)]

NAIVE = r'''
import json, sys
req = json.loads(sys.stdin.read())
ns = {}
exec(req["code"], ns)
inst = ns["Inventory"](req["state"])
result = getattr(inst, req["tool"])(**req["args"])
print(json.dumps({"result": result, "state": vars(inst)}))
'''


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def in_process_ms(n: int) -> list[float]:
    ns: dict[str, Any] = {}
    exec(CODE, ns)
    inst = ns["Inventory"](json.loads(json.dumps(STATE)))
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        inst.get_item(sku=f"s{i % 20}")
        out.append((time.perf_counter() - t0) * 1000)
    return out


def warm_call_ms(pool: Any, n: int) -> list[float]:
    out = []
    with pool.open_episode(CODE, "Inventory", STATE) as ep:
        for i in range(n):
            t0 = time.perf_counter()
            ep.call("get_item", {"sku": f"s{i % 20}"})
            out.append((time.perf_counter() - t0) * 1000)
    return out


def episode_start_ms(pool: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        ep = pool.open_episode(CODE, "Inventory", STATE)
        out.append((time.perf_counter() - t0) * 1000)
        ep.close()
    return out


def calls_per_second(pool: Any, threads: int, calls: int) -> float:
    def work(_: int) -> None:
        with pool.open_episode(CODE, "Inventory", STATE) as ep:
            for i in range(calls):
                ep.call("restock" if i % 2 else "get_item", {"sku": "s1", "qty": 1} if i % 2 else {"sku": "s1"})

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(work, range(threads)))
    return threads * calls / (time.perf_counter() - t0)


def episode_30_ms(pool: Any) -> float:
    t0 = time.perf_counter()
    with pool.open_episode(CODE, "Inventory", STATE) as ep:
        for tool, args in PLAN:
            ep.call(tool, args)
    return (time.perf_counter() - t0) * 1000


CHECK = "def check_func(final_state):\n    return final_state['items']['s1']['qty'] >= 0\n"


def run_batch(pool: Any, n: int, per_unit: bool = False) -> None:
    from sandbox.checks import run_checks_per_unit

    checks = [CHECK] * n
    outcomes = run_checks_per_unit(pool, checks, STATE, STATE, 5.0) if per_unit else pool.run_checks(checks, STATE, STATE)
    assert all(o.passed for o in outcomes), outcomes[:1]


def checks_per_second(pool: Any, n: int, per_unit: bool = False, rounds: int = 1) -> float:
    t0 = time.perf_counter()
    for _ in range(rounds):
        run_batch(pool, n, per_unit)
    return n * rounds / (time.perf_counter() - t0)


def jail_cpu_s(pool: Any) -> float:
    """CPU seconds of the zygotes and every unit they reaped (after a ping makes them reap)."""
    time.sleep(0.3)
    for zygote in pool.zygotes:
        zygote.ping()
    total = 0
    for pid in pool.zygote_host_pids():
        with open(f"/proc/{pid}/stat") as fh:
            total += sum(int(x) for x in fh.read().rsplit(")", 1)[1].split()[11:15])
    return total / os.sysconf("SC_CLK_TCK")


def check_cpu_ms(pool: Any, n: int, per_unit: bool) -> float:
    """CPU per check (jail + this host process), the measure the machine's load does not distort much."""
    jail0, host0 = jail_cpu_s(pool), time.process_time()
    run_batch(pool, n, per_unit)
    host1, jail1 = time.process_time(), jail_cpu_s(pool)
    return (jail1 - jail0 + host1 - host0) * 1000 / n


def compare_checks(pool: Any) -> None:
    """Check batches (one unit per batch, a child per check) against one unit per check, same pool, same run,
    interleaved so that load changes hit both."""
    print("checks: batch unit (child per check) vs one unit per check, same run, interleaved:")
    for n, rounds in ((5, 8), (60, 2)):
        new = old = 0.0
        for _ in range(2):
            new += checks_per_second(pool, n, False, rounds) / 2
            old += checks_per_second(pool, n, True, rounds) / 2
        cpu_new, cpu_old = check_cpu_ms(pool, 60, False), check_cpu_ms(pool, 60, True)
        print(f"  {n:3d} checks per batch: {new:7.0f}/s vs {old:6.0f}/s  ratio {new / old:5.2f}x"
              + (f" | CPU per check (jail + host, 60-check batch): {cpu_new:.2f} ms vs {cpu_old:.2f} ms"
                 f"  ratio {cpu_old / cpu_new:.1f}x less" if n == 60 else ""))


def measure(pool: Any) -> dict[str, float]:
    warm = warm_call_ms(pool, 2000)
    starts = episode_start_ms(pool, 150)
    return {"warm_p50": statistics.median(warm), "warm_p90": pct(warm, 0.9),
            "start_p50": statistics.median(starts), "start_p90": pct(starts, 0.9),
            "calls_1": calls_per_second(pool, 1, 1000), "calls_2": calls_per_second(pool, 2, 1000),
            "checks": checks_per_second(pool, 60), "ep30": statistics.median(episode_30_ms(pool) for _ in range(15))}


def in_jail(pool: Any, script: str, args: list[str], extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run `script` (a stdlib file beside this one) in a fresh jail built exactly like the pool's."""
    folder = tempfile.mkdtemp(prefix="envscaler-bench-")
    os.chmod(folder, 0o755)
    try:
        for path in (Path(__file__).with_name(script), *(Path(__file__).parents[1] / "sandbox" / e for e in extra)):
            shutil.copyfile(path, Path(folder) / path.name)
            os.chmod(Path(folder) / path.name, 0o644)
        cmd = [f"/sandbox/{script}" if part.endswith("/worker.py") else part
               for part in pool.backend.command(folder, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin"})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_jail_ms(pool: Any, n: int) -> list[float]:
    """A fresh bwrap jail + interpreter + the worker's imports per episode: the no-zygote alternative."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        proc = in_jail(pool, "jail_unit_options.py", ["0"], extra=("jail_unit.py",))
        out.append((time.perf_counter() - t0) * 1000)
        assert proc.returncode == 0, proc.stderr[-500:]
    return out


def naive_30_ms(python: str) -> float:
    state = STATE
    t0 = time.perf_counter()
    for tool, args in PLAN:
        req = json.dumps({"code": CODE, "state": state, "tool": tool, "args": args})
        out = subprocess.run([python, "-c", NAIVE], input=req, capture_output=True, text=True, check=True)
        state = json.loads(out.stdout)["state"]
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    from sandbox import SandboxLimits, SandboxPool

    settings = load_settings()
    with SandboxPool(settings.sandbox) as pool, \
            SandboxPool(settings.sandbox, SandboxLimits(isolation="shared", cgroup="off")) as before:
        info = pool.info()
        print(f"backend={info['backend']} seccomp={info['seccomp']} isolation={info['isolation']} "
              f"cgroup=v{info['cgroup']} workers={info['workers']} python={info['python']} "
              f"load average={os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (absolute numbers scale with it)")
        inproc = statistics.median(in_process_ms(5000))
        new, old = measure(pool), measure(before)
        w50 = new["warm_p50"]
        print(f"warm call p50={w50:.3f}ms p90={new['warm_p90']:.3f}ms | in-process p50={inproc * 1000:.2f}us "
              f"| overhead p50={w50 - inproc:.3f}ms ratio={w50 / inproc:.0f}x | target p50<=1ms: "
              f"{'PASS' if w50 <= 1 else 'MISS'}")
        s50 = new["start_p50"]
        print(f"episode start p50={s50:.2f}ms p90={new['start_p90']:.2f}ms | target p50<=30ms: "
              f"{'PASS' if s50 <= 30 else 'MISS'}")
        print(f"calls/s: {new['calls_1']:.0f} with 1 thread, {new['calls_2']:.0f} with 2 | "
              f"checks/s (60-check batch): {new['checks']:.0f}")
        compare_checks(pool)
        naive = statistics.median(naive_30_ms(info["python"]) for _ in range(3))
        print(f"30-call episode: sandbox={new['ep30']:.1f}ms naive(python -c per call)={naive:.1f}ms "
              f"speedup={naive / new['ep30']:.0f}x | target >=50x: {'PASS' if naive / new['ep30'] >= 50 else 'MISS'}")
        print("cost of issue-10 isolation (own namespaces + private /proc + cgroup + verification + freeze between "
              "calls) vs the design before it (units sharing the jail's namespaces, no cgroup), same run:")
        for key, label in (("warm_p50", "warm call p50 ms"), ("start_p50", "episode start p50 ms"),
                           ("ep30", "30-call episode ms")):
            print(f"  {label:22} isolated={new[key]:8.3f} before={old[key]:8.3f} "
                  f"delta={new[key] - old[key]:+.3f} ratio={new[key] / old[key]:.2f}x")
        for key, label in (("calls_1", "calls/s, 1 thread"), ("calls_2", "calls/s, 2 threads"),
                           ("checks", "checks/s")):
            print(f"  {label:22} isolated={new[key]:8.0f} before={old[key]:8.0f} ratio={new[key] / old[key]:.2f}x")
        proc = in_jail(pool, "jail_unit_options.py", ["60"], extra=("jail_unit.py",))
        if proc.returncode == 0:
            print("unit creation + teardown inside a jail, p50/p90 ms (the options of docs/sandbox.md):")
            for name, (p50, p90) in json.loads(proc.stdout).items():
                print(f"  {name:66} {p50:7.2f} / {p90:7.2f}")
        else:
            print(f"unit options not measured: {proc.stderr.strip()[-300:]}")
        jails = fresh_jail_ms(pool, 10)
        print(f"  {'fresh bwrap jail + interpreter + imports per episode (no zygote)':66} "
              f"{statistics.median(jails):7.2f} / {pct(jails, 0.9):7.2f}")


if __name__ == "__main__":
    main()
