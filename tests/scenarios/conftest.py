import pytest

from tests.scenarios.helpers import borrow


@pytest.fixture
def runtime(request: pytest.FixtureRequest):
    """The real sandbox pool (H1's session fixture)."""
    return borrow(request, "sandbox_pool", "sandbox")


@pytest.fixture
def gateway(request: pytest.FixtureRequest):
    """The real gateway over HTTP to the real mock LLM server."""
    from tests.scenarios.helpers import mock_gateway

    return mock_gateway(request)
