"""Env classes written the way others write them, each with its state and planted defects.

Two families:
* EnvScaler's generator style (../shared/reference/envscaler_skel_builder.md §2.2-2.7): TypedDict
  records, `__init__(self, init_config: dict)` that declares empty containers and stores the config
  (the runtime setattr's the state in), long Google docstrings with Args/Returns/Constraints, private
  `_helpers`, operations in no particular order;
* hand-written by a user: self-loading `__init__`, dataclasses as record types (stored as dicts, since
  the state must be JSON), lists of records with an `id` field, nested dicts, ids under other names.

A defect is a source replacement plus the words its rejection must contain (the *right* reason).
"""

from __future__ import annotations

from tests.validation.outside_envscaler_style import HOTEL, WAREHOUSE
from tests.validation.outside_subject import Defect, Subject

__all__ = ["SUBJECTS", "Defect", "Subject"]


BANK_CODE = '''from dataclasses import asdict, dataclass, field


@dataclass
class Account:
    number: str
    owner: str
    balance: float = 0.0
    frozen: bool = False
    history: list = field(default_factory=list)


class Bank:
    """Accounts keyed by account number; records are Account dataclasses stored as plain dicts."""

    def __init__(self, config=None):
        config = config or {}
        self.accounts = {n: asdict(Account(**a)) for n, a in config.get("accounts", {}).items()}

    def _load(self, number: str) -> Account | None:
        raw = self.accounts.get(number)
        return Account(**raw) if raw is not None else None

    def _save(self, account: Account) -> None:
        self.accounts[account.number] = asdict(account)

    def balance(self, account: str) -> dict:
        """Current balance of an account."""
        acc = self._load(account)
        if acc is None:
            return {"success": False, "error": "unknown account"}
        return {"success": True, "data": {"balance": acc.balance}}

    def transfer(self, source: str, target: str, amount: float) -> dict:
        """Move money between two accounts; the source must cover it and neither may be frozen."""
        src, dst = self._load(source), self._load(target)
        if src is None or dst is None:
            return {"success": False, "error": "unknown account"}
        if amount <= 0:
            return {"success": False, "error": "amount must be positive"}
        if src.frozen or dst.frozen:
            return {"success": False, "error": "account frozen"}
        if src.balance < amount:
            return {"success": False, "error": "insufficient funds"}
        src.balance -= amount
        dst.balance += amount
        src.history.append({"to": target, "amount": amount})
        self._save(src)
        self._save(dst)
        return {"success": True, "message": "transferred"}

    def open_account(self, owner: str) -> dict:
        """Open an empty account for an owner; returns the new account number."""
        number = f"AC-{len(self.accounts) + 1:03d}"
        while number in self.accounts:
            number += "0"
        self._save(Account(number=number, owner=owner))
        return {"success": True, "data": {"number": number}}

    def freeze(self, account: str) -> dict:
        """Freeze an account."""
        acc = self._load(account)
        if acc is None:
            return {"success": False, "error": "unknown account"}
        acc.frozen = True
        self._save(acc)
        return {"success": True, "message": "frozen"}
'''

BANK_STATE = {"accounts": {
    "AC-001": {"number": "AC-001", "owner": "Rosa Diaz", "balance": 250.0, "frozen": False, "history": []},
    "AC-002": {"number": "AC-002", "owner": "Tim Wu", "balance": 0.0, "frozen": False, "history": []},
    "AC-003": {"number": "AC-003", "owner": "Ana Silva", "balance": 900.0, "frozen": True, "history": []},
}}

BANK = Subject(
    name="bank", style="user", class_name="Bank", code=BANK_CODE, state=BANK_STATE,
    kinds={"balance": "query", "transfer": "state_change", "open_account": "state_change", "freeze": "state_change"},
    defects={
        "mutates_on_failure": Defect(
            '''        if src.balance < amount:
            return {"success": False, "error": "insufficient funds"}
        src.balance -= amount''',
            '''        src.balance -= amount
        self._save(src)
        if src.balance < 0:
            return {"success": False, "error": "insufficient funds"}''',
            "transfer reported failure but changed state"),
        "query_mutates": Defect(
            '''        return {"success": True, "data": {"balance": acc.balance}}''',
            '''        acc.history.append({"balance_check": True})
        self._save(acc)
        return {"success": True, "data": {"balance": acc.balance}}''',
            "query tool balance changed state"),
        "stores_set": Defect(
            '''        acc.frozen = True
        self._save(acc)''',
            '''        acc.frozen = True
        self._save(acc)
        self.accounts[account]["flags"] = {"frozen"}''',
            "unserializable in freeze"),
    },
)


