"""Classes written against only the README and `envscaler validate --help`, to make the validator
wrongly accept or wrongly reject (an adversarial pass over the probes and the tool labels). Each was
either handled from the start or fixed; they stay as specs.

(name, accepted?, substring of the rejection reason, code, state)
"""

from __future__ import annotations

from typing import Any

CASES: list[tuple[str, bool, str, str, dict[str, Any]]] = []


def case(name: str, accept: bool, expect: str, code: str, state: dict[str, Any]) -> None:
    CASES.append((name, accept, expect, code, state))


case("a1_pop_queue", True, "", '''
class Queue:
    def __init__(self, config=None):
        self.tickets = (config or {}).get("tickets", [])
    def get_next_ticket(self) -> dict:
        """Get the next ticket (removes it from the queue)."""
        if not self.tickets:
            return {"success": False, "error": "queue empty"}
        return {"success": True, "data": self.tickets.pop(0)}
    def peek(self) -> dict:
        """Look at the next ticket without removing it."""
        if not self.tickets:
            return {"success": False, "error": "queue empty"}
        return {"success": True, "data": self.tickets[0]}
''', {"tickets": [{"id": "q1", "subject": "Login fails"}, {"id": "q2", "subject": "Slow page"}]})

case("a2_update_profile_dict", True, "", '''
class Profiles:
    def __init__(self, init_config: dict):
        self.users = {}
    def update_profile(self, user_id: str, changes: dict) -> dict:
        """Update some fields of a user's profile."""
        user = self.users.get(user_id)
        if user is None:
            return {"success": False, "error": "no such user"}
        if not changes:
            return {"success": False, "error": "nothing to change"}
        unknown = [k for k in changes if k not in user]
        if unknown:
            return {"success": False, "error": f"unknown fields {unknown}"}
        user.update(changes)
        return {"success": True, "message": "updated"}
''', {"users": {"u1": {"name": "Ana", "city": "Lisbon"}, "u2": {"name": "Bo", "city": "Oslo"}}})

case("a3_list_index", True, "", '''
class Orders:
    def __init__(self, init_config: dict):
        self.orders = {}
    def remove_line(self, order_id: str, line_no: int) -> dict:
        """Remove one line from an open order."""
        order = self.orders.get(order_id)
        if order is None:
            return {"success": False, "error": "no such order"}
        if not 0 <= line_no < len(order["lines"]):
            return {"success": False, "error": "no such line"}
        order["lines"].pop(line_no)
        return {"success": True, "message": "removed"}
''', {"orders": {"o1": {"lines": [{"sku": "A", "qty": 1}]}}})

case("a4_mode_literals", True, "", '''
class Thermostats:
    def __init__(self, init_config: dict):
        self.devices = {}
    def set_mode(self, device_id: str, mode: str) -> dict:
        """Switch a device to another mode."""
        if device_id not in self.devices:
            return {"success": False, "error": "no device"}
        if mode not in ("eco", "boost", "off"):
            return {"success": False, "error": "bad mode"}
        self.devices[device_id]["setting"] = mode
        return {"success": True, "message": "ok"}
''', {"devices": {"d1": {"setting": "off", "room": "hall"}}})

case("a5_unique_email", True, "", '''
class Accounts:
    def __init__(self, init_config: dict):
        self.users = {}
    def register(self, username: str, email: str) -> dict:
        """Register a new user; usernames and emails are unique."""
        if username in self.users:
            return {"success": False, "error": "username taken"}
        if any(u["email"] == email for u in self.users.values()):
            return {"success": False, "error": "email taken"}
        if "@" not in email:
            return {"success": False, "error": "bad email"}
        self.users[username] = {"email": email}
        return {"success": True, "message": "registered"}
''', {"users": {"ana": {"email": "ana@example.com"}, "bo": {"email": "bo@example.com"}}})

case("a6_single_db_attr", True, "", '''
class Shop:
    def __init__(self, init_config: dict):
        self.db = {"customers": {}, "orders": {}}
    def get_order(self, order_id: str) -> dict:
        """Get an order."""
        order = self.db["orders"].get(order_id)
        if order is None:
            return {"success": False, "error": "no order"}
        return {"success": True, "data": order}
    def cancel_order(self, order_id: str) -> dict:
        """Cancel an open order."""
        order = self.db["orders"].get(order_id)
        if order is None:
            return {"success": False, "error": "no order"}
        if order["status"] != "open":
            return {"success": False, "error": "not open"}
        order["status"] = "cancelled"
        return {"success": True, "message": "cancelled"}
''', {"db": {"customers": {"c1": {"name": "Ana"}}, "orders": {"o7": {"customer": "c1", "status": "open"}, "o8": {"customer": "c1", "status": "shipped"}}}})

