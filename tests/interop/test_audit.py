"""Spec: importing EnvScaler's own files audits every env and every scenario with our machinery.

The fixture files (tests/fixtures/envscaler, README there) are written in EnvScaler's documented
formats and plant one of each audit class, SFT records, planted env defects and malformed records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.summary import audit_summary
from envscaler_core.models import AcceptedEnv, EnvCandidate, Run, Scenario, ValidationRound
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import EXPECTED_RL, EXPECTED_SFT, run_import, settings_for


def _scenarios(fixture_import: dict[str, Any]) -> list[ImportedScenario]:
    with Store.from_url(fixture_import["settings"].store.url) as store:
        return store.query(ImportedScenario, run_id="imp")


def test_audit_counts_are_exactly_those_the_fixtures_plant(fixture_import: dict[str, Any]) -> None:
    summary = fixture_import["report"].summary
    assert summary["envs"] == {"accepted": 2, "rejected": 2}
    assert summary["scenarios"] == {"verified": 3, "unproven": 8, "vacuous": 2, "check_error": 6, "not_bool": 1,
                                    "nondeterministic": 0,
                                    "env_rejected": 4}
    assert len(summary["reasons"]["malformed"]) == 11


def test_rejected_env_reasons_count_each_rejected_env_once(fixture_import: dict[str, Any]) -> None:
    """`reasons.rejected_envs` is reason -> envs: env_3, rejected for a query that changed state (with
    more reasons and the advice after it), is counted once, so the counts add up to the rejected envs
    (outside check 3, F8: five rejected envs gave eleven entries)."""
    summary = fixture_import["report"].summary
    counted = summary["reasons"]["rejected_envs"]
    assert sum(counted.values()) == summary["envs"]["rejected"] == 2
    assert any("query tool get_slot changed state" in r for r in counted), counted


def test_json_summary_has_exactly_the_documented_shape(fixture_import: dict[str, Any]) -> None:
    summary = fixture_import["report"].summary
    assert list(summary) == ["run_id", "envs", "scenarios", "reasons"]
    assert list(summary["scenarios"]) == ["verified", "unproven", "vacuous", "check_error", "not_bool", "nondeterministic",
                                          "env_rejected"]
    assert summary["run_id"] == "imp"


def test_every_scenario_gets_the_class_of_its_worst_check(fixture_import: dict[str, Any]) -> None:
    got = {(s.split, s.source.rsplit("[", 1)[1].rstrip("]")): s.audit for s in _scenarios(fixture_import)}
    expected = {("rl", str(i)): c for i, c in EXPECTED_RL.items()} | {("sft", str(i)): c for i, c in EXPECTED_SFT.items()}
    assert got == expected


def test_env_with_a_query_tool_that_writes_state_is_rejected_with_that_reason(fixture_import: dict[str, Any]) -> None:
    with Store.from_url(fixture_import["settings"].store.url) as store:
        env = store.get(ImportedEnv, ImportedEnv(env_id="env_3", position=0, source="", record_json="{}", class_name="x",
                                                 candidate_fp="", status="rejected").fingerprint, "imp")
        candidate = store.get(EnvCandidate, env.candidate_fp, "imp")
        rounds = store.query(ValidationRound, run_id="imp", where={"candidate_fp": env.candidate_fp})
    assert env.status == "rejected" and any("query tool get_slot changed state" in r for r in env.reasons)
    assert candidate.status == "rejected" and "get_slot" in candidate.failure_reason
    assert rounds, "the validation rounds behind the verdict are stored"


def test_env_that_does_not_exec_the_way_envscaler_loads_it_is_rejected(fixture_import: dict[str, Any]) -> None:
    reasons = fixture_import["report"].summary["reasons"]["rejected_envs"]
    assert any("NameError: name 'Optional' is not defined" in r for r in reasons)


def test_malformed_records_are_reported_with_file_and_index_and_skipped(fixture_import: dict[str, Any]) -> None:
    problems = fixture_import["report"].problems
    assert "env_metadata.json[env_4]: 'env_class_code' is missing (EnvScaler's loaders read it)" in problems
    assert any(p.startswith("env_metadata.json[env_6]: 'tools'") for p in problems)
    indexes = sorted(int(p.split("[")[1].split("]")[0]) for p in problems if p.startswith("rl_scenario_metadata.json"))
    assert indexes == list(range(19, 27))
    assert any(p.startswith("rl_scenario_metadata.json[26]") and "py/object" in p for p in problems)
    assert any(p.startswith("sft_scenario_metadata.json[5]") and "task_id" in p for p in problems)
    assert {s.env_id for s in _scenarios(fixture_import)} <= {"env_1", "env_2", "env_3", "env_5"}


def test_ids_and_records_are_kept_verbatim(fixture_import: dict[str, Any]) -> None:
    directory: Path = fixture_import["dir"]
    rl = json.loads((directory / "rl_scenario_metadata.json").read_text())
    stored = {s.position: s for s in _scenarios(fixture_import) if s.split == "rl"}
    assert [stored[i].record for i in range(19)] == rl[:19]
    assert stored[14].task_id == "7"  # an integer task id, kept (as text for our index)
    with Store.from_url(fixture_import["settings"].store.url) as store:
        envs = {e.env_id: e for e in store.query(ImportedEnv, run_id="imp")}
    raw = json.loads((directory / "env_metadata.json").read_text())
    assert envs["env_2"].record == raw["env_2"]  # set markers in env_structure untouched


def test_verified_scenarios_keep_the_replayed_solution_and_drop_calls_envscaler_would_not_run(fixture_import: dict[str, Any]) -> None:
    by_task = {s.task_id: s for s in _scenarios(fixture_import)}
    loan = by_task["0301-101501"]
    assert loan.audit == "verified" and loan.solution_origin == "file"
    assert [(c.tool, c.args) for c in loan.reference_solution] == [("return_book", {"loan_id": "L1"})]
    assert by_task["0301-101502"].audit == "unproven"
    assert by_task["0301-101502"].attempts == ["file: the reference solution leaves a check False"]


def test_type_markers_reach_checks_as_python_types(fixture_import: dict[str, Any]) -> None:
    """Scenario 14's check needs a restored datetime (`.month`) and tuple; it verifies."""
    jar = next(s for s in _scenarios(fixture_import) if s.task_id == "7")
    assert jar.audit == "verified" and jar.checks[0].on_initial is False and jar.checks[0].on_solved is True


