"""BFCL multi-turn: what the sandbox costs, and how close an LLM evaluation gets to its LLM-bound ideal.

1. Gold agent, base subset, per task (play every turn + `multi_turn_checker`): sandboxed (one unit per
   task: the episode, and the checker in the unit's spare process) versus the package's in-process executor and checker, in the same
   run, one task at a time (latency) and 8 tasks in flight (throughput). Target: sandbox <= 1.5x.
2. The whole base subset through the LLM path (gateway -> HTTP -> mock LLM in its own process, tasks
   16 in flight, a fresh store per run so nothing comes from the cache) at 0 ms and 300 ms mock
   latency. The LLM-bound ideal is the list-scheduling bound of the LLM time alone:
   max(sum of per-task LLM time / concurrency, longest task's LLM time). Target: ideal / wall >= 0.8.
   One untimed single-task run first: the mock builds its BFCL index (~1.7 s of CPU) on its first
   request, a cost of the mock, not of the harness.
Every figure has the load average beside it; CPU seconds per task (this process + the jails) are the
less load-sensitive comparison.

`.venv/bin/python -m benchmarks bench_bfcl` (set BENCH_BFCL_TASKS=N to use the first N base tasks,
BENCH_BFCL_LLM=0 to skip part 2).
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from envscaler_core.bfcl.data import load_tasks
from envscaler_core.bfcl.evaluate import EvalRequest, forced_quit_verdict, run_eval
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.package import jail_imports
from envscaler_core.bfcl.play import GoldAgent, play_task
from envscaler_core.bfcl.reference import InProcessTask, score_in_process
from envscaler_core.config import LLMSettings, SandboxSettings
from envscaler_core.models import BFCLTaskResult

CONCURRENCY = 16
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pool: Any) -> tuple[float, float]:
    """(this process's CPU, the jails' CPU: zygotes plus the units they reaped) in seconds: less
    load-sensitive than wall time on a shared machine."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    jail = 0.0
    for pid in pool.zygote_host_pids():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        jail += sum(int(x) for x in fields[11:15]) / TICK  # utime, stime, cutime, cstime
    return usage.ru_utime + usage.ru_stime, jail


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


async def gold_task(task: Any, executor_factory: Any, scorer: Any) -> bool:
    """Play, then score (`scorer(executor, task, decoded)`, before the executor closes: the sandboxed
    one scores in its unit's clean spare), as `evaluate_task` does."""
    executor = await asyncio.to_thread(executor_factory, task)
    try:
        play = await play_task(task, GoldAgent(task), executor)
        if play.force_quit:
            return forced_quit_verdict(play, task).valid
        return (await asyncio.to_thread(scorer, executor, task, play.decoded)).valid
    finally:
        await asyncio.to_thread(executor.close)


async def gold_run(tasks: list[Any], executor_factory: Any, scorer: Any, in_flight: int) -> tuple[float, list[float]]:
    gate, per_task = asyncio.Semaphore(in_flight), []

    async def one(task: Any) -> None:
        async with gate:
            t0 = time.perf_counter()
            assert await gold_task(task, executor_factory, scorer), task.id
            per_task.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(t) for t in tasks))
    return time.perf_counter() - t0, per_task


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llm_run(tasks: list[Any], pool: Any, base_url: str, latency_ms: float) -> tuple[float, list[int]]:
    from envscaler_core.llm import LLMGateway
    from envscaler_core.store import Store

    httpx.post(f"{base_url.removesuffix('/v1')}/mock/faults", json={"latency_ms": latency_ms}).raise_for_status()
    with tempfile.TemporaryDirectory() as tmp, Store.from_url(f"duckdb:///{tmp}/bench.duckdb") as store:
        gateway = LLMGateway(LLMSettings(base_url=base_url, api_key="mock", max_concurrency=64), store=store, run_id="b")
        request = EvalRequest(subsets=["base"], agent="llm", model="mock-bfcl")

        async def main() -> None:
            try:
                await run_eval(store, pool, gateway, "b", request, concurrency=CONCURRENCY, tasks=tasks)
            finally:
                await gateway.aclose()

        t0 = time.perf_counter()
        asyncio.run(main())
        wall = time.perf_counter() - t0
        results = store.query(BFCLTaskResult, run_id="b")
    assert all(r.valid for r in results), [r.task_id for r in results if not r.valid]
    return wall, [r.steps for r in results]


