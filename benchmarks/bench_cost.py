"""What the factory's prompts cost per accepted env, this codebase against the old prompt layout.

Two whole factory runs in one benchmark, on the same sources (the bundled API-Bank slice) with the same
settings (the pipeline benchmark's: 8 topics, `both` validation with 30 rounds, 2 scenarios per env):
one with the code of `BENCH_COST_BASELINE` (default: the main commit before issue 14's prompt layout,
exported to a temp dir and run from there, with its own mock LLM), one with this checkout. Both talk to
their mock through `cache_proxy.CacheProxy`, which bills every chat request the same way: prompt tokens
at ~4 characters each, and the tokens OpenAI's automatic prefix cache would serve. The effective prompt
cost counts cached tokens at the cached rate of the default price table (GPT-4.1: a quarter of input).

Printed: funnel of both runs (the accepted count must match), per accepted env the prompt tokens, the
cached share and the effective prompt tokens, per stage and in total, and the ratio new / old
(target <= 1/3). `.venv/bin/python -m benchmarks bench_cost`
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import io
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.mock_process import start_mock

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("BENCH_COST_BASELINE", "20d5cec")  # main before the cache-friendly layout
ROUNDS = int(os.environ.get("BENCH_COST_ROUNDS", "30"))
DUMP_DIR = os.environ.get("BENCH_COST_DUMP")  # a directory: every billed request of each run as JSON lines
LATENCY_MS = int(os.environ.get("BENCH_COST_LATENCY_MS", "0"))  # > 0: concurrent requests overlap as on a real
# endpoint, so a fan-out's requests miss the prefix none of them has been answered for yet
ONLY_NEW = os.environ.get("BENCH_COST_ONLY_NEW") == "1"  # skip the baseline run (while iterating on prompts)
CACHED_SHARE_OF_INPUT = 0.25  # GPT-4.1's cached-input price / input price (the default price table)
STAGES = (("mine", ("mine.",)), ("synth", ("synth.",)), ("validate", ("validate.",)), ("scenarios", ("scen.",)),
          ("rollouts", ("agent", "user_sim")))

CHILD = """
import asyncio, json, sys
from envscaler_core.config import load_settings, public_config
from flows.factory import factory_flow
overrides = json.loads(sys.argv[1])
config = public_config(load_settings(environ={}, overrides=overrides))
summary = asyncio.run(factory_flow(run_id="cost", sources=[sys.argv[2]], config=config))
print("RESULT " + json.dumps({"status": summary["status"], "funnel": summary["funnel"]}))
"""


def export_baseline(ref: str, target: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return target




def run_codebase(name: str, code: Path, workdir: Path, source: Path, base_env: dict[str, str]) -> dict[str, Any]:
    """One factory run with the code in `code` (its own mock, behind a fresh billing proxy)."""
    from benchmarks.cache_proxy import CacheProxy
    from envscaler.prefect_server import free_port

    env = {**base_env, "PYTHONPATH": str(code)}
    mock, mock_url = start_mock(code, env, latency_ms=LATENCY_MS)
    try:
        dump = Path(DUMP_DIR) / f"{name}.jsonl" if DUMP_DIR else None
        if dump is not None:
            dump.parent.mkdir(parents=True, exist_ok=True)
            dump.unlink(missing_ok=True)
        with CacheProxy(mock_url, free_port(), dump=dump) as proxy:
            overrides = {"mine": {"max_tasks": 80, "select_n": 8}, "validate": {"mode": "both", "rounds": ROUNDS},
                         "scen": {"per_env": 2}, "flow": {"batch_size": 10, "out_dir": str(workdir / f"out-{name}")},
                         "store": {"url": f"duckdb:///{workdir / (name + '.duckdb')}"},
                         "llm": {"base_url": f"{proxy.base_url}/v1", "api_key": "mock"}}
            t0 = time.perf_counter()
            child = subprocess.run([sys.executable, "-c", CHILD, json.dumps(overrides), str(source)], cwd=code, env=env,
                                   capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t0
            billed = proxy.stats()
    finally:
        mock.terminate()
        mock.wait(timeout=30)
    result = next((line[7:] for line in child.stdout.splitlines() if line.startswith("RESULT ")), None)
    if result is None:
        raise RuntimeError(f"{name} run failed:\n{child.stderr[-3000:]}")
    return json.loads(result) | {"billed": billed, "wall_s": wall}


def per_stage(billed: dict[str, dict[str, int]], cached_key: str = "cached_tokens") -> dict[str, dict[str, float]]:
    """Per stage and in total: requests, prompt, cached and effective tokens. `cached_key`
    "cached_at_send_tokens" counts a request's prefix as the provider would see it when it is sent."""
    out: dict[str, dict[str, float]] = {}
    for stage, prefixes in STAGES:
        rows = [v for k, v in billed.items() if k.startswith(prefixes)]
        prompt = sum(r["prompt_tokens"] for r in rows)
        cached = sum(r.get(cached_key, 0) for r in rows)
        out[stage] = {"requests": sum(r["requests"] for r in rows), "prompt": prompt, "cached": cached,
                      "effective": prompt - cached + CACHED_SHARE_OF_INPUT * cached}
    out["total"] = {k: sum(v[k] for v in out.values()) for k in ("requests", "prompt", "cached", "effective")}
    return out


