"""How the factory's cost per accepted env behaves as the batch grows: 1x, 10x and 100x the demo.

Each scale is one whole factory run (the demo's settings: mine, synth, validate, scen, rollout,
export) in a fresh process, against a fresh mock LLM at 0 ms latency, with a fresh DuckDB store and
one local Prefect server for all scales. The sources are the demo's API-Bank slice repeated F times:
copy k > 0 of every task is tagged "(site k)", and the mock answers a tagged task with its library
domain at that site (same env, its own class name and texts; `mock_llm.library`), so topics,
candidates, envs and scenarios all grow F-fold. Topic selection keeps `8 x F` topics and loosens the
embedding dedup to 0.999 (the site copies of one domain are near-identical texts by design).

Printed per scale, per accepted env: wall seconds, LLM requests (what the mock answered), tokens
(prompt + completion; prompt tokens the mock's prefix cache served, and the effective prompt cost at
the default prices), the factory process's peak RSS and its growth during the run (the memory the
envs themselves take, apart from the fixed cost of the imports), store bytes, Prefect task runs. Then the ratio
of each per-env figure at the largest scale to the one below it (target: <= 1.2 for wall, requests,
tokens and memory; a per-env figure that keeps growing is something superlinear left in the factory).

`.venv/bin/python -m benchmarks bench_scale` (`BENCH_SCALE_FACTORS=1,10` for a quicker run).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.mock_process import get_json, start_mock

ROOT = Path(__file__).resolve().parent.parent
FACTORS = tuple(int(f) for f in os.environ.get("BENCH_SCALE_FACTORS", "1,10,100").split(","))
SLICE = ROOT / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
DEMO_TOPICS = 8
TICKS = os.sysconf("SC_CLK_TCK")
PROFILE_DIR = os.environ.get("BENCH_SCALE_PROFILE_DIR", "")


def scaled_source(factor: int, target: Path) -> Path:
    """The demo slice, `factor` times: copy k > 0 of each task tagged "(site k)" in its utterance."""
    records = json.loads(SLICE.read_text(encoding="utf-8"))
    out = []
    for site in range(factor):
        for record in records:
            if site:
                record = {**record, "input": record["input"].replace("User: ", f"User: (site {site}) ", 1)}
            out.append(record)
    target.write_text(json.dumps(out), encoding="utf-8")
    return target


def overrides(factor: int, workdir: Path, base_url: str) -> dict[str, Any]:
    from envscaler.demo import DEMO_OVERRIDES

    return {**DEMO_OVERRIDES,
            "mine": {**DEMO_OVERRIDES["mine"], "max_tasks": 80 * factor, "select_n": DEMO_TOPICS * factor,
                     "similarity_threshold": 0.999},
            "flow": {**DEMO_OVERRIDES["flow"], "out_dir": str(workdir / "out"),  # BENCH_SCALE_STREAM=0: staged
                     "stream": os.environ.get("BENCH_SCALE_STREAM", "1") != "0"},
            "store": {"url": f"duckdb:///{workdir / 'scale.duckdb'}"},
            "llm": {"base_url": base_url, "api_key": "mock"}}



def _rss_mb() -> float:
    """This process's resident memory now (the peak is `ru_maxrss`): the factory's fixed cost after its
    imports, so that the memory an env adds is seen apart from it."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _rusage_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process, its live descendants and their reaped children
    (`/proc/<pid>/stat`): the load-independent share of a shared box's time, unlike wall seconds."""
    return sum(_process_tree(pid).values())


class DescendantCPU:
    """CPU seconds of this process's descendants (the sandbox jails), sampled every second.

    The kernel's own account (RUSAGE_CHILDREN) misses them: a jail's processes are reaped inside its pid
    namespace, whose init is killed when the pool closes, so their time never reaches us. Each process's
    last sampled total (its own time plus its reaped children's) is kept; a unit sampled alive and later
    reaped by its zygote counts twice, which units living a few milliseconds rarely are."""

    def __init__(self, every_s: float = 1.0) -> None:
        self._last: dict[int, float] = {}
        self._done = threading.Event()
        self._every = every_s
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        me = os.getpid()
        while not self._done.wait(self._every):
            tree = _process_tree(me)
            tree.pop(me, None)
            self._last.update(tree)

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return sum(self._last.values())


