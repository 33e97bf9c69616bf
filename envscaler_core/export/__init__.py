"""Training-data exports from the store: SFT messages, LlamaFactory sharegpt, the RL scenario set
(JSONL + Parquet), accepted envs and a manifest. File formats: docs/exports.md."""

from envscaler_core.export.manifest import (
    ALL_FORMATS, EXPORT_SCHEMA_VERSION, FILE_NAMES, ExportCounts, ExportFormat, ExportManifest, FileEntry,
)
from envscaler_core.export.paging import iter_pages, iter_records
from envscaler_core.export.rl import RL_SCHEMA, RLRowError, env_columns, rl_row, row_to_records
from envscaler_core.export.run import ExportError, UnknownRunError, export_dir, export_run, resolve_formats

__all__ = [
    "ALL_FORMATS", "EXPORT_SCHEMA_VERSION", "FILE_NAMES", "RL_SCHEMA", "ExportCounts", "ExportError", "ExportFormat",
    "ExportManifest", "FileEntry", "RLRowError", "UnknownRunError", "env_columns", "export_dir", "export_run", "iter_pages",
    "iter_records", "resolve_formats", "rl_row", "row_to_records",
]