def per_prompt(billed: dict[str, dict[str, int]], envs: int) -> None:
    """Per prompt id: requests, prompt tokens per request, cached share, effective tokens per env."""
    print(f"  {'prompt id':<26} {'requests':>8} {'tok/req':>8} {'cached':>7} {'eff/env':>8} {'at send':>8}")
    for tag, r in sorted(billed.items(), key=lambda kv: -kv[1]["prompt_tokens"]):
        eff, sent = (r["prompt_tokens"] - r.get(key, 0) * (1 - CACHED_SHARE_OF_INPUT)
                     for key in ("cached_tokens", "cached_at_send_tokens"))
        print(f"  {tag:<26} {r['requests']:>8} {r['prompt_tokens'] / max(r['requests'], 1):>8.0f} "
              f"{r['cached_tokens'] / max(r['prompt_tokens'], 1):>7.0%} {eff / max(envs, 1):>8.0f} {sent / max(envs, 1):>8.0f}")


def main() -> None:
    from envscaler.prefect_server import ensure_prefect_server, free_port

    base = Path(tempfile.mkdtemp(prefix="envscaler-bench-cost-"))
    baseline = export_baseline(BASELINE, base / "baseline")
    source = ROOT / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
    server = ensure_prefect_server(base / "prefect", free_port())
    env = {**os.environ, "PREFECT_HOME": str(base / "prefect"), "PREFECT_API_URL": server.api_url}
    print(f"load before: {os.getloadavg()[0]:.1f} (1-min average, {os.cpu_count()} cores); baseline {BASELINE}, "
          f"{ROUNDS} validation rounds, mock latency {LATENCY_MS} ms")
    try:
        new = run_codebase("new", ROOT, base, source, env)
        if ONLY_NEW:
            envs = new["funnel"]["accepted_envs"]
            print(f"new: {new['status']}, funnel {new['funnel']}, wall {new['wall_s']:.0f} s")
            per_prompt(new["billed"], envs)
            sent = per_stage(new["billed"], "cached_at_send_tokens")
            for stage, row in per_stage(new["billed"]).items():
                print(f"{stage:<16} prompt {row['prompt'] / max(envs, 1):>8.0f}  cached {row['cached'] / max(row['prompt'], 1):>4.0%}"
                      f"  effective {row['effective'] / max(envs, 1):>8.0f}  (looked up at send: "
                      f"{sent[stage]['effective'] / max(envs, 1):>6.0f})")
            return
        old = run_codebase("old", baseline, base, source, env)
    finally:
        server.stop()
    for name, row in (("old", old), ("new", new)):
        print(f"{name}: {row['status']}, funnel {row['funnel']}, wall {row['wall_s']:.0f} s")
    envs_old, envs_new = old["funnel"]["accepted_envs"], new["funnel"]["accepted_envs"]
    print(f"accepted envs: old {envs_old}, new {envs_new} ({'same' if envs_old == envs_new else 'DIFFERENT'})")
    a, b = per_stage(old["billed"]), per_stage(new["billed"])
    print(f"{'per accepted env':<16} {'old prompt':>10} {'cached':>7} {'effective':>10} | {'new prompt':>10} "
          f"{'cached':>7} {'effective':>10} | {'new/old eff':>11}")
    for stage in a:
        x, y = a[stage], b[stage]
        ex, ey = x["effective"] / max(envs_old, 1), y["effective"] / max(envs_new, 1)
        print(f"{stage:<16} {x['prompt'] / max(envs_old, 1):>10.0f} {x['cached'] / max(x['prompt'], 1):>7.0%} "
              f"{ex:>10.0f} | {y['prompt'] / max(envs_new, 1):>10.0f} {y['cached'] / max(y['prompt'], 1):>7.0%} "
              f"{ey:>10.0f} | {ey / ex if ex else float('nan'):>11.2f}")
    for name, row, envs in (("old", old, envs_old), ("new", new, envs_new)):
        print(f"{name}, per prompt id:")
        per_prompt(row["billed"], envs)
    total = (b["total"]["effective"] / max(envs_new, 1)) / (a["total"]["effective"] / max(envs_old, 1))
    print(f"effective prompt cost per accepted env, new / old: {total:.2f} (target <= 0.33); load "
          f"{os.getloadavg()[0]:.1f}")
    sa, sb = (per_stage(row["billed"], "cached_at_send_tokens")["total"]["effective"] / max(n, 1)
              for row, n in ((old, envs_old), (new, envs_new)))
    print(f"robustness check, prefixes looked up when a request is sent (a fan-out's requests miss each other): "
          f"old {sa:.0f}, new {sb:.0f} effective per env, new / old {sb / sa if sa else float('nan'):.2f}")


if __name__ == "__main__":
    main()
