"""Spec: importing into a run id that already holds an import is a no-op when the inputs are the same
(the same files with the same contents, the same reference-solutions sidecar, the same `--solve`), and is
refused in one line naming what differs otherwise, with nothing written (interop re-check, F1: a changed
file at the same path or another sidecar was accepted, and the run then held two audits side by side)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.importer import ImportRefused
from envscaler_core.interop.solutions import dump, solutions_document
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import fixture_files, run_import, settings_for


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reimport")
    directory = fixture_files(tmp)
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="imp")
    return {"dir": directory, "settings": settings, "pool": sandbox_pool, "tmp": tmp}


def _snapshot(settings: Any) -> tuple[Any, ...]:
    with Store.from_url(settings.store.url) as store:
        return (store.get_run("imp"),
                sorted((s.fingerprint, s.audit) for s in store.query(ImportedScenario, run_id="imp")),
                sorted(s.fingerprint for s in store.query(Scenario, run_id="imp")))


def test_the_same_inputs_again_change_nothing(imported: dict[str, Any]) -> None:
    before = _snapshot(imported["settings"])
    report = run_import(imported["dir"], imported["settings"], imported["pool"], run_id="imp")
    assert any("nothing changed" in note for note in report.notes), report.notes
    assert report.summary["scenarios"]["verified"] > 0
    assert _snapshot(imported["settings"]) == before


def test_another_sidecar_is_refused_naming_it(imported: dict[str, Any]) -> None:
    before = _snapshot(imported["settings"])
    empty = imported["tmp"] / "empty_solutions.json"
    empty.write_bytes(dump(solutions_document([])))
    with pytest.raises(ImportRefused, match="reference-solutions sidecar") as refused:
        run_import(imported["dir"], imported["settings"], imported["pool"], run_id="imp", solutions_path=empty)
    assert "\n" not in str(refused.value) and "new --run-id" in str(refused.value)
    assert _snapshot(imported["settings"]) == before


def test_a_file_changed_at_the_same_path_is_refused_naming_it(imported: dict[str, Any], tmp_path: Path) -> None:
    before = _snapshot(imported["settings"])
    rl = imported["dir"] / "rl_scenario_metadata.json"
    original = rl.read_bytes()
    records = json.loads(original)
    records[0]["task"] = records[0]["task"] + " Please."
    rl.write_text(json.dumps(records, indent=2))
    try:
        with pytest.raises(ImportRefused, match="rl_scenario_metadata.json changed since it was imported"):
            run_import(imported["dir"], imported["settings"], imported["pool"], run_id="imp")
    finally:
        rl.write_bytes(original)
    assert _snapshot(imported["settings"]) == before


def test_solve_on_an_import_made_without_it_is_refused(imported: dict[str, Any]) -> None:
    before = _snapshot(imported["settings"])
    with pytest.raises(ImportRefused, match="--solve option"):
        run_import(imported["dir"], imported["settings"], imported["pool"], run_id="imp", solve=True)
    assert _snapshot(imported["settings"]) == before


def test_the_run_row_keeps_each_input_with_its_digest_and_what_reading_it_gave(imported: dict[str, Any]) -> None:
    with Store.from_url(imported["settings"].store.url) as store:
        report = store.get_run("imp").sources_report
    assert report is not None
    by_name = {Path(f.path).name: f for f in report.files}
    assert set(by_name) == {"env_metadata.json", "rl_scenario_metadata.json", "sft_scenario_metadata.json",
                            "envscaler_reference_solutions.json"}
    assert all(f.sha256 for f in report.files)
    sidecar = json.loads((imported["dir"] / "envscaler_reference_solutions.json").read_text())["solutions"]
    assert by_name["envscaler_reference_solutions.json"].kept == len(sidecar)
    assert by_name["env_metadata.json"].kept > 0 and by_name["rl_scenario_metadata.json"].malformed > 0