def main() -> None:
    from sandbox import JailImports, SandboxPool

    tasks = load_tasks("base", int(os.environ.get("BENCH_BFCL_TASKS", "200")))
    print(f"{len(tasks)} base tasks, {sum(len(c) for t in tasks for c in t.ground_truth)} ground-truth calls")
    with SandboxPool(SandboxSettings(), imports=JailImports(**jail_imports())) as pool:
        sandboxed = (lambda task: SandboxedTask(pool, task), lambda executor, task, decoded: executor.score(decoded))
        in_process = (InProcessTask, lambda executor, task, decoded: score_in_process(task, decoded))
        pool.warm_up()
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (round trips between processes "
              "cost more the more the machine is loaded)")
        asyncio.run(gold_run(tasks[:10], *sandboxed, 1))  # warm both paths
        asyncio.run(gold_run(tasks[:10], *in_process, 1))
        print("\ngold agent, per task (play + checker)   sandboxed   in-process   ratio")
        for in_flight in (1, 8):
            (h0, j0) = cpu_s(pool)
            wall_s, per_s = asyncio.run(gold_run(tasks, *sandboxed, in_flight))
            (h1, j1) = cpu_s(pool)
            wall_i, per_i = asyncio.run(gold_run(tasks, *in_process, in_flight))
            (h2, _) = cpu_s(pool)
            print(f"  {in_flight} in flight: wall per task        {wall_s / len(tasks) * 1000:7.1f} ms  "
                  f"{wall_i / len(tasks) * 1000:7.1f} ms   {wall_s / wall_i:5.2f}x   {load()}")
            print(f"  {in_flight} in flight: CPU per task (host+jail) {(h1 - h0 + j1 - j0) / len(tasks) * 1000:5.1f} ms  "
                  f"{(h2 - h1) / len(tasks) * 1000:7.1f} ms   {(h1 - h0 + j1 - j0) / max(h2 - h1, 1e-9):5.2f}x   "
                  f"(sandboxed: host {(h1 - h0) / len(tasks) * 1000:.1f} + jail {(j1 - j0) / len(tasks) * 1000:.1f} ms)")
            print(f"  {in_flight} in flight: p50 task latency     {statistics.median(per_s) * 1000:7.1f} ms  "
                  f"{statistics.median(per_i) * 1000:7.1f} ms   {statistics.median(per_s) / statistics.median(per_i):5.2f}x")

        if os.environ.get("BENCH_BFCL_LLM", "1") == "0":
            return
        port = free_port()
        mock = subprocess.Popen([str(Path(sys.executable).with_name("envscaler")), "mock-llm", "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            for _ in range(300):
                try:
                    httpx.get(f"{base_url}/models", timeout=1).raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            print(f"\nLLM path, whole subset, {CONCURRENCY} tasks in flight (mock LLM in its own process)")
            llm_run(tasks[:1], pool, base_url, 0.0)  # untimed: the mock builds its BFCL index on its first request
            for latency in (0.0, 300.0):
                wall, steps = llm_run(tasks, pool, base_url, latency)
                llm_s = [s * latency / 1000 for s in steps]
                ideal = max(sum(llm_s) / CONCURRENCY, max(llm_s, default=0.0))
                ratio = f"{ideal / wall:.2f}" if latency else "n/a (no LLM time)"
                print(f"  {latency:5.0f} ms: {len(steps)} tasks, {sum(steps)} LLM calls, wall {wall:6.1f} s, "
                      f"LLM-bound ideal {ideal:6.1f} s, ideal/wall {ratio}   {load()}")
        finally:
            mock.kill()
            mock.wait()


if __name__ == "__main__":
    main()