def _process_tree(pid: int) -> dict[int, float]:
    """pid -> CPU seconds (own + reaped children) of `pid` and its live descendants."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = (int(fields[1]), sum(int(v) for v in fields[11:15]) / TICKS)
    children: dict[int, list[int]] = {}
    for child, (parent, _) in stats.items():
        children.setdefault(parent, []).append(child)
    tree, found = [pid], {}
    while tree:
        current = tree.pop()
        found[current] = stats.get(current, (0, 0.0))[1]
        tree.extend(children.get(current, ()))
    return found


def _task_runs(api_url: str) -> int:
    req = urllib.request.Request(f"{api_url}/task_runs/count", data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 (loopback)
        return int(json.load(r))


def one_scale(factor: int, workdir: Path, base_url: str) -> dict[str, Any]:
    """Child process: one factory run at `factor`; prints a JSON line of its measurements."""
    import asyncio

    from envscaler_core.config import load_settings, public_config
    from flows.factory import factory_flow

    source = scaled_source(factor, workdir / "sources.json")
    settings = load_settings(environ={}, overrides=overrides(factor, workdir, base_url))
    rss_at_start = _rss_mb()
    jails = DescendantCPU()
    t0 = time.perf_counter()
    summary = asyncio.run(factory_flow(run_id=f"scale-{factor}", sources=[str(source)], config=public_config(settings)))
    wall = time.perf_counter() - t0
    usage = summary["usage"]
    prices = settings.llm.prices
    effective = 0.0
    for stage, u in usage.items():
        price = prices.get(getattr(settings.llm.models, stage, ""))
        if price is not None:
            cached = u.get("cached_tokens", 0)
            effective += ((u["prompt_tokens"] - cached) * price.input_per_mtok + cached * price.cached_rate) / 1e6
    store = workdir / "scale.duckdb"
    return {"factor": factor, "status": summary["status"], "funnel": summary["funnel"], "wall_s": wall,
            "prompt_tokens": sum(u["prompt_tokens"] for u in usage.values()),
            "cached_tokens": sum(u.get("cached_tokens", 0) for u in usage.values()),
            "completion_tokens": sum(u["completion_tokens"] for u in usage.values()),
            "effective_prompt_usd": effective, "cost_usd": sum(u["cost_usd"] for u in usage.values()),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_growth_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss_at_start,
            "cpu_factory_s": _rusage_cpu(resource.RUSAGE_SELF),
            "cpu_children_s": jails.stop(),
            "store_bytes": sum(p.stat().st_size for p in store.parent.glob(store.name + "*"))}



def _per_env(row: dict[str, Any]) -> dict[str, float]:
    envs = max(row["funnel"]["accepted_envs"], 1)
    return {"wall_s": row["wall_s"] / envs, "requests": row["requests"] / envs,
            "tokens": (row["prompt_tokens"] + row["completion_tokens"]) / envs,
            "effective_prompt_usd": row["effective_prompt_usd"] / envs, "cost_usd": row["cost_usd"] / envs,
            "peak_rss_mb": row["peak_rss_mb"] / envs, "rss_growth_mb": row["rss_growth_mb"] / envs,
            "store_kb": row["store_bytes"] / 1024 / envs,
            "task_runs": row["task_runs"] / envs, "cpu_factory_s": row["cpu_factory_s"] / envs,
            "cpu_sandbox_s": row["cpu_children_s"] / envs, "cpu_mock_s": row["cpu_mock_s"] / envs,
            "cpu_prefect_s": row["cpu_prefect_s"] / envs}


def main() -> None:
    from envscaler.prefect_server import ensure_prefect_server, free_port

    base = Path(tempfile.mkdtemp(prefix="envscaler-bench-scale-"))
    server = ensure_prefect_server(base / "prefect", free_port())
    env = {**os.environ, "PREFECT_HOME": str(base / "prefect"), "PREFECT_API_URL": server.api_url}
    print(f"load before: {os.getloadavg()[0]:.1f} (1-min average, {os.cpu_count()} cores)")
    rows = []
    try:
        for factor in FACTORS:
            workdir = base / f"x{factor}"
            workdir.mkdir()
            mock, root = start_mock()
            runs_before = _task_runs(server.api_url)
            prefect_cpu_before = _proc_cpu(server.pid) if server.pid else 0.0
            loads = [os.getloadavg()[0]]
            try:
                cmd = [sys.executable, "-c", "import json, sys; from pathlib import Path; "
                       "from benchmarks.bench_scale import one_scale; "
                       "print('RESULT ' + json.dumps(one_scale(int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])))",
                       str(factor), str(workdir), f"{root}/v1"]
                if PROFILE_DIR:  # sampled, so the measured process runs at full speed (py-spy is not a dependency)
                    cmd = ["py-spy", "record", "--nonblocking", "--rate", "20", "--format", "raw", "-o",
                           str(Path(PROFILE_DIR) / f"scale-{factor}x.txt"), "--", *cmd]
                child = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                while True:  # sample the load average while the scale runs
                    try:
                        stdout, stderr = child.communicate(timeout=60)
                        break
                    except subprocess.TimeoutExpired:
                        loads.append(os.getloadavg()[0])
                stats = get_json(f"{root}/mock/stats")
                mock_cpu = _proc_cpu(mock.pid)
            finally:
                mock.terminate()
                mock.wait(timeout=30)
            result = next((line[7:] for line in stdout.splitlines() if line.startswith("RESULT ")), None)
            if result is None:
                raise RuntimeError(f"scale {factor}x failed:\n{stderr[-3000:]}")
            row = json.loads(result) | {"requests": stats["requests_total"], "task_runs": _task_runs(server.api_url) - runs_before,
                                        "cpu_mock_s": mock_cpu, "load": (min(loads), max(loads)),
                                        "cpu_prefect_s": (_proc_cpu(server.pid) - prefect_cpu_before) if server.pid else 0.0}
            rows.append(row)
            per = _per_env(row)
            f = row["funnel"]
            print(f"{factor:>4}x: {row['status']}, {f['source_tasks']} tasks -> {f['selected_topics']} topics -> "
                  f"{f['accepted_envs']} envs -> {f['verified_scenarios']} scenarios -> {f['trajectories']} trajectories; "
                  f"wall {row['wall_s']:.0f} s, {row['requests']} requests, peak RSS {row['peak_rss_mb']:.0f} MB (+{row['rss_growth_mb']:.0f} during the run), "
                  f"store {row['store_bytes'] / 2**20:.1f} MB, {row['task_runs']} task runs, "
                  f"{row['cached_tokens'] / max(row['prompt_tokens'], 1):.0%} of prompt tokens prefix-cached; "
                  f"CPU s: factory {row['cpu_factory_s']:.0f}, sandboxes {row['cpu_children_s']:.0f}, "
                  f"mock {row['cpu_mock_s']:.0f}, Prefect server {row['cpu_prefect_s']:.0f}; "
                  f"load {row['load'][0]:.1f}-{row['load'][1]:.1f} (1-min average)", flush=True)
            print("       per env: " + ", ".join(f"{k} {v:.4g}" for k, v in per.items()), flush=True)
    finally:
        server.stop()
    for small, large in zip(rows, rows[1:]):
        a, b = _per_env(small), _per_env(large)
        print(f"per env {large['factor']}x / {small['factor']}x: " + ", ".join(
            f"{k} {b[k] / a[k]:.2f}" for k in a if a[k]) + " (target <= 1.2 for wall, requests, tokens, memory)")
        print(f"  {large['factor']}x: {large['funnel']['accepted_envs']} envs, load {large['load'][0]:.1f}-{large['load'][1]:.1f}; "
              f"{small['factor']}x: {small['funnel']['accepted_envs']} envs, load {small['load'][0]:.1f}-{small['load'][1]:.1f}")


if __name__ == "__main__":
    main()
