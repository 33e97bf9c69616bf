"""EnvScaler import + audit throughput on 10,000 synthetic scenarios over 100 envs.

Baseline measured in the same run, on the same data: checks in-process, EnvScaler's way (its
`interact_with_env`: exec the env code per scenario, construct + setattr, snapshot, exec each check
with `initial_state`), no isolation at all.

Reported: the importer's sandbox work (one episode per scenario load, one isolation unit per check)
in checks/s and scenarios/s for 1, 2, 4, 8 host threads over the pool (on `SAMPLE` scenarios), as
ratios against the baseline and against one thread; the whole import (read, validate every env, load
every initial state, run every check, write the store) in scenarios/s; peak RSS of the import and of
the baseline, each in its own fresh process (ru_maxrss minus the RSS before the work started).
Sizes: ENVSCALER_BENCH_INTEROP_ENVS / _PER_ENV / _SAMPLE / _THREADS.
"""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import os
import random
import resource
import tempfile
import time
import types
from pathlib import Path
from typing import Any

ENVS = int(os.environ.get("ENVSCALER_BENCH_INTEROP_ENVS", 100))
PER_ENV = int(os.environ.get("ENVSCALER_BENCH_INTEROP_PER_ENV", 100))
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "envscaler" / "env_metadata.json"
SAMPLE = int(os.environ.get("ENVSCALER_BENCH_INTEROP_SAMPLE", 1000))
"""Scenarios in the per-thread-count sandbox measurement (the whole import always runs on all of them)."""
THREADS = [int(t) for t in os.environ.get("ENVSCALER_BENCH_INTEROP_THREADS", "1,2,4,8").split(",")]


def _fn(body: str) -> str:
    return "def check_func(final_state):\n" + "\n".join("    " + line for line in body.splitlines())


def _checks(k: int, book: str, member: str) -> list[dict[str, str]]:
    checks = [
        {"check_item": f"Has {book} been lent to {member}?", "check_func": _fn(
            f'return any(l["book_id"] == "{book}" and l["member_id"] == "{member}" and l["status"] == "active"\n'
            '           for l in final_state["loans"].values())')},
        {"check_item": f"Is {book} unavailable?", "check_func": _fn(f'return final_state["books"]["{book}"]["available"] is False')},
        {"check_item": "Was one loan added?", "check_func": _fn('return len(final_state["loans"]) == len(initial_state["loans"]) + 1')},
    ]
    if k % 50 == 0:
        checks.append({"check_item": "How many loans?", "check_func": _fn('return len(final_state["loans"])')})
    elif k % 97 == 0:
        checks.append({"check_item": "Broken", "check_func": _fn("return helper(final_state)")})
    elif k % 10 == 0:
        checks.append({"check_item": f"Is {member} registered?", "check_func": _fn(f'return "{member}" in final_state["members"]')})
    else:
        checks.append({"check_item": f"Is {member} still active?", "check_func": _fn(
            f'return final_state["members"]["{member}"]["status"] == "active" and len(final_state["loans"]) > 3')})
    return checks


def build(directory: Path) -> tuple[Path, Path]:
    """`env_metadata.json` (100 renamed copies of an EnvScaler-style class) and one RL scenario file."""
    template = json.loads(FIXTURE.read_text())["env_1"]
    rng = random.Random(7)
    envs, scenarios = {}, []
    for e in range(ENVS):
        env_id, cls = f"env_{e + 1}", f"LibraryLoanSystem{e + 1}"
        envs[env_id] = {**template, "env_id": env_id, "env_class_name": cls,
                        "env_class_code": template["env_class_code"].replace("LibraryLoanSystem", cls)}
        for k in range(PER_ENV):
            books = {f"B{i}": {"book_id": f"B{i}", "title": f"Title {i}", "available": rng.random() < 0.7} for i in range(12)}
            members = {f"M{i}": {"member_id": f"M{i}", "name": f"Member {i}", "status": "active"} for i in range(6)}
            loans = {f"L{i}": {"loan_id": f"L{i}", "book_id": f"B{i}", "member_id": f"M{i % 6}", "status": "active"}
                     for i in range(3)}
            book = next(b for b, v in books.items() if v["available"])
            scenarios.append({"env_id": env_id, "env_class_name": cls, "task_id": f"{e:03d}-{k:03d}",
                              "init_config": {"books": books, "members": members, "loans": loans},
                              "task": f"Lend {book} to M5 and make sure it shows as unavailable.",
                              "checklist": [], "checklist_with_func": _checks(e * PER_ENV + k, book, "M5")})
    env_path, rl_path = directory / "env_metadata.json", directory / "rl_scenario_metadata.json"
    env_path.write_text(json.dumps(envs, indent=2))
    rl_path.write_text(json.dumps(scenarios, indent=2))
    return env_path, rl_path


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def inprocess(env_path: str, rl_path: str) -> dict[str, Any]:
    """EnvScaler's own way: everything exec'd in this process, no isolation, no timeout."""
    envs = json.loads(Path(env_path).read_text())
    tasks = json.loads(Path(rl_path).read_text())
    before = _rss_kb()
    t0 = time.perf_counter()
    checks = 0
    for task in tasks:
        module = types.ModuleType("dynamic_env")
        exec(envs[task["env_id"]]["env_class_code"], module.__dict__)
        cls = getattr(module, task["env_class_name"])
        config = copy.deepcopy(task["init_config"])
        try:
            inst = cls(config) if config else cls({})
        except TypeError:
            inst = cls()
        for key, value in (config or {}).items():
            setattr(inst, key, value)
        state = copy.deepcopy({k: v for k, v in vars(inst).items() if not (k.startswith("__") and k.endswith("__"))})
        for item in task["checklist_with_func"]:
            scope = {"__builtins__": __builtins__, "initial_state": copy.deepcopy(state)}
            try:
                exec(item["check_func"], scope)
                scope["check_func"](state)
            except Exception:  # noqa: BLE001 - the baseline mirrors EnvScaler's catch-all
                pass
            checks += 1
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "checks": checks, "scenarios": len(tasks),
            "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}