case("a7_query_caches_publicly", False, "query tool find_user changed state", '''
class Directory:
    def __init__(self, init_config: dict):
        self.users = {}
        self.last_search = None
    def find_user(self, email: str) -> dict:
        """Find a user by email."""
        self.last_search = email
        for uid, u in self.users.items():
            if u["email"] == email:
                return {"success": True, "data": uid}
        return {"success": False, "error": "not found"}
''', {"users": {"u1": {"email": "a@x.org"}}, "last_search": None})

case("a8_attempts_before_guard", False, "ship reported failure but changed state", '''
class Shipping:
    def __init__(self, init_config: dict):
        self.orders = {}
    def ship(self, order_id: str) -> dict:
        """Ship a paid order."""
        order = self.orders.get(order_id)
        if order is None:
            return {"success": False, "error": "no order"}
        order["attempts"] = order.get("attempts", 0) + 1
        if order["status"] != "paid":
            return {"success": False, "error": "not paid"}
        order["status"] = "shipped"
        return {"success": True, "message": "shipped"}
''', {"orders": {"o1": {"status": "paid"}, "o2": {"status": "pending"}}})

case("a9_noun_query_writes", False, "query tool balance_of changed state", '''
class Ledger:
    def __init__(self, init_config: dict):
        self.accounts = {}
    def balance_of(self, acct: str) -> dict:
        """Balance of an account."""
        a = self.accounts.get(acct)
        if a is None:
            return {"success": False, "error": "no account"}
        a["checked"] = a.get("checked", 0) + 1
        return {"success": True, "balance": a["balance"]}
''', {"accounts": {"x1": {"balance": 10}}})

case("a10_helper_touch_before_guard", False, "close reported failure but changed state", '''
class Tasks:
    def __init__(self, init_config: dict):
        self.tasks = {}
    def _touch(self, task):
        task["touched"] = True
    def close(self, task_id: str) -> dict:
        """Close a finished task."""
        task = self.tasks.get(task_id)
        if task is None:
            return {"success": False, "error": "no task"}
        self._touch(task)
        if not task["finished"]:
            return {"success": False, "error": "not finished"}
        task["closed"] = True
        return {"success": True, "message": "closed"}
''', {"tasks": {"t1": {"finished": True, "closed": False}, "t2": {"finished": False, "closed": False}}})

case("a11_kwargs_init", True, "", '''
class Notes:
    def __init__(self, **kwargs):
        self.notes = kwargs.get("notes", {})
    def add_note(self, note_id: str, text: str) -> dict:
        """Add a note."""
        if note_id in self.notes:
            return {"success": False, "error": "exists"}
        self.notes[note_id] = {"text": text}
        return {"success": True, "message": "added"}
    def read_note(self, note_id: str) -> dict:
        """Read a note."""
        if note_id not in self.notes:
            return {"success": False, "error": "missing"}
        return {"success": True, "data": self.notes[note_id]}
''', {"notes": {"n1": {"text": "hello"}}})

case("a13_set_on_false_flag", False, "unserializable in log", '''
class Checks:
    def __init__(self, init_config: dict):
        self.items = {}
    def log(self, item_id: str, ok: bool) -> dict:
        """Log a check result for an item."""
        if item_id not in self.items:
            return {"success": False, "error": "no item"}
        if ok:
            self.items[item_id]["passed"] = self.items[item_id].get("passed", 0) + 1
        else:
            self.items[item_id]["failures"] = {item_id}
        return {"success": True, "message": "logged"}
''', {"items": {"i1": {"passed": 0}}})

case("a14_hang_on_negative", False, "timeout in withdraw", '''
class Wallet:
    def __init__(self, init_config: dict):
        self.wallets = {}
    def withdraw(self, wallet_id: str, amount: int) -> dict:
        """Withdraw from a wallet."""
        w = self.wallets.get(wallet_id)
        if w is None:
            return {"success": False, "error": "no wallet"}
        while amount < 0:
            pass
        if w["balance"] < amount:
            return {"success": False, "error": "insufficient"}
        w["balance"] -= amount
        return {"success": True, "message": "ok"}
''', {"wallets": {"w1": {"balance": 50}}})

case("a15_statics_and_classmethods", True, "", '''
class Conv:
    def __init__(self, init_config: dict):
        self.rates = {}
    @staticmethod
    def round_amount(value: float) -> dict:
        """Round an amount to cents."""
        return {"success": True, "data": round(value, 2)}
    def convert(self, currency: str, amount: float) -> dict:
        """Convert an amount to a currency."""
        if currency not in self.rates:
            return {"success": False, "error": "unknown currency"}
        return {"success": True, "data": amount * self.rates[currency]}
''', {"rates": {"EUR": 0.9, "GBP": 0.8}})

