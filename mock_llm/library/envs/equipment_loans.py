from typing import Any


class EquipmentLoanProgram:
    # Rules:
    # - Only 'available' items can be loaned; a loan marks the item 'on_loan'.
    # - Returning an active loan marks it 'returned' and the item 'available' again.
    # - due_date must not be before start_date (ISO dates compare as strings).

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.items: dict[str, dict[str, Any]] = config.get("items", {})
        self.borrowers: dict[str, dict[str, Any]] = config.get("borrowers", {})
        self.loans: dict[str, dict[str, Any]] = config.get("loans", {})

    def _next_loan_id(self) -> str:
        n = len(self.loans) + 1
        while f"L-{n:03d}" in self.loans:
            n += 1
        return f"L-{n:03d}"

    def list_available_items(self, category: str | None = None, location: str | None = None) -> dict:
        """List items that can be borrowed now, optionally by category and location.

        Args:
            category: Only items of this category, e.g. 'wheelchair'.
            location: Only items stored in this city.

        Returns:
            dict: success flag and the available items.
        """
        found = []
        for item in self.items.values():
            if item["status"] != "available":
                continue
            if category and item["category"].lower() != category.lower():
                continue
            if location and item["location"].lower() != location.lower():
                continue
            found.append(item)
        return {"success": True, "data": found}

    def get_item(self, item_id: str) -> dict:
        """Get one item and its status.

        Args:
            item_id: The item's id.

        Returns:
            dict: success flag and the item, or an error.
        """
        item = self.items.get(item_id)
        if item is None:
            return {"success": False, "error": f"item {item_id} not found"}
        item["views"] = item.get("views", 0) + 1
        return {"success": True, "data": item}

    def list_loans(self, borrower_id: str) -> dict:
        """List a borrower's loans.

        Args:
            borrower_id: The borrower's id.

        Returns:
            dict: success flag and the loans, or an error.
        """
        if borrower_id not in self.borrowers:
            return {"success": False, "error": f"borrower {borrower_id} not found"}
        return {"success": True, "data": [loan for loan in self.loans.values() if loan["borrower_id"] == borrower_id]}

    def loan_item(self, item_id: str, borrower_id: str, start_date: str, due_date: str) -> dict:
        """Loan an available item to a borrower.

        Args:
            item_id: The item's id.
            borrower_id: The borrower's id.
            start_date: ISO date the loan starts.
            due_date: ISO date the item is due back, not before start_date.

        Returns:
            dict: success flag and a message naming the new loan id, or an error.
        """
        item = self.items.get(item_id)
        if item is None:
            return {"success": False, "error": f"item {item_id} not found"}
        if borrower_id not in self.borrowers:
            return {"success": False, "error": f"borrower {borrower_id} not found"}
        if item["status"] != "available":
            return {"success": False, "error": f"item {item_id} is {item['status']}"}
        if due_date < start_date:
            return {"success": False, "error": "due_date is before start_date"}
        loan_id = self._next_loan_id()
        item["status"] = "on_loan"
        self.loans[loan_id] = {"loan_id": loan_id, "item_id": item_id, "borrower_id": borrower_id,
                               "start_date": start_date, "due_date": due_date, "status": "active"}
        return {"success": True, "message": f"loan {loan_id} created"}

    def return_item(self, loan_id: str) -> dict:
        """Return the item of an active loan.

        Args:
            loan_id: The loan's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        loan = self.loans[loan_id]
        if loan["status"] != "active":
            return {"success": False, "error": f"loan {loan_id} is already {loan['status']}"}
        loan["status"] = "returned"
        self.items[loan["item_id"]]["status"] = "available"
        return {"success": True, "message": f"loan {loan_id} returned"}

    def extend_loan(self, loan_id: str, new_due_date: str) -> dict:
        """Move the due date of an active loan later.

        Args:
            loan_id: The loan's id.
            new_due_date: New ISO due date, after the current one.

        Returns:
            dict: success flag and a message, or an error.
        """
        loan = self.loans.get(loan_id)
        if loan is None:
            return {"success": False, "error": f"loan {loan_id} not found"}
        if loan["status"] != "active":
            return {"success": False, "error": f"loan {loan_id} is {loan['status']}"}
        if new_due_date <= loan["due_date"]:
            return {"success": False, "error": "new_due_date must be after the current due date"}
        loan["due_date"] = new_due_date
        return {"success": True, "message": f"loan {loan_id} now due {new_due_date}"}
