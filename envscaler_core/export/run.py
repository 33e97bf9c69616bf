"""`export_run`: one run's store records -> training files under `<out_dir>/<run_id>/`.

Streaming: records are read a page at a time (`paging.iter_pages`) and each page is written out
before the next is read, so memory holds one page plus the run's accepted envs (needed to join
scenarios to their class code; there are hundreds, not tens of thousands). Every file is written
atomically (`atomic.py`); `manifest.json` is removed first and written last, so an export that dies
halfway leaves the previous files intact or replaced whole, and no manifest claiming them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from envscaler_core.config import Settings, outputs_root
from envscaler_core.export.atomic import atomic_output, atomic_path, sha256_file
from envscaler_core.export.envscaler_sft import FILE_NAME as ENVSCALER_TRAJ_FILE
from envscaler_core.export.envscaler_sft import envscaler_sft_row, imported_task_ids
from envscaler_core.export.llamafactory import dataset_info, llamafactory_line
from envscaler_core.export.manifest import ALL_FORMATS, EXTRA_FORMATS, FILE_NAMES, ExportFormat, ExportManifest, FileEntry
from envscaler_core.export.paging import DEFAULT_PAGE_SIZE, iter_pages
from envscaler_core.export.rl import RL_SCHEMA, env_columns, rl_row
from envscaler_core.export.hf_sft import hf_line
from envscaler_core.export.sft import exported_tools, protocol_problems, sft_line, sft_meta_line
from envscaler_core.models import AcceptedEnv, Scenario, Trajectory, canonical_json
from envscaler_core.rollout.filters import filter_trajectories
from envscaler_core.store import Store


class ExportError(ValueError):
    """The export could not start (unknown run, bad format name); nothing was written."""


class UnknownRunError(ExportError):
    pass


_LINE_BREAKS_IN_STRINGS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})
"""Characters that str.splitlines() (and some JSONL readers) take for a line end, although JSON does not:
escaped, so every reader sees one row per line (they can only occur inside strings; json.dumps already
escapes the C0 controls)."""


def _line(obj: Any) -> bytes:
    """One JSON Lines row: the one writer of every export's `.jsonl` rows."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return (text.translate(_LINE_BREAKS_IN_STRINGS) + "\n").encode("utf-8")


def _generic(reason: str) -> str:
    """Drop reasons without their numbers, so the manifest counts kinds of reasons, not instances."""
    return re.sub(r"\d+(\.\d+)?", "N", reason)


def resolve_formats(formats: Iterable[str]) -> list[ExportFormat]:
    chosen: list[ExportFormat] = []
    for name in formats:
        if name == "all":
            return list(ALL_FORMATS)
        if name not in ALL_FORMATS + EXTRA_FORMATS:
            raise ExportError(f"unknown export format {name!r}; choose from all, {', '.join(ALL_FORMATS + EXTRA_FORMATS)}")
        if name not in chosen:
            chosen.append(name)  # type: ignore[arg-type]
    if not chosen:
        raise ExportError("no export format chosen")
    return chosen


def export_dir(settings: Settings, run_id: str, out_dir: Path | None = None) -> Path:
    """`<out_dir>/<run_id>`, by default under `outputs_root(settings)` (flow.out_dir, else beside the store); absolute."""
    return (Path(out_dir).expanduser().resolve() if out_dir is not None else outputs_root(settings)) / run_id


