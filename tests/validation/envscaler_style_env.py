"""The specs' library env (tests/scenarios/helpers.py: same class name, tools, state, scenario and
checks) rewritten the way EnvScaler's generator writes classes: TypedDict records, an `__init__` that
only declares empty containers and stores `init_config`, long docstrings, a private helper. It works
only if the runtime sets every top-level key of the config after construction, as EnvScaler's does.

Also: the mock library's domains in the same style (their `__init__` stripped of the self-loading),
so Stage 3 can ask the mock for their test state."""

from __future__ import annotations

import re
from typing import Any

from envscaler_core.models.env import AcceptedEnv
from envscaler_core.synth import extract_tools
from tests.scenarios.helpers import library_env

ENVSCALER_LIBRARY_CODE = '''from typing import Dict, List, TypedDict


class BookInfo(TypedDict):
    book_id: str
    title: str
    status: str


class LoanInfo(TypedDict):
    book_id: str
    member: str


class Library:
    def __init__(self, init_config: dict):
        """
        A small lending library.

        Constraints:
            - Only books whose status is 'available' can be lent.
        """
        # Books: {book_id: BookInfo}
        self.books: Dict[str, BookInfo] = {}
        # Loans: [LoanInfo]
        self.loans: List[LoanInfo] = []
        self.init_config = init_config

    def lend_book(self, book_id: str, member: str) -> dict:
        """
        Lend an available book to a member.

        Args:
            book_id (str): The book's identifier.
            member (str): The member's name.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}

        Constraints:
            - The book must exist and be 'available'.
        """
        book = self.books.get(book_id)
        if book is None:
            return {"success": False, "error": "no such book"}
        if not self._is_available(book):
            return {"success": False, "error": "book not available"}
        book["status"] = "lent"
        self.loans.append({"book_id": book_id, "member": member})
        return {"success": True, "message": "lent"}

    def list_books(self) -> dict:
        """
        List every book.

        Returns:
            dict: {"success": True, "data": List[BookInfo]}
        """
        return {"success": True, "data": list(self.books.values())}

    def get_book(self, book_id: str) -> dict:
        """
        Get one book.

        Args:
            book_id (str): The book's identifier.

        Returns:
            dict: {"success": True, "data": BookInfo} or {"success": False, "error": str}
        """
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}

    def _is_available(self, book: BookInfo) -> bool:
        return book["status"] == "available"
'''


def envscaler_library_env() -> AcceptedEnv:
    """The specs' library env, in EnvScaler's style (same id, tools and kinds)."""
    tools = extract_tools(ENVSCALER_LIBRARY_CODE, "Library")
    return library_env().model_copy(update={"class_code": ENVSCALER_LIBRARY_CODE, "tools": tools})


_SELF_LOAD = re.compile(r"^(\s+self\.\w+(?::[^=]+)?=\s*)config\.get\(\"\w+\",\s*(\{\}|\[\])\)[ \t]*$", re.MULTILINE)


def envscaler_style_domain_code(domain: Any) -> str:
    """A mock-library domain's class with its self-loading removed: empty containers, the config stored."""
    code = domain.class_source
    code, n = _SELF_LOAD.subn(lambda m: m.group(1) + m.group(2), code)
    assert n >= 2, f"{domain.name}: expected self-loading lines to rewrite"
    code = code.replace("        config = init_config or {}\n", "        self.init_config = init_config\n")
    assert "config.get(" not in code and "self.init_config = init_config" in code
    return code
