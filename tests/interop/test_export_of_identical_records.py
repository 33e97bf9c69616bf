"""Spec: an import holding two identical RL records (EnvScaler's task ids need not be unique) exports a
reference-solutions sidecar that its own re-import reads without a problem: one entry per key, since the
importer reads one solution for every record under that key (interop re-check, F7: the export wrote one
entry per record and the re-import reported the second as a malformed duplicate key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.export import export_envscaler
from envscaler_core.interop.solutions import SOLUTIONS_FILE
from envscaler_core.store import Store
from tests.interop.conftest import FILES, FIXTURES, fixture_files, run_import, settings_for


def test_identical_records_export_a_sidecar_the_re_import_reads_cleanly(tmp_path: Path, sandbox_pool: Any) -> None:
    directory = fixture_files(tmp_path)
    rl = directory / "rl_scenario_metadata.json"
    records = json.loads(rl.read_text())
    rl.write_text(json.dumps([records[0], *records]))  # record 0 twice, solution entries too
    first = run_import(directory, settings_for(tmp_path), sandbox_pool, run_id="twice")
    assert not [p for p in first.problems if "duplicate key" in p], first.problems
    out = tmp_path / "out"
    with Store.from_url(settings_for(tmp_path).store.url) as store:
        export_envscaler(store, "twice", out)
    entries = json.loads((out / SOLUTIONS_FILE).read_text())["solutions"]
    assert len({e["key"] for e in entries}) == len(entries)
    assert all((out / name).is_file() for name in FILES)
    (tmp_path / "again").mkdir()
    again = run_import(out, settings_for(tmp_path / "again"), sandbox_pool, run_id="twice-again")
    assert not again.problems, again.problems
    assert again.summary["scenarios"]["verified"] == first.summary["scenarios"]["verified"]


def test_a_task_id_shared_by_different_records_is_a_manifest_warning(tmp_path: Path, sandbox_pool: Any) -> None:
    """Doc gap of the interop re-check: joins on EnvScaler's non-unique task ids stay ambiguous; the export
    says so in its manifest instead of leaving the reader to find out."""
    from envscaler_core.export import export_run

    directory = fixture_files(tmp_path)
    rl = directory / "rl_scenario_metadata.json"
    records = json.loads(rl.read_text())
    rl.write_text(json.dumps([*records, {**records[0], "task": records[0]["task"] + " Twice."}]))
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="shared")
    with Store.from_url(settings.store.url) as store:
        manifest = export_run(store, "shared", settings, tmp_path / "out", formats=["envscaler"])
    [warning] = manifest.warnings
    assert repr(str(records[0]["task_id"])) in warning and "ambiguous" in warning
    assert json.loads((tmp_path / "out" / "shared" / "manifest.json").read_text())["warnings"] == [warning]


def _shared_warnings(tmp_path: Path, sandbox_pool: Any, extra: list[dict[str, Any]]) -> list[str]:
    """The manifest warnings of an envscaler export of the fixture import with `extra` RL records appended."""
    from envscaler_core.export import export_run

    directory = fixture_files(tmp_path)
    rl = directory / "rl_scenario_metadata.json"
    rl.write_text(json.dumps([*json.loads(rl.read_text()), *extra]))
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="typed")
    with Store.from_url(settings.store.url) as store:
        return export_run(store, "typed", settings, tmp_path / "out", formats=["envscaler"]).warnings


def test_an_integer_and_a_string_task_id_are_different_ids(tmp_path: Path, sandbox_pool: Any) -> None:
    """`task_id` keeps its type (docs/interop.md): 7 and "7" are two ids, and no join confuses them (outside
    check 10, C-F6: they were reported as one id "shared by 2 different RL records")."""
    record = json.loads((FIXTURES / "rl_scenario_metadata.json").read_text())[0]
    again = {**record, "task_id": "7", "task": record["task"] + " Again."}
    assert _shared_warnings(tmp_path, sandbox_pool, [{**record, "task_id": 7}, again]) == []


def test_a_shared_task_id_is_named_with_its_type(tmp_path: Path, sandbox_pool: Any) -> None:
    record = json.loads((FIXTURES / "rl_scenario_metadata.json").read_text())[0]
    [warning] = _shared_warnings(tmp_path, sandbox_pool, [{**record, "task_id": 7},
                                                          {**record, "task_id": 7, "task": record["task"] + " Again."}])
    assert warning.startswith("task_id 7 of env ") and "shared by 2 different RL records" in warning
