"""Spec: prices a user adds in a config file join the default ones, so a cost budget keeps seeing the
default models' calls; a cost budget with a stage model that has no price is refused before anything
runs (its calls would cost 0 and never reach the cap); a run that called an unpriced model names it on
its summary's cost line instead of printing a bare $0."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cli.helpers import SLICE, assert_no_noise, assert_one_line_error, clean_env, envscaler

pytestmark = [pytest.mark.slow, pytest.mark.prefect]
MY_PRICE = '[llm.prices."my-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'
SMALL = "[mine]\nmax_tasks = 6\nselect_n = 1\n"


@pytest.fixture(scope="module")
def user(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("prices")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL=prefect_api, ENVSCALER_LLM__CACHE="false")
    return {"env": env, "tmp": tmp}


def test_a_price_of_ones_own_keeps_the_defaults_and_the_cost_budget_stops_the_run(user: dict[str, Any]) -> None:
    config = user["tmp"] / "price.toml"
    config.write_text(SMALL + "[budget]\nmax_cost_usd = 0.000001\n" + MY_PRICE)
    out = envscaler("run", "-s", str(SLICE), "-c", str(config), "--run-id", "priced", "--quiet", env=user["env"])
    assert out.returncode == 3, (out.stdout[-2000:], out.stderr[-3000:])
    assert "run priced: stopped_budget" in out.stdout
    assert "no price configured" not in out.stderr


def test_a_cost_budget_with_an_unpriced_stage_model_is_refused_before_the_run(user: dict[str, Any]) -> None:
    config = user["tmp"] / "unpriced.toml"
    config.write_text('[budget]\nmax_cost_usd = 0.01\n[llm.models]\nagent = "their-model"\n')
    out = envscaler("run", "-s", str(SLICE), "-c", str(config), "--run-id", "refused", env=user["env"])
    assert_one_line_error(out, "budget.max_cost_usd", "llm.models.agent='their-model'",
                          '[llm.prices."their-model"]')
    status = envscaler("status", "refused", env=user["env"])
    assert status.returncode != 0 and "refused" in status.stderr  # no run row was written


def test_the_summary_names_a_model_it_counted_at_cost_zero(user: dict[str, Any]) -> None:
    config = user["tmp"] / "free.toml"
    config.write_text(SMALL + '[llm.models]\nmine = "their-model"\n')
    out = envscaler("run", "-s", str(SLICE), "-c", str(config), "--run-id", "free", "--stages", "mine",
                    env=user["env"])
    assert out.returncode in (0, 4), (out.stdout[-2000:], out.stderr[-3000:])
    cost = next(line for line in out.stdout.splitlines() if line.strip().startswith("LLM calls"))
    assert "(without their-model: no price in llm.prices)" in cost, cost
    assert_no_noise(out.stderr)
