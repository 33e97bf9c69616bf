"""Reading an exported RL file back (`.jsonl` or `.parquet`) only as it was written.

Each row's digests (`scenario_fp`, `row_sha256`: `export/rl.py`) catch an edited row, not a file cut at a
line end, a row written twice or an empty file: those loaded without a word (red team 9, F2: 3 of 10 rows
loaded; a repeated row is sampled twice as often). So an empty file and a repeated row are refused always,
and when the export's `manifest.json` is beside the file (or given), the file's row count and sha256 must
be the ones it records. Both are digests, not signatures: they catch accidents, not someone who recomputes
them. Every refusal is one `RLRowError` line naming the file and what differs: a file that cannot be read
at all (a cut Parquet file, a byte that is not UTF-8) too, by the manifest's sha256 when there is one, which
is checked before parsing (rt10-A F5: pyarrow's ArrowInvalid and a UnicodeDecodeError escaped).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from envscaler_core.export.manifest import FILE_NAMES, ExportManifest, FileEntry
from envscaler_core.export.rl import RLRowError
from envscaler_core.models.base import file_sha256
from envscaler_core.text_files import jsonl_objects


def read_rl_rows(path: Path, manifest: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) for each row of an exported RL file; an empty file or a repeated row is refused. A file
    that cannot be read (a cut Parquet file, a byte that is not UTF-8) is one `RLRowError` naming it: the
    sha256 refusal when its manifest (`manifest`, or the one beside it) records another digest, which is
    checked before the file is parsed (rt10-A F5: pyarrow's ArrowInvalid and a UnicodeDecodeError escaped)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"RL scenario file not found: {path}")
    differs = _sha256_differs(path, manifest)
    try:
        rows = _parquet_rows(path) if path.suffix == ".parquet" else _jsonl_rows(path)
    except RLRowError as exc:
        raise RLRowError(differs or str(exc)) from None
    except (OSError, ValueError) as exc:  # pyarrow's errors are these (ArrowInvalid: ValueError; ArrowIOError)
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        kind = "Parquet" if path.suffix == ".parquet" else "JSONL"
        raise RLRowError(differs or f"{path}: not a readable {kind} file ({first})") from None
    if not rows:
        raise RLRowError(f"{path}: no rows (an empty RL file loads no env: is it the export's?)")
    _refuse_repeats(path, rows)
    return [(f"{path}:{label}", row) for label, row in rows]


def _parquet_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    import pyarrow.parquet as pq

    return [(f"row {i}", row) for i, row in enumerate(pq.read_table(path).to_pylist())]


def _jsonl_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(str(lineno), row) for lineno, row in jsonl_objects(path, RLRowError)]


def _refuse_repeats(path: Path, rows: list[tuple[str, dict[str, Any]]]) -> None:
    """A row twice (the same row_sha256, or the same scenario_fp) would be sampled twice as often."""
    seen: dict[tuple[str, str], str] = {}
    for label, row in rows:
        for key in ("row_sha256", "scenario_fp"):
            value = row.get(key)
            if not isinstance(value, str):
                continue  # row_to_records names the missing field
            first = seen.setdefault((key, value), label)
            if first != label:
                kind = "lines" if label.isdigit() else "rows"
                raise RLRowError(f"{path}: {kind} {first.removeprefix('row ')} and {label.removeprefix('row ')} "
                                 f"hold the same row ({key} {value[:12]}): a repeated row is sampled twice as often")


def check_manifest(path: Path, rows: int, given: Path | None = None) -> None:
    """Refuse an RL file of `rows` rows whose row count or sha256 differs from its export's manifest.json:
    `given`, or the one beside the file. A given manifest must list a file of this name or `rl_scenarios.*`
    of this format; one beside the file that does not list it is not this file's export (no check).
    Called once the rows themselves were read, so an edited row is named by its own digest first."""
    found = _manifest_entry(path, given)
    if found is None:
        return
    where, entry = found
    if entry.rows is not None and entry.rows != rows:
        raise RLRowError(f"{path}: {rows} rows, {where.name} says {entry.rows} (a truncated or edited file)")
    differs = _sha256_differs(path, given)
    if differs:
        raise RLRowError(differs)


def _sha256_differs(path: Path, given: Path | None) -> str | None:
    """The refusal of a file whose sha256 is not the one its manifest records (None: it is, or no manifest)."""
    found = _manifest_entry(path, given)
    if found is None:
        return None
    where, entry = found
    digest = file_sha256(path)
    if digest == entry.sha256:
        return None
    return f"{path}: sha256 {digest[:12]} differs from {where.name}'s {entry.sha256[:12]} (an edited file)"


def _manifest_entry(path: Path, given: Path | None) -> tuple[Path, FileEntry] | None:
    """The manifest and its entry for this file: `given` (which must list it), else the one beside it if
    it lists it (one that does not is not this file's export); None when there is none."""
    where = Path(given) if given is not None else path.parent / FILE_NAMES["manifest"]
    if given is None and not where.is_file():
        return None  # a copy without its export: the rows' own digests are all there is
    try:
        manifest = ExportManifest.model_validate_json(where.read_bytes())
    except (OSError, ValidationError) as exc:
        raise RLRowError(f"{where}: not an export manifest: {str(exc).splitlines()[0]}") from exc
    fallback = FILE_NAMES["rl_parquet"] if path.suffix == ".parquet" else FILE_NAMES["rl_jsonl"]
    entry = manifest.files.get(path.name) or (manifest.files.get(fallback) if given is not None else None)
    if entry is None and given is not None:
        raise RLRowError(f"{path}: {where} lists neither {path.name} nor {fallback}")
    return None if entry is None else (where, entry)
