"""Spec: an endpoint that is no http(s) URL (OPENAI_BASE_URL=127.0.0.1:8000/v1, localhost:8000, or the same in
a config file) is named, with where it came from and that it needs http:// or https://, in one line and
exit 2 by every verb that reaches an endpoint, before any work (it used to be reported as the unreachable
endpoint `://None:80`). A resume, which only warns about an unreachable endpoint, refuses it too."""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler_core.config import load_settings, public_config
from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import SLICE, assert_one_line_error, clean_env, envscaler

CLASS = "class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def add(self, k: int) -> dict:\n" \
        "        \"\"\"Add k.\"\"\"\n        self.n += k\n        return {'success': True, 'n': self.n}\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    return clean_env(tmp_path / "home", OPENAI_API_KEY="sk-test", ENVSCALER_DB_URL=str(tmp_path / "runs.duckdb"), **extra)


@pytest.mark.parametrize("base", ["127.0.0.1:18104/v1", "localhost:18104"])
def test_run_names_an_endpoint_without_a_scheme(base: str, tmp_path: Path) -> None:
    out = envscaler("run", "-s", str(SLICE), env=_env(tmp_path, OPENAI_BASE_URL=base))
    assert_one_line_error(out, f"llm.base_url: Value error, {base!r} is not a URL the factory can call", "OPENAI_BASE_URL",
                          "needs http:// or https://",
                          f"e.g. http://{base}")
    assert not (tmp_path / "runs.duckdb").exists()


def test_an_endpoint_without_a_scheme_in_a_config_file_is_named(tmp_path: Path) -> None:
    config = tmp_path / "factory.toml"
    config.write_text('[llm]\nbase_url = "localhost:18104/v1"\n')
    out = envscaler("run", "-s", str(SLICE), "-c", str(config), env=_env(tmp_path))
    assert_one_line_error(out, "llm.base_url: Value error, 'localhost:18104/v1' is not a URL", "needs http:// or https://")


def test_resume_refuses_it_too(tmp_path: Path) -> None:
    db = tmp_path / "runs.duckdb"
    settings = load_settings(environ={}, overrides={"store": {"url": str(db)}})
    store = Store.from_url(str(db))
    try:
        store.save_run(Run(run_id="r1", status="interrupted", config=public_config(settings), sources=[str(SLICE)]))
        before = store.get_run("r1")
    finally:
        store.close()
    out = envscaler("resume", "r1", env=_env(tmp_path, OPENAI_BASE_URL="127.0.0.1:18104/v1"))
    assert_one_line_error(out, "llm.base_url: Value error, '127.0.0.1:18104/v1' is not a URL", "OPENAI_BASE_URL",
                          "needs http:// or https://")
    store = Store.from_url(str(db))
    try:
        assert store.get_run("r1") == before
    finally:
        store.close()


@pytest.mark.parametrize("args", [["eval", "bfcl-mt", "--agent", "llm", "--limit", "1"], ["validate", "--code", "{code}"]])
def test_other_verbs_that_call_the_endpoint_refuse_it(args: list[str], tmp_path: Path) -> None:
    code = tmp_path / "counter.py"
    code.write_text(CLASS)
    out = envscaler(*[a.format(code=code) for a in args], env=_env(tmp_path, OPENAI_BASE_URL="localhost:18104"))
    assert_one_line_error(out, "llm.base_url: Value error, 'localhost:18104' is not a URL", "OPENAI_BASE_URL",
                          "needs http:// or https://")
