"""Shared fixtures live in plugins under tests/fixtures, one file per component, so that each
component's owner edits only its own file."""

pytest_plugins = [
    "tests.fixtures.llm",
    "tests.fixtures.sandbox",
    "tests.fixtures.store",
    "tests.fixtures.prefect",
]
