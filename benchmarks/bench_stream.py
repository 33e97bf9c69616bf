"""Streamed against staged stages, the same demo-sized run, runs alternated in one session.

Real endpoints answer in a spread of times, and a staged run waits at every stage for its slowest
item; a streamed one (`flow.stream`) lets each item move on. The mock adds 300 ms plus a uniform
0-`BENCH_STREAM_JITTER_MS` (default 600) to every answer, seeded, so both modes see the same spread.
Printed: each run's wall and the orchestrator's CPU per LLM request, and streamed / staged medians.
At a fixed latency (`BENCH_STREAM_JITTER_MS=0`) the two are within noise: every env's validation
takes about as long, and the slowest is the critical path either way.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_pipeline import CONCURRENCY, ROUNDS, _start_mock, _stats

JITTER_MS = int(os.environ.get("BENCH_STREAM_JITTER_MS", "600"))
REPEATS = int(os.environ.get("BENCH_STREAM_REPEATS", "2"))


def _run(workdir: Path, base_url: str, run_id: str, stream: bool) -> tuple[float, float, dict[str, Any]]:
    from envscaler.demo import SLICE
    from envscaler_core.config import load_settings, public_config
    from flows.factory import factory_flow

    overrides = {"mine": {"max_tasks": 80, "select_n": 8}, "validate": {"mode": "both", "rounds": ROUNDS},
                 "scen": {"per_env": 2},
                 "flow": {"batch_size": 10, "out_dir": str(workdir / "out"), "stream": stream},
                 "store": {"url": f"duckdb:///{workdir / run_id}.duckdb"},
                 "llm": {"base_url": f"{base_url}/v1", "api_key": "mock", "max_concurrency": CONCURRENCY}}
    config = public_config(load_settings(environ={}, overrides=overrides))
    requests = _stats(base_url)["requests_total"]
    t0, cpu0 = time.perf_counter(), time.process_time()
    summary = asyncio.run(factory_flow(run_id=run_id, sources=[str(SLICE)], config=config))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    sent = _stats(base_url)["requests_total"] - requests
    return wall, cpu / max(sent, 1) * 1000, summary["funnel"]


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="envscaler-bench-stream-"))
    os.environ["PREFECT_HOME"] = str(workdir / "prefect")
    from envscaler.prefect_server import ensure_prefect_server, free_port

    port = free_port()
    mock = _start_mock(port, jitter_ms=JITTER_MS)
    server = ensure_prefect_server(workdir / "prefect", free_port())
    os.environ["PREFECT_API_URL"] = server.api_url
    walls: dict[bool, list[float]] = {False: [], True: []}
    funnels: dict[bool, dict[str, Any]] = {}
    try:
        for rep in range(REPEATS):
            for stream in (False, True):
                wall, cpu_ms, funnels[stream] = _run(workdir, f"http://127.0.0.1:{port}", f"r{rep}-{int(stream)}", stream)
                walls[stream].append(wall)
                print(f"{'streamed' if stream else 'staged  '}: wall {wall:.1f} s, orchestrator CPU {cpu_ms:.1f} ms "
                      f"per LLM request; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        mock.terminate()
        server.stop()
    ratio = statistics.median(walls[True]) / statistics.median(walls[False])
    same = "same funnel" if funnels[True] == funnels[False] else f"FUNNELS DIFFER: {funnels}"
    print(f"mock 300 ms + 0-{JITTER_MS} ms: streamed / staged wall (medians of {REPEATS}) {ratio:.2f}; {same}")


if __name__ == "__main__":
    main()