class _Export:
    def __init__(self, store: Store, run_id: str, settings: Settings, target: Path, page_size: int) -> None:
        self.store, self.run_id, self.settings, self.target, self.page_size = store, run_id, settings, target, page_size
        self.rows: dict[str, int | None] = {}
        self.dropped: Counter[str] = Counter()

    def envs(self, manifest: ExportManifest) -> dict[str, AcceptedEnv]:
        envs: dict[str, AcceptedEnv] = {}
        with atomic_output(self.target / FILE_NAMES["envs"]) as fh:
            for page in iter_pages(self.store, AcceptedEnv, self.run_id, page_size=self.page_size):
                for fp, env in page:
                    fh.write(_line({"fingerprint": fp, **env.model_dump(mode="json"), "tools": exported_tools(env.tools)}))
                    envs[env.env_id] = env
        manifest.counts.envs = len(envs)
        self.rows[FILE_NAMES["envs"]] = len(envs)
        return envs

    def trajectories(self, manifest: ExportManifest, chosen: set[str]) -> None:
        counts = manifest.counts
        sft, hf, llamafactory, envscaler = ("sft" in chosen, "hf" in chosen, "llamafactory" in chosen,
                                            "envscaler" in chosen)
        with ExitStack() as stack:
            def opened(on: bool, name: str) -> BinaryIO | None:
                return stack.enter_context(atomic_output(self.target / name)) if on else None

            sft_fh, meta_fh = opened(sft, FILE_NAMES["sft"]), opened(sft, FILE_NAMES["sft_meta"])
            hf_fh = opened(hf, FILE_NAMES["hf"])
            lf_fh = opened(llamafactory, FILE_NAMES["llamafactory"])
            es_fh = opened(envscaler, ENVSCALER_TRAJ_FILE)
            task_ids = imported_task_ids(self.store, self.run_id) if envscaler else None
            if es_fh is not None:
                es_fh.write(b"[")  # one JSON list, as EnvScaler's step 1 reads it, streamed row by row
            for page in iter_pages(self.store, Trajectory, self.run_id, page_size=self.page_size):
                counts.trajectories += len(page)
                _, dropped = filter_trajectories([t for _, t in page], self.settings.rollout)
                filtered = {id(t): [_generic(r) for r in reasons] for t, reasons in dropped}
                for fp, traj in page:
                    # every reason, checked on every trajectory: one key per trajectory joining them
                    reasons = filtered.get(id(traj), []) + (
                        ["malformed OpenAI messages"] if protocol_problems(traj.messages) else [])
                    if reasons:
                        self.dropped[f"trajectory: {' + '.join(reasons)}"] += 1
                        continue
                    counts.trajectories_kept += 1
                    if sft_fh is not None and meta_fh is not None:
                        sft_fh.write(_line(sft_line(fp, traj)))
                        counts.sft_rows += 1
                        meta_fh.write(_line(sft_meta_line(counts.sft_rows, fp, traj)))
                    if hf_fh is not None:
                        hf_fh.write(_line(hf_line(fp, traj)))
                        counts.hf_rows += 1
                    if lf_fh is not None:
                        row, problem = llamafactory_line(fp, traj)
                        if row is None:
                            self.dropped[f"llamafactory: {_generic(problem or '')}"] += 1
                        else:
                            lf_fh.write(_line(row))
                            counts.llamafactory_rows += 1
                    if es_fh is not None:
                        row, problem = envscaler_sft_row(fp, traj, task_ids)
                        if row is None:
                            self.dropped[f"envscaler sft: {_generic(problem or '')}"] += 1
                        else:
                            es_fh.write((b",\n" if counts.envscaler_traj else b"\n") + _line(row).rstrip(b"\n"))
                            counts.envscaler_traj += 1
            if es_fh is not None:
                es_fh.write(b"\n]\n")
        if envscaler:
            self.rows[ENVSCALER_TRAJ_FILE] = counts.envscaler_traj
        if sft:
            self.rows[FILE_NAMES["sft"]] = self.rows[FILE_NAMES["sft_meta"]] = counts.sft_rows
        if hf:
            self.rows[FILE_NAMES["hf"]] = counts.hf_rows
        if llamafactory:
            self.rows[FILE_NAMES["llamafactory"]] = counts.llamafactory_rows
            name = f"envscaler_{re.sub(r'[^A-Za-z0-9_]', '_', self.run_id)}"
            info = dataset_info(name, FILE_NAMES["llamafactory"])
            with atomic_output(self.target / FILE_NAMES["llamafactory_info"]) as fh:
                fh.write((json.dumps(info, indent=2) + "\n").encode("utf-8"))
            self.rows[FILE_NAMES["llamafactory_info"]] = None

    def rl(self, manifest: ExportManifest, envs: dict[str, AcceptedEnv]) -> None:
        counts = manifest.counts
        env_cols = {env_id: env_columns(env) for env_id, env in envs.items()}
        with ExitStack() as stack:
            jsonl = stack.enter_context(atomic_output(self.target / FILE_NAMES["rl_jsonl"]))
            parquet_tmp = stack.enter_context(atomic_path(self.target / FILE_NAMES["rl_parquet"]))
            # Entered last, so it is closed (footer written) before the renames run.
            writer = stack.enter_context(pq.ParquetWriter(parquet_tmp, RL_SCHEMA, compression="zstd"))
            where = {"status": "verified"}
            for page in iter_pages(self.store, Scenario, self.run_id, where=where, page_size=self.page_size):
                counts.scenarios_verified += len(page)
                rows = []
                for fp, scenario in page:
                    cols = env_cols.get(scenario.env_id)
                    if cols is None:
                        self.dropped["rl: scenario's env is not an accepted env of the run"] += 1
                        continue
                    row = rl_row(fp, scenario, cols)
                    jsonl.write(_line(row))
                    rows.append(row)
                if rows:
                    writer.write_table(pa.Table.from_pylist(rows, schema=RL_SCHEMA))
                    counts.rl_rows += len(rows)
        self.rows[FILE_NAMES["rl_jsonl"]] = counts.rl_rows
        self.rows[FILE_NAMES["rl_parquet"]] = counts.rl_rows


