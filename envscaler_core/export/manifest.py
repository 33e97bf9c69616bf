"""`manifest.json`: what an export contains, written last so its presence marks a finished export."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from envscaler_core.models.base import Model, utcnow

EXPORT_SCHEMA_VERSION = 3
# 2: RL rows carry row_sha256. 3: sft_messages.jsonl rows are {messages, tools} only (provenance in
# sft_messages_meta.jsonl, reasoning in sft_hf.jsonl), call ids are template-safe, RL rows carry `prompt`.
"""Bump when a file's row shape changes; consumers check it before reading."""

ExportFormat = Literal["sft", "hf", "llamafactory", "rl", "envscaler"]
ALL_FORMATS: tuple[ExportFormat, ...] = ("sft", "hf", "llamafactory", "rl")
"""What "all" means: our own training formats (the factory's export stage writes these)."""
EXTRA_FORMATS: tuple[ExportFormat, ...] = ("envscaler",)
"""Formats written only on request: EnvScaler's own files (envscaler_core/interop/export.py)."""

FILE_NAMES = {
    "envs": "envs.jsonl",
    "sft": "sft_messages.jsonl",
    "sft_meta": "sft_messages_meta.jsonl",
    "hf": "sft_hf.jsonl",
    "llamafactory": "llamafactory_sharegpt.jsonl",
    "llamafactory_info": "dataset_info.json",
    "rl_jsonl": "rl_scenarios.jsonl",
    "rl_parquet": "rl_scenarios.parquet",
    "envscaler_envs": "env_metadata.json",  # EnvScaler's own formats (envscaler_core/interop/export.py)
    "envscaler_rl": "rl_scenario_metadata.json",
    "envscaler_sft": "sft_scenario_metadata.json",
    "envscaler_solutions": "envscaler_reference_solutions.json",
    "manifest": "manifest.json",
}


class FileEntry(Model):
    rows: int | None = Field(default=None, description="JSONL/Parquet rows; None for single JSON documents.")
    bytes: int
    sha256: str


class ExportCounts(Model):
    envs: int = 0
    trajectories: int = 0
    trajectories_kept: int = Field(default=0, description="Passed the rollout filters and the protocol check.")
    sft_rows: int = 0
    hf_rows: int = Field(default=0, description="Rows of sft_hf.jsonl (the Hugging Face chat-template form).")
    llamafactory_rows: int = 0
    scenarios_verified: int = 0
    rl_rows: int = 0
    envscaler_envs: int = 0
    envscaler_rl: int = 0
    envscaler_sft: int = 0
    envscaler_traj: int = Field(default=0, description="Rows of envscaler_sft_traj.json (EnvScaler's SFT trajectory file).")


class ExportManifest(Model):
    schema_version: int = EXPORT_SCHEMA_VERSION
    run_id: str
    created_at: datetime = Field(default_factory=utcnow)
    out_dir: str
    formats: list[ExportFormat]
    counts: ExportCounts = Field(default_factory=ExportCounts)
    dropped: dict[str, int] = Field(
        default_factory=dict, description="Why records were left out, with how many (e.g. 'sft: not all checks passed')."
    )
    files: dict[str, FileEntry] = Field(default_factory=dict, description="File name -> size, rows, sha256.")
    run_status: str | None = Field(default=None, description=(
        "The run's status when this export was made: anything but completed/empty (interrupted, failed, "
        "stopped_budget) means the run is not finished and later work is missing; 'running' for the export a "
        "run makes as its own last stage."))
    warnings: list[str] = Field(default_factory=list, description=(
        "What was written but may mislead a reader: e.g. an EnvScaler task id several records share, so a join "
        "of the envscaler files on task_id is ambiguous for them."))
    other_files: list[str] = Field(default_factory=list, description=(
        "Files in this directory named like an export's that this export did not write (an earlier export's, "
        "of other formats): not described here, and not this run's data as of created_at."))

    def summary_lines(self) -> list[str]:
        """What `envscaler export` prints."""
        c = self.counts
        parts = [f"envs {c.envs}"]
        if {"sft", "hf", "llamafactory"} & set(self.formats):
            parts.append(f"trajectories {c.trajectories} (kept {c.trajectories_kept}): sft rows {c.sft_rows}, "
                         f"hf rows {c.hf_rows}, llamafactory rows {c.llamafactory_rows}")
        if "rl" in self.formats:  # only counted when written: "verified scenarios 0" read as a fact otherwise
            parts.append(f"verified scenarios {c.scenarios_verified}: rl rows {c.rl_rows}")
        lines = [
            f"export of run {self.run_id} -> {self.out_dir} (schema v{self.schema_version}, formats: {', '.join(self.formats)})",
            "  " + "; ".join(parts),
        ]
        if "envscaler" in self.formats:
            lines.append(f"  envscaler format: {c.envscaler_envs} envs, {c.envscaler_rl} RL and {c.envscaler_sft} SFT scenarios, "
                         f"{c.envscaler_traj} SFT trajectories")
        for reason, count in sorted(self.dropped.items(), key=lambda kv: -kv[1])[:8]:
            lines.append(f"  dropped {count}: {reason}")
        lines += [f"  warning: {w}" for w in self.warnings[:8]]
        for name, entry in self.files.items():
            rows = "" if entry.rows is None else f"{entry.rows} rows, "
            lines.append(f"  {name}: {rows}{entry.bytes} bytes, sha256 {entry.sha256[:16]}")
        return lines