TICKETS_CODE = '''class TicketDesk:
    def __init__(self, config: dict | None = None):
        config = config or {}
        self.tickets = list(config.get("tickets", []))
        self.agents = list(config.get("agents", []))

    def _find(self, ticket_id):
        for ticket in self.tickets:
            if ticket["id"] == ticket_id:
                return ticket
        return None

    def create_ticket(self, title: str, priority: int = 3) -> dict:
        """Open a new ticket."""
        if not title.strip():
            return {"success": False, "error": "title required"}
        new_id = max((t["id"] for t in self.tickets), default=0) + 1
        self.tickets.append({"id": new_id, "title": title, "priority": priority, "status": "open",
                             "assignee": None})
        return {"success": True, "data": {"id": new_id}}

    def assign(self, ticket: int, agent: str) -> dict:
        """Assign an open ticket to a known agent."""
        t = self._find(ticket)
        if t is None:
            return {"success": False, "error": "no such ticket"}
        if agent not in self.agents:
            return {"success": False, "error": "unknown agent"}
        if t["status"] != "open":
            return {"success": False, "error": "ticket is not open"}
        t["assignee"] = agent
        return {"success": True, "message": "assigned"}

    def close(self, ticket: int) -> dict:
        """Close a ticket that has an assignee."""
        t = self._find(ticket)
        if t is None:
            return {"success": False, "error": "no such ticket"}
        if t["assignee"] is None:
            return {"success": False, "error": "unassigned tickets cannot be closed"}
        t["status"] = "closed"
        return {"success": True, "message": "closed"}

    def search(self, status: str) -> dict:
        """Tickets in a status."""
        return {"success": True, "data": [t for t in self.tickets if t["status"] == status]}
'''

TICKETS_STATE = {
    "tickets": [
        {"id": 7, "title": "VPN drops", "priority": 2, "status": "open", "assignee": None},
        {"id": 9, "title": "New laptop", "priority": 3, "status": "open", "assignee": "sam"},
        {"id": 4, "title": "Printer jam", "priority": 1, "status": "closed", "assignee": "kim"},
    ],
    "agents": ["sam", "kim"],
}

TICKETS = Subject(
    name="tickets", style="user", class_name="TicketDesk", code=TICKETS_CODE, state=TICKETS_STATE,
    kinds={"create_ticket": "state_change", "assign": "state_change", "close": "state_change", "search": "query"},
    defects={
        "raises_on_missing": Defect(
            '''        t = self._find(ticket)
        if t is None:
            return {"success": False, "error": "no such ticket"}
        if t["assignee"] is None:''',
            '''        t = self._find(ticket)
        if t["assignee"] is None:''',
            "exception in close: TypeError"),
        "mutates_on_failure": Defect(
            '''        if t["status"] != "open":
            return {"success": False, "error": "ticket is not open"}
        t["assignee"] = agent''',
            '''        t["assignee"] = agent
        if t["status"] != "open":
            return {"success": False, "error": "ticket is not open"}''',
            "assign reported failure but changed state"),
        "non_dict_return": Defect(
            '''        return {"success": True, "data": [t for t in self.tickets if t["status"] == status]}''',
            '''        return ({"success": True}, [t for t in self.tickets if t["status"] == status])''',
            "search returned list, not a dict"),
    },
)


CAMPUS_CODE = '''class CampusRooms:
    """Buildings hold rooms; rooms are booked by one person at a time."""

    def __init__(self, init_config=None):
        self.buildings = {}
        if init_config:
            self.buildings = init_config.get("buildings", {})

    def list_free_rooms(self, building: str) -> dict:
        """Rooms of a building that nobody has booked."""
        b = self.buildings.get(building)
        if b is None:
            return {"success": False, "error": "no such building"}
        free = [number for number, room in b["rooms"].items() if room["booked_by"] is None]
        return {"success": True, "data": free}

    def book_room(self, building: str, room: str, person: str) -> dict:
        """Book a free room for a person, if it is big enough to be booked at all."""
        b = self.buildings.get(building)
        if b is None or room not in b["rooms"]:
            return {"success": False, "error": "no such room"}
        r = b["rooms"][room]
        if r["booked_by"] is not None:
            return {"success": False, "error": "already booked"}
        if r["capacity"] < 2:
            return {"success": False, "error": "room cannot be booked"}
        r["booked_by"] = person
        return {"success": True, "message": "booked"}

    def release_room(self, building: str, room: str) -> dict:
        """Release a booked room."""
        b = self.buildings.get(building)
        if b is None or room not in b["rooms"]:
            return {"success": False, "error": "no such room"}
        b["rooms"][room]["booked_by"] = None
        return {"success": True, "message": "released"}
'''

CAMPUS_STATE = {"buildings": {
    "north": {"name": "North Hall", "rooms": {"101": {"capacity": 30, "booked_by": None},
                                              "102": {"capacity": 1, "booked_by": None}}},
    "south": {"name": "South Hall", "rooms": {"S1": {"capacity": 12, "booked_by": "Dr. Mori"}}},
}}

CAMPUS = Subject(
    name="campus", style="user", class_name="CampusRooms", code=CAMPUS_CODE, state=CAMPUS_STATE,
    kinds={"list_free_rooms": "query", "book_room": "state_change", "release_room": "state_change"},
    defects={
        "mutates_on_failure": Defect(
            '''        if r["capacity"] < 2:
            return {"success": False, "error": "room cannot be booked"}
        r["booked_by"] = person''',
            '''        r["booked_by"] = person
        if r["capacity"] < 2:
            return {"success": False, "error": "room cannot be booked"}''',
            "book_room reported failure but changed state"),
        "query_mutates": Defect(
            '''        free = [number for number, room in b["rooms"].items() if room["booked_by"] is None]''',
            '''        free = [number for number, room in b["rooms"].items() if room["booked_by"] is None]
        b["last_listed"] = len(free)''',
            "query tool list_free_rooms changed state"),
    },
)

SUBJECTS = [HOTEL, WAREHOUSE, BANK, TICKETS, CAMPUS]