def export_run(
    store: Store,
    run_id: str,
    settings: Settings,
    out_dir: Path | None = None,
    *,
    formats: Iterable[str] = ("all",),
    page_size: int = DEFAULT_PAGE_SIZE,
    verified_only: bool = False,
) -> ExportManifest:
    """Write the run's exports to `<out_dir or settings.flow.out_dir>/<run_id>/` and return the
    manifest (also written there). `envs.jsonl` and `manifest.json` are always written; `formats`
    picks among sft, hf, llamafactory, rl ("all" = these four) and envscaler (EnvScaler's own files, only
    when asked for); `verified_only` narrows the envscaler format to what is fit to train on. Unknown run -> `UnknownRunError`."""
    chosen = resolve_formats(formats)
    if store.get_run(run_id) is None:
        known = [r.run_id for r in store.list_runs()]
        hint = f"known runs: {', '.join(known[-10:])}" if known else "the store has no runs"
        from envscaler_core.store.urls import human_store

        raise UnknownRunError(f"unknown run {run_id!r} in {human_store(store.url)}; {hint}")
    target = export_dir(settings, run_id, out_dir)
    target.mkdir(parents=True, exist_ok=True)
    (target / FILE_NAMES["manifest"]).unlink(missing_ok=True)
    remove_temp_files(target)  # of an export that was killed mid-write
    try:
        return _write(store, run_id, settings, target, chosen, page_size, verified_only)
    except BaseException:
        remove_temp_files(target)  # each writer removes its own; an interrupt between two steps may not reach it
        raise


def _other_export_files(target: Path, written: set[str]) -> list[str]:
    """Export-named files beside this export that it did not write: `--format sft` after an `all` export
    left rl_*/llamafactory files next to a manifest listing only the SFT ones."""
    from envscaler_core.export.envscaler_sft import FILE_NAME as ENVSCALER_TRAJ

    names = (set(FILE_NAMES.values()) | {ENVSCALER_TRAJ}) - written - {FILE_NAMES["manifest"]}
    return sorted(n for n in names if (target / n).is_file())


def remove_temp_files(target: Path) -> list[str]:
    """Remove the hidden `.NAME.tmp-*` files writers leave until their rename; returns their names."""
    removed = []
    for stale in target.glob(".*.tmp-*"):
        stale.unlink(missing_ok=True)
        removed.append(stale.name)
    return removed


def _write(store: Store, run_id: str, settings: Settings, target: Path, chosen: list[ExportFormat], page_size: int,
           verified_only: bool) -> ExportManifest:
    run = store.get_run(run_id)
    manifest = ExportManifest(run_id=run_id, out_dir=str(target), formats=chosen,
                              run_status=run.status if run is not None else None)
    job = _Export(store, run_id, settings, target, page_size)
    envs = job.envs(manifest)
    if {"sft", "hf", "llamafactory", "envscaler"} & set(chosen):
        job.trajectories(manifest, set(chosen))
    if "rl" in chosen:
        job.rl(manifest, envs)
    if "envscaler" in chosen:
        from envscaler_core.export.envscaler_sft import shared_task_ids
        from envscaler_core.interop.export import ENVS_FILE, RL_FILE, SFT_FILE, export_envscaler

        written = export_envscaler(store, run_id, target, verified_only=verified_only)
        job.rows.update(written)
        manifest.warnings = shared_task_ids(store, run_id)
        manifest.counts.envscaler_envs, manifest.counts.envscaler_rl, manifest.counts.envscaler_sft = (
            written[ENVS_FILE], written[RL_FILE], written[SFT_FILE])
    manifest.dropped = dict(job.dropped.most_common())
    manifest.files = {
        name: FileEntry(rows=rows, bytes=(target / name).stat().st_size, sha256=sha256_file(target / name))
        for name, rows in job.rows.items()
    }
    manifest.other_files = _other_export_files(target, set(manifest.files))
    with atomic_output(target / FILE_NAMES["manifest"]) as fh:
        fh.write((json.dumps(json.loads(canonical_json(manifest.model_dump(mode="json"))), indent=2) + "\n").encode())
    return manifest
