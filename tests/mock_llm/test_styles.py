"""Spec: the env classes the realistic mock writes in other styles (EnvScaler's empty containers with
a stored init_config, dataclass record types, typing spellings, another method order) assemble through
Stage 2's own code, pass the static checks with the same tool schemas, load their state in the real
sandbox, and behave exactly like the library class on the reference plan."""

from __future__ import annotations

import pytest

from envscaler_core.synth import assemble_module, extract_tools, parse_method, static_problems
from envscaler_core.synth.pipeline import check_skeleton
from mock_llm import library
from mock_llm.library import code as libcode
from mock_llm.library import styles
from mock_llm.realism import CODE_STYLES

DOMAINS = library.domains()
COMBOS = [frozenset({s}) for s in CODE_STYLES] + [frozenset(CODE_STYLES)]
CASES = [(d, c) for d in DOMAINS for c in COMBOS]


def styled_module(domain: library.Domain, chosen: frozenset[str]) -> str:
    skeleton = check_skeleton(styles.restyle_skeleton(libcode.skeleton(domain), domain, chosen), domain.class_name)
    ops = styles.restyle_operations(libcode.operations(domain), chosen)
    pieces = [parse_method(styles.restyle_method(libcode.method_source(domain, o["name"]), chosen), o["name"]) for o in ops]
    return assemble_module(skeleton, domain.class_name, pieces)


def _tools(code: str, name: str) -> list[str]:
    return sorted(t.model_dump_json() for t in extract_tools(code, name))


@pytest.mark.parametrize(("domain", "chosen"), CASES, ids=[f"{d.name}-{'+'.join(sorted(c))}" for d, c in CASES])
def test_a_styled_class_is_statically_clean_with_the_same_tools(domain, chosen) -> None:
    module = styled_module(domain, chosen)
    assert static_problems(module, domain.class_name) == []
    assert _tools(module, domain.class_name) == _tools(domain.class_source, domain.class_name)


def test_the_envscaler_style_declares_empty_containers_and_stores_init_config() -> None:
    domain = library.by_name("equipment_loans")
    module = styled_module(domain, frozenset({"envscaler_class"}))
    assert "def __init__(self, init_config: dict):" in module and "self.init_config = init_config" in module
    assert "self.items: Dict[str, ItemInfo] = {}" in module and "class ItemInfo(TypedDict):" in module
    assert "config.get(" not in module


def _play(pool, code: str, domain: library.Domain) -> tuple[dict, list]:
    sc = domain.scenarios[0]
    tools = [t.model_dump() for t in extract_tools(code, domain.class_name)]
    ep = pool.open_episode(code, domain.class_name, sc.initial_state, tools=tools)
    try:
        loaded = {k: v for k, v in ep.state.items() if k != "init_config"}
        results = [ep.call(c["tool"], c["args"]).result for c in sc.reference_solution]
        final = {k: v for k, v in ep.state.items() if k != "init_config"}
    finally:
        ep.close()
    assert loaded == sc.initial_state, "the initial state did not load"
    return final, results


@pytest.mark.parametrize("domain", DOMAINS, ids=[d.name for d in DOMAINS])
def test_every_style_at_once_behaves_like_the_library_class_in_the_sandbox(domain, sandbox_pool) -> None:
    expected = _play(sandbox_pool, domain.class_source, domain)
    assert _play(sandbox_pool, styled_module(domain, frozenset(CODE_STYLES)), domain) == expected


def test_methods_reordered_puts_state_changes_first() -> None:
    ops = styles.restyle_operations(libcode.operations(DOMAINS[0]), frozenset({"methods_reordered"}))
    kinds = [o["kind"] for o in ops]
    assert kinds == sorted(kinds, key=lambda k: k != "state_change") and kinds[0] == "state_change"


def test_a_class_keeps_its_styles_across_requests_and_classes_differ() -> None:
    from mock_llm.realism import Plan, code_styles_for

    one, other = Plan(frozenset(), None, 1), Plan(frozenset({"think"}), None, 2)
    chosen = {d.class_name: code_styles_for(one, d.class_name) for d in DOMAINS}
    assert chosen == {d.class_name: code_styles_for(other, d.class_name) for d in DOMAINS}
    assert {"envscaler_class" in c for c in chosen.values()} == {True, False}