case("b1_validate_title_after_write", False, "rename reported failure but changed state", '''
class Todo:
    def __init__(self, init_config: dict):
        self.items = {}
    def rename(self, item_id: str, title: str) -> dict:
        """Rename an item."""
        if item_id not in self.items:
            return {"success": False, "error": "no item"}
        self.items[item_id]["title"] = title
        if not title.strip():
            return {"success": False, "error": "title required"}
        return {"success": True, "message": "renamed"}
''', {"items": {"t1": {"title": "Milk"}}})

case("b5_int_ids_str_param", True, "", '''
class Desk:
    def __init__(self, init_config: dict):
        self.tickets = []
    def close_ticket(self, ticket_id: str) -> dict:
        """Close a ticket."""
        for t in self.tickets:
            if str(t["id"]) == ticket_id:
                t["status"] = "closed"
                return {"success": True, "message": "closed"}
        return {"success": False, "error": "no ticket"}
''', {"tickets": [{"id": 12, "status": "open"}, {"id": 15, "status": "open"}]})

case("b13_member_borrowed_list", True, "", '''
class Lib:
    def __init__(self, init_config: dict):
        self.members = {}
        self.books = {}
    def return_book(self, member_id: str, book_id: str) -> dict:
        """Return a borrowed book."""
        member = self.members.get(member_id)
        if member is None:
            return {"success": False, "error": "no member"}
        if book_id not in member["borrowed"]:
            return {"success": False, "error": "not borrowed by this member"}
        member["borrowed"].remove(book_id)
        self.books[book_id]["copies"] += 1
        return {"success": True, "message": "returned"}
''', {"members": {"m1": {"borrowed": []}, "m2": {"borrowed": ["b9"]}}, "books": {"b1": {"copies": 1}, "b9": {"copies": 0}}})

case("b16_get_or_create_doc", True, "", '''
class Sessions:
    def __init__(self, init_config: dict):
        self.sessions = {}
    def get_session(self, user: str) -> dict:
        """Get a user's session, creating it on first use."""
        if user not in self.sessions:
            self.sessions[user] = {"hits": 0}
        return {"success": True, "data": self.sessions[user]}
''', {"sessions": {"ana": {"hits": 3}}})

case("c1_bulk_calls_public", True, "", '''from typing import Dict, List, TypedDict
import copy
import datetime


class OrderInfo(TypedDict):
    order_id: str
    status: str
    updated_at: str


class OrderDesk:
    def __init__(self, init_config: dict):
        self.orders: Dict[str, OrderInfo] = {}
        self.init_config = init_config

    def cancel_order(self, order_id: str) -> dict:
        """
        Cancel a pending order.

        Args:
            order_id (str): The order.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        order = self.orders.get(order_id)
        if order is None:
            return {"success": False, "error": "Order not found"}
        if order["status"] != "pending":
            return {"success": False, "error": "Only pending orders can be cancelled"}
        order["status"] = "cancelled"
        order["updated_at"] = datetime.datetime.now().isoformat()
        return {"success": True, "message": f"Order {order_id} cancelled"}

    def bulk_cancel_orders(self, order_ids: List[str]) -> dict:
        """
        Cancel several pending orders; stops at the first that cannot be cancelled.

        Args:
            order_ids (List[str]): The orders.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        for oid in order_ids:
            order = self.orders.get(oid)
            if order is None or order["status"] != "pending":
                return {"success": False, "error": f"Cannot cancel {oid}"}
        for oid in order_ids:
            self.cancel_order(oid)
        return {"success": True, "message": f"{len(order_ids)} orders cancelled"}

    def get_order_history(self) -> dict:
        """
        Return a copy of every order.

        Returns:
            dict: {"success": True, "data": List[OrderInfo]}
        """
        return {"success": True, "data": copy.deepcopy(list(self.orders.values()))}

    def reset_environment(self) -> dict:
        """
        Restore the initial configuration.

        Returns:
            dict: {"success": True, "message": str}
        """
        self.orders = copy.deepcopy(self.init_config.get("orders", {}))
        return {"success": True, "message": "reset"}
''', {"orders": {"O-1": {"order_id": "O-1", "status": "pending", "updated_at": "2025-01-01T10:00:00"},
                 "O-2": {"order_id": "O-2", "status": "shipped", "updated_at": "2025-01-02T10:00:00"}}})
