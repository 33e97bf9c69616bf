"""Spec: docs/configuration.md is the settings models, generated; it fails here when a setting is added,
renamed or redescribed without regenerating it (`python -m envscaler_core.config_docs --write`), and
every setting says what it does. Unknown names get the closest valid one."""

from __future__ import annotations

import pytest

from envscaler_core.config import ConfigError, Settings, load_settings
from envscaler_core.config_docs import DOC, missing_descriptions, render


def test_the_configuration_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is stale: run `python -m envscaler_core.config_docs --write`")


def test_every_setting_has_a_description() -> None:
    assert missing_descriptions() == []


def test_the_reference_names_every_field_with_its_environment_variable() -> None:
    page = DOC.read_text(encoding="utf-8")
    for section, field in Settings.model_fields.items():
        model = field.annotation
        for name in model.model_fields:  # type: ignore[union-attr]
            key = (field.alias or section)
            if name == "models":
                continue
            assert f"| `{name}` |" in page, f"{key}.{name} missing"
            if name != "prices":
                assert f"ENVSCALER_{key.upper()}__{name.upper()}" in page


@pytest.mark.parametrize(("given", "expected"), [
    ({"scen": {"per_envs": 3}}, "scen.per_envs: unknown setting; did you mean scen.per_env?"),
    ({"valdate": {}}, "valdate: unknown setting; did you mean validate?"),
    ({"llm": {"models": {"agnet": "x"}}}, "llm.models.agnet: unknown setting; did you mean llm.models.agent?"),
    ({"flow": {"zzz": 1}}, "flow.zzz: unknown setting; flow has: batch_size, batches_in_flight"),
])
def test_an_unknown_setting_names_the_closest_valid_one(given: dict, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={}, overrides=given)
    assert expected in str(caught.value)


def test_an_unknown_setting_from_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(environ={"ENVSCALER_SCEN__PER_ENVS": "3"})
    assert "did you mean scen.per_env?" in str(caught.value) and "ENVSCALER_SCEN__PER_ENVS='3'" in str(caught.value)
