import pytest

from tests.scenarios.helpers import borrow


@pytest.fixture
def runtime(request: pytest.FixtureRequest):
    """The real sandbox pool (H1's session fixture)."""
    return borrow(request, "sandbox_pool", "sandbox")
