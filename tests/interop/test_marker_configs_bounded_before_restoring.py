"""Spec: a config whose EnvScaler markers the host restores (import's loads, `validate --state`) meets the
wire's integer width and the state values cap before any set or dict is built from it (red team 7, F2: a
set marker of 40,000 multiples of 2^61-1, all one hash, cost the host 19.8 s of CPU restoring it)."""

from __future__ import annotations

import pytest

from envscaler_core.interop.sandboxed import canonical, with_markers_restored
from envscaler_core.models import EnvCandidate
from sandbox.limits import MAX_STATE_VALUES

P = (1 << 61) - 1
CODE = "class L:\n    def __init__(self, init_config):\n        self.tags = init_config['tags']\n"


def test_a_set_marker_of_wide_colliding_integers_is_refused_naming_where() -> None:
    config = {"tags": {"__type__": "set", "items": [k * P for k in range(1, 40_001)]}}
    with pytest.raises(ValueError, match=r"^init_config/tags/items/4: integer of 64 bits is outside the 64-bit range"):
        canonical(config)


def test_a_config_over_the_values_cap_is_refused_before_restoring() -> None:
    config = {"tags": {"__type__": "set", "items": list(range(MAX_STATE_VALUES + 1))}}
    with pytest.raises(ValueError, match=f"init_config: more than {MAX_STATE_VALUES:,} values"):
        canonical(config)


def test_validate_state_refuses_the_same_through_its_entry_point() -> None:
    candidate = EnvCandidate(topic_fp="t", class_name="L", class_code=CODE, tools=[])
    with pytest.raises(ValueError, match="init_config/tags/items/0: integer of 67 bits"):
        with_markers_restored(candidate, {"tags": {"__type__": "set", "items": [10**20]}}, always=True)


def test_the_widest_64_bit_integers_still_restore() -> None:
    members = [(1 << 63) - 1, -(1 << 63), 4 * P, -4 * P]
    assert sorted(canonical({"tags": {"__type__": "set", "items": members}})["tags"]["items"]) == sorted(members)
