import pytest


@pytest.fixture
def runtime(sandbox_pool):
    """The real sandbox pool (the sandbox component's session fixture)."""
    return sandbox_pool


@pytest.fixture
def gateway(request: pytest.FixtureRequest):
    """The real gateway over HTTP to the real mock LLM server."""
    from tests.scenarios.helpers import mock_gateway

    return mock_gateway(request)
