"""An env class written the way EnvScaler's own generator writes them (its skel_builder output, as documented in
../shared/reference/envscaler_skel_builder.md and envscaler_scen_generator_and_interaction.md §1.0): TypedDicts
for the records, `__init__(self, init_config: dict)` that only declares empty containers and stores the config,
and a runtime that is expected to `setattr` every top-level key of the config afterwards."""

LIBRARY_CODE = '''
from typing import Dict, List, TypedDict


class BookInfo(TypedDict):
    book_id: str
    title: str
    copies_available: int


class MemberInfo(TypedDict):
    member_id: str
    name: str
    borrowed: List[str]


class LibraryDesk:
    def __init__(self, init_config: dict):
        """
        A small lending library.

        Constraints:
            - A book can be lent only while copies_available > 0.
        """
        # Books: {book_id: BookInfo}
        self.books: Dict[str, BookInfo] = {}
        # Members: {member_id: MemberInfo}
        self.members: Dict[str, MemberInfo] = {}
        self.init_config = init_config

    def get_book(self, book_id: str) -> dict:
        """
        Look up one book.

        Args:
            book_id (str): The book's id.

        Returns:
            dict: {"success": True, "data": BookInfo} or {"success": False, "error": str}
        """
        if book_id not in self.books:
            return {"success": False, "error": f"no book with id {book_id}"}
        return {"success": True, "data": self.books[book_id]}

    def lend_book(self, book_id: str, member_id: str) -> dict:
        """
        Lend a copy of a book to a member.

        Args:
            book_id (str): The book's id.
            member_id (str): The member's id.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if book_id not in self.books:
            return {"success": False, "error": f"no book with id {book_id}"}
        if member_id not in self.members:
            return {"success": False, "error": f"no member with id {member_id}"}
        if self.books[book_id]["copies_available"] <= 0:
            return {"success": False, "error": "no copies left"}
        self.books[book_id]["copies_available"] -= 1
        self.members[member_id]["borrowed"].append(book_id)
        return {"success": True, "message": f"{book_id} lent to {member_id}"}
'''

LIBRARY_STATE = {
    "books": {
        "B1": {"book_id": "B1", "title": "Dune", "copies_available": 2},
        "B2": {"book_id": "B2", "title": "Emma", "copies_available": 0},
    },
    "members": {"M1": {"member_id": "M1", "name": "Ana Ruiz", "borrowed": []}},
}
