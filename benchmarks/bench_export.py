"""RL export of 50,000 verified scenarios from DuckDB: streaming `export_run` vs a naive baseline.

Baseline (same run, same store, same output files' content): `store.query` every verified scenario
and env into lists, build every row, then `json.dump` the list and write one Parquet table. Each side
runs in its own fresh process, so peak RSS (ru_maxrss) is that side's alone; the figure reported is
the peak minus the RSS just before exporting (interpreter, imports and open store excluded).
Ratios are what to compare across machines; the machine is shared, so absolute times are noisy.

Run: `.venv/bin/python -m benchmarks bench_export` (ENVSCALER_BENCH_EXPORT_N overrides the count).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

N_DEFAULT = 50_000
ENVS = 50
RUN_ID = "bench-export"


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def build_store(url: str, n: int) -> float:
    """n verified scenarios over ENVS copies of the library env (distinct ids), in one run."""
    from envscaler_core.models import Run, Scenario
    from envscaler_core.store import Store
    from tests.scenarios.helpers import LENT_B1, LOAN_ANA, PLAN, STATE, library_env

    t0 = time.perf_counter()
    base = library_env()
    envs = [base.model_copy(update={"env_id": f"env_bench_{i:03d}", "candidate_fp": f"{i:064d}"}) for i in range(ENVS)]
    with Store.from_url(url) as store:
        store.save_run(Run(run_id=RUN_ID))
        store.upsert(envs, RUN_ID)
        chunk: list[Any] = []
        for i in range(n):
            state = json.loads(json.dumps(STATE))
            state["books"][f"x{i}"] = {"book_id": f"x{i}", "title": f"Volume {i}", "status": "available"}
            chunk.append(Scenario(
                env_id=envs[i % ENVS].env_id, initial_state=state, task=f"Lend Dune (b1) and Emma (b2) to Ana. #{i}",
                checklist=[LENT_B1.item, LOAN_ANA.item], checks=[LENT_B1, LOAN_ANA], reference_solution=PLAN,
                status="verified",
            ))
            if len(chunk) == 5000:
                store.upsert(chunk, RUN_ID)
                chunk = []
        if chunk:
            store.upsert(chunk, RUN_ID)
    return time.perf_counter() - t0


def streaming(url: str, out: str) -> int:
    from envscaler_core.config import Settings
    from envscaler_core.export import export_run
    from envscaler_core.store import Store

    with Store.from_url(url) as store:
        return export_run(store, RUN_ID, Settings(), Path(out), formats=["rl"]).counts.rl_rows


def naive(url: str, out: str) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from envscaler_core.export import RL_SCHEMA, env_columns, rl_row
    from envscaler_core.models import AcceptedEnv, Scenario
    from envscaler_core.store import Store

    with Store.from_url(url) as store:
        envs = {e.env_id: env_columns(e) for e in store.query(AcceptedEnv, run_id=RUN_ID)}
        scenarios = store.query(Scenario, run_id=RUN_ID, where={"status": "verified"})
    rows = [rl_row(s.fingerprint, s, envs[s.env_id]) for s in scenarios]
    folder = Path(out) / RUN_ID
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "rl_scenarios.json", "w", encoding="utf-8") as fh:
        json.dump(rows, fh, ensure_ascii=False)
    pq.write_table(pa.Table.from_pylist(rows, schema=RL_SCHEMA), folder / "rl_scenarios.parquet", compression="zstd")
    return len(rows)


def _child(which: str, url: str, out: str, queue: Any) -> None:
    import pyarrow  # noqa: F401  (imports loaded before the RSS baseline, for both sides)

    import envscaler_core.export  # noqa: F401
    from envscaler_core.store import Store

    Store.from_url(url).close()
    before = _rss_kb()
    t0 = time.perf_counter()
    rows = (streaming if which == "streaming" else naive)(url, out)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    queue.put({"rows": rows, "seconds": seconds, "peak_mb": (peak - before) / 1024})


def measure(which: str, url: str, out: str) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(which, url, out, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main(n: int | None = None) -> None:
    n = n or int(os.environ.get("ENVSCALER_BENCH_EXPORT_N", N_DEFAULT))
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        url = f"duckdb:///{Path(tmp) / 'bench.duckdb'}"
        built = build_store(url, n)
        print(f"store: {n} verified scenarios over {ENVS} envs written in {built:.1f}s")
        stream = measure("streaming", url, str(Path(tmp) / "stream"))
        base = measure("naive", url, str(Path(tmp) / "naive"))
        assert stream["rows"] == base["rows"] == n, (stream, base)
        for name, r in (("streaming export_run (rl)", stream), ("naive load-all + json.dump", base)):
            print(f"{name:28s}: {r['rows'] / r['seconds']:8.0f} rows/s  {r['seconds']:6.1f}s  "
                  f"peak +{r['peak_mb']:7.1f} MB")
        print(f"ratio streaming/naive: throughput x{(stream['rows'] / stream['seconds']) / (base['rows'] / base['seconds']):.2f}, "
              f"peak memory x{stream['peak_mb'] / max(base['peak_mb'], 1e-9):.3f}")
        size = sum(p.stat().st_size for p in (Path(tmp) / "stream" / RUN_ID).iterdir())
        print(f"streaming output: {size / 1e6:.1f} MB (JSONL + Parquet + envs + manifest)")


if __name__ == "__main__":
    main()