def test_each_check_is_classified_on_its_own(fixture_import: dict[str, Any]) -> None:
    mixed = next(s for s in _scenarios(fixture_import) if s.task_id == "0301-101507")
    assert [c.outcome for c in mixed.checks] == ["unproven", "vacuous"]
    assert mixed.checks[0].error == ("not a bool on the initial state (0 there, as EnvScaler's reward counts it): "
                                     "check_func returned NoneType, not bool")


def test_the_run_holds_factory_records_for_the_rest_of_the_factory(fixture_import: dict[str, Any]) -> None:
    with Store.from_url(fixture_import["settings"].store.url) as store:
        run = store.get_run("imp")
        envs = store.query(AcceptedEnv, run_id="imp")
        verified = store.query(Scenario, run_id="imp", where={"status": "verified"})
        summary = audit_summary(store, "imp")
    assert isinstance(run, Run) and run.stage == "import" and run.status == "completed"
    assert sorted(e.env_id for e in envs) == ["env_1", "env_2"]
    assert len(verified) == 2 and all(s.reference_solution for s in verified)  # task 7: see the next spec
    assert summary == fixture_import["report"].summary


def test_a_verified_scenario_whose_solution_fails_the_factorys_way_is_not_promoted(
        fixture_import: dict[str, Any]) -> None:
    """Task 7 holds tuple and datetime markers and its check reads `.month` of a datetime: verified as
    EnvScaler's runtime (markers restored), but a factory scenario gets the flattened config, where its
    own solution scores 0 (outside interop check, finding 3). It stays verified in the import, says
    why it is not a factory scenario, and no RL row is made of it."""
    jar = next(s for s in _scenarios(fixture_import) if s.task_id == "7")
    assert jar.audit == "verified"
    promoted = "verified under our emulation of EnvScaler's runtime (in the sandbox), but not promoted"
    assert any(r.startswith(promoted) for r in jar.reasons), jar.reasons
    with Store.from_url(fixture_import["settings"].store.url) as store:
        promoted = store.query(Scenario, run_id="imp", where={"status": "verified"})
    assert json.loads(jar.record_json)["task"] not in {s.task for s in promoted}


def test_reimporting_the_same_files_into_the_same_run_changes_nothing(fixture_import: dict[str, Any], sandbox_pool: Any) -> None:
    report = run_import(fixture_import["dir"], fixture_import["settings"], sandbox_pool)
    assert report.summary == fixture_import["report"].summary


def test_an_env_list_instead_of_a_dict_is_read_by_each_records_env_id(envscaler_dir: Path, tmp_path: Path,
                                                                      sandbox_pool: Any) -> None:
    data = json.loads((envscaler_dir / "env_metadata.json").read_text())
    (envscaler_dir / "env_metadata.json").write_text(json.dumps(list(data.values())))
    report = run_import(envscaler_dir, settings_for(tmp_path), sandbox_pool, run_id="as-list")
    assert report.summary["envs"] == {"accepted": 2, "rejected": 2}
    assert report.summary["scenarios"]["verified"] == 3


def test_the_import_runs_summary_has_no_empty_funnel_note(fixture_import: dict[str, Any]) -> None:
    """It reads no source tasks: "no source task was read; the run had nothing to work on" was false."""
    from envscaler_core.pipeline.report import build_summary

    with Store.from_url(fixture_import["settings"].store.url) as store:
        summary = build_summary(store, "imp")
    assert summary.audit is not None and summary.notes == []
