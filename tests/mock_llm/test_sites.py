"""Spec (issue 14, scale benchmark): a text tagged "(site N)" is about its library domain at site N: the
same env under its own class name and texts, so a scaled source grows the funnel with distinct topics,
candidates and envs. Untagged texts are unchanged."""

from __future__ import annotations

from mock_llm import library, lookup
from envscaler_core.synth import extract_tools, static_problems

CLINIC = library.by_name("clinic_appointments")


def test_a_tagged_summary_routes_to_the_domain_at_that_site() -> None:
    site = lookup.by_text(f"{CLINIC.summary} (site 17)")
    assert site is not None and site.site == 17
    assert site.class_name == f"{CLINIC.class_name}Site17" and site.name == f"{CLINIC.name}-site17"
    assert site.summary.endswith("(site 17)") and site.introduction.endswith("(site 17)")


def test_an_untagged_summary_routes_to_the_domain_itself() -> None:
    assert lookup.by_text(CLINIC.summary) is CLINIC


def test_a_site_copy_is_a_working_class_under_its_new_name() -> None:
    site = library.at_site(CLINIC, 3)
    code = site.class_source
    assert f"class {site.class_name}" in code and f"class {CLINIC.class_name}:" not in code
    assert not static_problems(code, site.class_name)
    assert [t.function.name for t in extract_tools(code, site.class_name)] == \
        [t.function.name for t in extract_tools(CLINIC.class_source, CLINIC.class_name)]


def test_the_class_name_of_a_site_copy_finds_it_again() -> None:
    found = lookup.by_class(f"{CLINIC.class_name}Site42")
    assert found is not None and found.site == 42 and found.source_class == CLINIC.class_name
    assert lookup.by_class("NoSuchClassSite3") is None