def sandbox_audit(env_path: str, rl_path: str, threads: str) -> dict[str, Any]:
    """The importer's sandbox work on a sample: per scenario one episode loads the initial state, then
    every check runs in its own unit (`run_checks`); `threads` host threads over the pool."""
    from envscaler_core.config import load_settings
    from envscaler_core.interop.sandboxed import Breaker, load_state, parallel, run_checks
    from sandbox import SandboxPool

    envs = json.loads(Path(env_path).read_text())
    tasks = json.loads(Path(rl_path).read_text())[:SAMPLE]
    settings = load_settings(environ={})
    pool = SandboxPool(settings.sandbox)
    breaker = Breaker(settings.scen.check_timeout_s)

    def one(task: dict[str, Any]) -> tuple[int, int]:
        loaded = load_state(pool, envs[task["env_id"]]["env_class_code"], task["env_class_name"], task["init_config"], breaker)
        assert loaded.state is not None, loaded.error
        outcomes = run_checks(pool, [c["check_func"] for c in task["checklist_with_func"]], loaded.state, loaded.state, breaker)
        return len(outcomes), sum(1 for o in outcomes if o.passed is None)

    try:
        one(tasks[0])  # warm
        t0 = time.perf_counter()
        counts = parallel(one, tasks, int(threads))
        seconds = time.perf_counter() - t0
    finally:
        pool.close()
    return {"seconds": seconds, "scenarios": len(tasks), "checks": sum(c for c, _ in counts),
            "errors": sum(e for _, e in counts)}


def full_import(env_path: str, rl_path: str, tmp: str) -> dict[str, Any]:
    from envscaler_core.config import load_settings
    from envscaler_core.interop.importer import import_envscaler
    from envscaler_core.store import Store
    from sandbox import SandboxPool

    settings = load_settings(environ={}, overrides={"store": {"url": f"duckdb:///{Path(tmp) / 'bench.duckdb'}"}})
    pool = SandboxPool(settings.sandbox)
    before = _rss_kb()
    try:
        with Store.from_url(settings.store.url) as store:
            t0 = time.perf_counter()
            report = import_envscaler(Path(env_path), [Path(rl_path)], store=store, runtime=pool, settings=settings,
                                      run_id="bench")
            seconds = time.perf_counter() - t0
    finally:
        pool.close()
    return {"seconds": seconds, "summary": report.summary, "phases": report.seconds,
            "peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}


def _child(target: str, args: tuple[str, ...], queue: Any) -> None:
    queue.put(globals()[target](*args))


def measure(target: str, *args: str) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(target, args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-interop-") as tmp:
        env_path, rl_path = build(Path(tmp))
        n = ENVS * PER_ENV
        print(f"data: {ENVS} envs, {n} RL scenarios, {rl_path.stat().st_size / 1e6:.1f} MB of scenario JSON; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        base = measure("inprocess", str(env_path), str(rl_path))
        b_rate = base["checks"] / base["seconds"]
        print(f"baseline, in-process (EnvScaler's way, no isolation): {b_rate:9.0f} checks/s "
              f"{base['scenarios'] / base['seconds']:8.0f} scenarios/s  peak +{base['peak_mb']:.0f} MB")
        first = None
        for threads in THREADS:
            box = measure("sandbox_audit", str(env_path), str(rl_path), str(threads))
            rate, scen_rate = box["checks"] / box["seconds"], box["scenarios"] / box["seconds"]
            first = first or rate
            print(f"sandbox, {threads} host thread(s), {box['scenarios']} scenarios (1 episode + 1 unit per check each): "
                  f"{rate:7.0f} checks/s {scen_rate:6.1f} scenarios/s  = {rate / b_rate:.4f}x in-process, "
                  f"{rate / first:.2f}x 1 thread  ({box['errors']} checks not ok, as planted)")
        whole = measure("full_import", str(env_path), str(rl_path), tmp)
        print(f"whole import + audit (read, validate {ENVS} envs, load {n} states, run every check, write store): "
              f"{whole['seconds']:.1f} s = {n / whole['seconds']:.1f} scenarios/s "
              f"(= {n / whole['seconds'] / (base['scenarios'] / base['seconds']):.4f}x in-process), "
              f"peak +{whole['peak_mb']:.0f} MB (in-process +{base['peak_mb']:.0f} MB)")
        print(f"  phases (s): {whole['phases']} (audit = validation of every env + initial states + checks)")
        print(f"audit: {json.dumps({k: whole['summary'][k] for k in ('envs', 'scenarios')})}")


if __name__ == "__main__":
    main()
