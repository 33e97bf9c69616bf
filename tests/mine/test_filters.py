"""The reference step0 filters, each with a visible reason; strict word matching is opt-in."""

from __future__ import annotations

from envscaler_core.mine.filters import filter_reason, multimodal_reason, non_english_reason, special_content_reason


def test_non_english_rejects_any_character_outside_the_ascii_allow_list() -> None:
    assert non_english_reason("Book a table for 2 at 7pm!") is None
    assert non_english_reason("It is 20\u00b0 outside") == "non-english: character '\u00b0'"
    assert non_english_reason("\u201cquoted\u201d") is not None


def test_multimodal_reference_matches_substrings_case_insensitively() -> None:
    assert multimodal_reason("Upload an IMAGE") == "multimodal: keyword 'image'"
    assert multimodal_reason("Watch the eclipse schedule") == "multimodal: keyword 'clip'"


def test_multimodal_strict_words_no_longer_rejects_eclipse() -> None:
    assert multimodal_reason("Watch the eclipse schedule", strict_words=True) is None
    assert multimodal_reason("Resize my photos", strict_words=True) == "multimodal: keyword 'photo'"


def test_special_content_is_case_sensitive_substrings_by_default() -> None:
    assert special_content_reason("Mail bob@corp.org") == "special-content: '@'"
    assert special_content_reason("Visit example.com") == "special-content: '.com'"
    assert special_content_reason("Read the METHODS section") == "special-content: 'ETH'"
    assert special_content_reason("pay in usd") is None


def test_special_content_strict_words_only_rejects_whole_tokens() -> None:
    assert special_content_reason("Read the METHODS section", strict_words=True) is None
    assert special_content_reason("Send 5 ETH to Alice", strict_words=True) == "special-content: 'ETH'"


def test_filter_reason_reports_the_first_rejecting_filter_in_reference_order() -> None:
    assert filter_reason("Show the caf\u00e9 photo") is not None
    assert filter_reason("Show the caf\u00e9 photo").startswith("non-english")
    assert filter_reason("Schedule a lab test appointment.") is None
