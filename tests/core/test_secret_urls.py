"""Spec: no secret reaches flow parameters or the runs table. `public_config` (what both hold) masks a URL's
password and every query parameter named like a secret; the process that masked a URL gets the real one
back when it builds a flow's settings from those parameters, a worker gets it from its own environment,
and a flow given a masked URL with no way to unmask it fails in one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envscaler_core.config import ConfigError, load_settings, public_config
from envscaler_core.secret_urls import is_masked, mask_url

PG = "postgresql+psycopg://envs:s3cretPW@127.0.0.1:54304/envscaler"
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("url", "masked"), [
    (PG, "postgresql+psycopg://envs:***@127.0.0.1:54304/envscaler"),
    ("postgresql://envs@db/envscaler?password=s3cret&sslmode=require",
     "postgresql://envs@db/envscaler?password=***&sslmode=require"),
    ("postgresql://envs@db/envscaler?sslpassword=k&application_name=factory",
     "postgresql://envs@db/envscaler?sslpassword=***&application_name=factory"),
    ("https://user:p%40ss@llm.example/v1?api-key=abc&access_token=def&X-Auth-Token=ghi#top",
     "https://user:***@llm.example/v1?api-key=***&access_token=***&X-Auth-Token=***#top"),
])
def test_a_urls_password_and_secret_parameters_are_masked(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert mask_url(masked) == masked and is_masked(masked) and not is_masked(url)


@pytest.mark.parametrize("url", ["/data/runs.duckdb", "duckdb:////data/runs.duckdb", "~/runs.duckdb",
                                 "postgresql+psycopg://envs@db:5432/envscaler?sslmode=require&keywords=1",
                                 "http://127.0.0.1:8000/v1"])
def test_a_url_without_a_secret_is_left_as_it_is(url: str) -> None:
    assert mask_url(url) == url and not is_masked(url)


def test_public_config_holds_no_secret() -> None:
    settings = load_settings(environ={}, overrides={"store": {"url": PG}, "llm": {
        "base_url": "https://user:t0ken@llm.example/v1", "api_key": "sk-key"}})
    text = json.dumps(public_config(settings))
    assert "s3cretPW" not in text and "t0ken" not in text and "sk-key" not in text
    assert "postgresql+psycopg://envs:***@127.0.0.1:54304/envscaler" in text


def test_the_process_that_masked_a_url_gets_the_real_one_back() -> None:
    """What the CLI does: it runs the flow in-process with `public_config(settings)` as parameters."""
    settings = load_settings(environ={}, overrides={"store": {"url": PG}})
    assert load_settings(environ={}, overrides=public_config(settings)).store.url == PG


def _flow_settings(config: dict, **environ: str) -> subprocess.CompletedProcess[str]:
    """A worker: a new process building the flow's settings from its `config` parameter."""
    code = ("import json, sys\nfrom envscaler_core.config import ConfigError, load_settings\n"
            "try:\n    print(load_settings(overrides=json.loads(sys.argv[1])).store.url)\n"
            "except ConfigError as exc:\n    print(exc)\n    sys.exit(2)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    return subprocess.run([sys.executable, "-c", code, json.dumps(config)], capture_output=True, text=True,
                          env={**env, **environ}, cwd=ROOT, timeout=120)


def test_a_worker_takes_the_real_url_from_its_environment() -> None:
    config = {"store": {"url": mask_url(PG)}}
    out = _flow_settings(config, ENVSCALER_DB_URL=PG)
    assert out.returncode == 0 and out.stdout.strip() == PG, out.stdout + out.stderr


def test_a_masked_url_with_no_way_to_unmask_it_fails_in_one_line() -> None:
    for environ in ({}, {"ENVSCALER_DB_URL": "postgresql+psycopg://envs:other@elsewhere/envscaler"}):
        out = _flow_settings({"store": {"url": mask_url(PG)}}, **environ)
        assert out.returncode == 2, out.stdout + out.stderr
        lines = out.stdout.strip().splitlines()
        assert len(lines) == 1 and "store.url: postgresql+psycopg://envs:***@127.0.0.1:54304/envscaler" in lines[0]
        assert "ENVSCALER_DB_URL" in lines[0] and "other" not in lines[0]


def test_an_endpoint_with_a_masked_secret_is_refused_too() -> None:
    with pytest.raises(ConfigError, match=r"llm.base_url: https://u:\*\*\*@llm.example/v1 has its secret masked"):
        load_settings(environ={}, overrides={"llm": {"base_url": "https://u:***@llm.example/v1"}})
