import pytest


@pytest.fixture
def runtime(sandbox_pool):
    """The real sandbox pool: every candidate in these specs executes in a jailed subprocess."""
    return sandbox_pool
