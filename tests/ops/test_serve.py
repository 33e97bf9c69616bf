"""Spec: `python -m deployments.serve` bakes only what the config file says into the deployment.

Deployment parameters are stored by Prefect and shown on the dashboard, and the flow merges its
`config` parameter over the environment of whichever process runs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deployments.serve import deployment_parameters
from envscaler_core.config import ConfigError, load_settings

WORKER_ENV = {"ENVSCALER_DB_URL": "postgresql+psycopg://u@db:5432/factory", "OPENAI_BASE_URL": "http://llm:8000/v1",
              "OPENAI_API_KEY": "sk-worker"}


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "factory.toml"
    path.write_text('[llm]\napi_key = "sk-in-file"\ntimeout_s = 5\n\n[mine]\nselect_n = 3\n')
    return path


def test_parameters_carry_the_file_settings_but_not_the_api_key(config_file: Path) -> None:
    params = deployment_parameters(config_file, ["tasks.json"], "nightly")
    assert params == {"run_id": "nightly", "sources": ["tasks.json"],
                      "config": {"llm": {"timeout_s": 5.0}, "mine": {"select_n": 3}}}


def test_the_serving_environment_is_not_baked_in(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in WORKER_ENV.items():
        monkeypatch.setenv(name, value)
    text = repr(deployment_parameters(config_file, [], "r"))
    assert all(value not in text for value in WORKER_ENV.values()), text


def test_the_running_process_keeps_its_own_store_and_endpoint(config_file: Path) -> None:
    config = deployment_parameters(config_file, [], "r")["config"]
    settings = load_settings(environ=WORKER_ENV, overrides=config)
    assert settings.store.url == WORKER_ENV["ENVSCALER_DB_URL"]
    assert settings.llm.base_url == WORKER_ENV["OPENAI_BASE_URL"]
    assert settings.llm.api_key == "sk-worker" and settings.mine.select_n == 3


def test_a_bad_config_file_fails_at_deploy_time(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[validate]\nthreshold = 3\n")
    with pytest.raises(ConfigError, match="validate.threshold"):
        deployment_parameters(bad, [], "r")


def test_no_config_file_means_no_overrides() -> None:
    assert deployment_parameters(None, [], "r")["config"] == {}
