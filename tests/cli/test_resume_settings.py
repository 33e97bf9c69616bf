"""Spec: a resume runs with the run's own settings (one run is one experiment), except how it reaches its
model, sandbox and store, which the resuming command's environment, config file and flags decide when
they give them; `--max-tokens`/`--max-cost` raise the budget; a demo run gets the bundled mock's endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler.resume_plan import endpoint_change, resume_settings
from envscaler_core.config import load_settings, public_config
from envscaler_core.models import Run

OLD_ENDPOINT = "http://127.0.0.1:9/v1"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Run:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ENVSCALER_DB_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ENVSCALER_DATA_DIR", str(tmp_path / "data"))
    settings = load_settings(environ={}, overrides={
        "llm": {"base_url": OLD_ENDPOINT, "api_key": "sk-old", "models": {"agent": "run-agent"},
                "prices": {"run-agent": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}},
        "mine": {"select_n": 5}, "budget": {"max_tokens": 1000}, "store": {"url": str(tmp_path / "old.duckdb")}})
    return Run(run_id="r1", config=public_config(settings), sources=["/x.jsonl"])


def test_without_anything_given_the_run_keeps_everything(run: Run) -> None:
    settings = resume_settings(run, None, None)
    assert settings.llm.base_url == OLD_ENDPOINT and settings.mine.select_n == 5
    assert settings.budget.max_tokens == 1000 and settings.store.url == run.config["store"]["url"]
    assert settings.llm.api_key is None  # never stored with the run
    assert endpoint_change(run, settings) is None


def test_endpoint_key_and_store_from_the_environment_apply(run: Run, monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8123/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-new")
    monkeypatch.setenv("ENVSCALER_DB_URL", str(tmp_path / "new.duckdb"))
    monkeypatch.setenv("ENVSCALER_LLM__TIMEOUT_S", "7")
    settings = resume_settings(run, None, None)
    assert settings.llm.base_url == "http://127.0.0.1:8123/v1" and settings.llm.api_key == "sk-new"
    assert settings.store.url == str(tmp_path / "new.duckdb") and settings.llm.timeout_s == 7
    assert endpoint_change(run, settings) == f"endpoint http://127.0.0.1:8123/v1 (the run last used {OLD_ENDPOINT})"


def test_what_the_run_asks_stays_the_runs_own(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVSCALER_MINE__SELECT_N", "50")
    monkeypatch.setenv("ENVSCALER_LLM__MODELS__AGENT", "another-model")
    monkeypatch.setenv("ENVSCALER_BUDGET__MAX_TOKENS", "5")
    settings = resume_settings(run, None, None)
    assert settings.mine.select_n == 5 and settings.llm.models.agent == "run-agent" and settings.budget.max_tokens == 1000


def test_a_config_file_and_db_flag_give_how_to_reach_things(run: Run, tmp_path: Path) -> None:
    config = tmp_path / "resume.toml"
    config.write_text('[llm]\nbase_url = "http://127.0.0.1:8124/v1"\n[mine]\nselect_n = 99\n')
    settings = resume_settings(run, config, str(tmp_path / "flag.duckdb"))
    assert settings.llm.base_url == "http://127.0.0.1:8124/v1" and settings.mine.select_n == 5
    assert settings.store.url == str(tmp_path / "flag.duckdb")


def test_budget_flags_raise_the_budget(run: Run) -> None:
    settings = resume_settings(run, None, None, max_tokens=50_000, max_cost=2.5)
    assert settings.budget.max_tokens == 50_000 and settings.budget.max_cost_usd == 2.5
    assert settings.mine.select_n == 5


def test_a_cost_budget_for_a_run_with_an_unpriced_model_is_refused(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    """The run's agent model has no price: a cost cap could never see its calls (exit 2, one line)."""
    import typer

    unpriced = run.model_copy(update={"config": {**run.config, "llm": {**run.config["llm"], "prices": {}}}})
    assert resume_settings(unpriced, None, None, max_tokens=50_000).budget.max_tokens == 50_000
    with pytest.raises(typer.Exit) as stopped:
        resume_settings(unpriced, None, None, max_cost=2.5)
    assert stopped.value.exit_code == 2
    assert ("budget.max_cost_usd=2.5 cannot see the calls of a model without a price (llm.models.agent='run-agent')"
            in capsys.readouterr().err)


def test_a_raised_budget_is_what_the_next_resume_starts_from(run: Run) -> None:
    """The flow stores the settings it ran with on the run (`public_config`); the next resume reads them."""
    raised = resume_settings(run, None, None, max_tokens=50_000)
    later = resume_settings(run.model_copy(update={"config": public_config(raised)}), None, None)
    assert later.budget.max_tokens == 50_000


def test_a_demo_endpoint_wins_over_the_environment(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8123/v1")
    mock = {"base_url": "http://127.0.0.1:8555/v1", "api_key": "mock"}
    settings = resume_settings(run, None, None, endpoint=mock)
    assert settings.llm.base_url == mock["base_url"] and settings.llm.api_key == "mock"


def test_a_run_setting_given_to_resume_is_named_as_ignored(run: Run, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An outside check set the model a failed stage needed and resumed: the old model was sent again
    without a word. The run keeps its own (one run is one experiment), and says so."""
    monkeypatch.setenv("ENVSCALER_LLM__MODELS__AGENT", "another-model")
    settings = resume_settings(run, None, None, note_changes=True)
    assert settings.llm.models.agent == "run-agent"
    err = capsys.readouterr().err
    assert "llm.models.agent is 'run-agent' there, 'another-model' here (ENVSCALER_LLM__MODELS__AGENT)" in err
    assert "ignored; a new --run-id runs with it" in err


def test_a_resume_given_nothing_of_the_runs_says_nothing(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    resume_settings(run, None, None, note_changes=True)
    assert capsys.readouterr().err == ""
