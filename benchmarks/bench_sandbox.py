"""Sandbox cost against same-run baselines: warm call vs in-process, episode start, throughput, and a
30-call episode vs the naive "fresh `python -c` per call" approach.

Targets (docs/sandbox.md): warm call p50 <= 1 ms, episode start p50 <= 30 ms, >= 50x faster than naive.
Numbers are noisy on a shared 2-core machine; the ratios are what to compare across runs.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
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


def naive_30_ms(python: str) -> float:
    state = STATE
    t0 = time.perf_counter()
    for tool, args in PLAN:
        req = json.dumps({"code": CODE, "state": state, "tool": tool, "args": args})
        out = subprocess.run([python, "-c", NAIVE], input=req, capture_output=True, text=True, check=True)
        state = json.loads(out.stdout)["state"]
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    from sandbox import SandboxPool

    settings = load_settings()
    with SandboxPool(settings.sandbox) as pool:
        info = pool.info()
        print(f"backend={info['backend']} seccomp={info['seccomp']} workers={info['workers']} python={info['python']}")
        inproc = in_process_ms(5000)
        warm = warm_call_ms(pool, 3000)
        w50, i50 = statistics.median(warm), statistics.median(inproc)
        print(f"warm call p50={w50:.3f}ms p90={pct(warm, 0.9):.3f}ms | in-process p50={i50 * 1000:.2f}us "
              f"| overhead p50={w50 - i50:.3f}ms ratio={w50 / i50:.0f}x | target p50<=1ms: "
              f"{'PASS' if w50 <= 1 else 'MISS'}")
        starts = episode_start_ms(pool, 200)
        s50 = statistics.median(starts)
        print(f"episode start p50={s50:.2f}ms p90={pct(starts, 0.9):.2f}ms | target p50<=30ms: "
              f"{'PASS' if s50 <= 30 else 'MISS'}")
        for threads in (1, 2, 4):
            print(f"calls/s with {threads} thread(s), {info['workers']} zygotes: {calls_per_second(pool, threads, 1500):.0f}")
        ep30 = statistics.median(episode_30_ms(pool) for _ in range(20))
        naive = statistics.median(naive_30_ms(info["python"]) for _ in range(3))
        print(f"30-call episode: sandbox={ep30:.1f}ms naive(python -c per call)={naive:.1f}ms "
              f"speedup={naive / ep30:.0f}x | target >=50x: {'PASS' if naive / ep30 >= 50 else 'MISS'}")


if __name__ == "__main__":
    main()
