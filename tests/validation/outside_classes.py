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

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Defect:
    old: str
    new: str
    expect: str  # a substring of one critical/blocking line


@dataclass(frozen=True)
class Subject:
    name: str
    style: str  # "envscaler" | "user"
    class_name: str
    code: str
    state: dict[str, Any]
    kinds: dict[str, str]
    defects: dict[str, Defect] = field(default_factory=dict)

    def with_defect(self, defect: str) -> str:
        d = self.defects[defect]
        assert self.code.count(d.old) == 1, f"{self.name}/{defect}: the replaced text must occur once"
        return self.code.replace(d.old, d.new)


HOTEL_CODE = '''from typing import Dict, List, TypedDict


class RoomInfo(TypedDict):
    room_id: str
    room_type: str
    nightly_rate: float
    status: str


class GuestInfo(TypedDict):
    guest_id: str
    name: str
    loyalty_points: int


class ReservationInfo(TypedDict):
    reservation_id: str
    guest_id: str
    room_id: str
    check_in: str
    check_out: str
    status: str


class HotelReservationSystem:
    def __init__(self, init_config: dict):
        """
        A hotel front desk: rooms, guests and their reservations.

        Constraints:
            - A room can be reserved only while its status is 'available'.
            - check_out must be after check_in (ISO dates).
            - Only 'confirmed' reservations can be cancelled or checked in.
        """
        # Rooms: {room_id: RoomInfo}
        self.rooms: Dict[str, RoomInfo] = {}
        # Guests: {guest_id: GuestInfo}
        self.guests: Dict[str, GuestInfo] = {}
        # Reservations: {reservation_id: ReservationInfo}
        self.reservations: Dict[str, ReservationInfo] = {}
        self.init_config = init_config

    def cancel_reservation(self, reservation_id: str) -> dict:
        """
        Cancel a confirmed reservation and free its room.

        Args:
            reservation_id (str): The reservation to cancel.

        Returns:
            dict: {"success": True, "message": str} on success,
                  {"success": False, "error": str} otherwise.

        Constraints:
            - Only reservations with status 'confirmed' can be cancelled.
        """
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return {"success": False, "error": f"Reservation {reservation_id} does not exist"}
        if reservation["status"] != "confirmed":
            return {"success": False, "error": f"Reservation is {reservation['status']}, not confirmed"}
        reservation["status"] = "cancelled"
        self._set_room_status(reservation["room_id"], "available")
        return {"success": True, "message": f"Reservation {reservation_id} cancelled"}

    def get_room_details(self, room_id: str) -> dict:
        """
        Retrieve the details of one room.

        Args:
            room_id (str): Unique identifier of the room.

        Returns:
            dict: {"success": True, "data": RoomInfo} or {"success": False, "error": str}
        """
        if room_id not in self.rooms:
            return {"success": False, "error": f"Room {room_id} not found"}
        return {"success": True, "data": self.rooms[room_id]}

    def create_reservation(self, reservation_id: str, guest_id: str, room_id: str, check_in: str,
                           check_out: str) -> dict:
        """
        Reserve an available room for a registered guest.

        Args:
            reservation_id (str): Identifier for the new reservation; must be unused.
            guest_id (str): The guest making the reservation.
            room_id (str): The room to reserve.
            check_in (str): Arrival date, ISO format.
            check_out (str): Departure date, ISO format, after check_in.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}

        Constraints:
            - The room must be 'available'.
            - The guest must exist.
        """
        if reservation_id in self.reservations:
            return {"success": False, "error": "Reservation id already in use"}
        if guest_id not in self.guests:
            return {"success": False, "error": f"Guest {guest_id} not found"}
        room = self.rooms.get(room_id)
        if room is None:
            return {"success": False, "error": f"Room {room_id} not found"}
        if not self._room_is_free(room):
            return {"success": False, "error": f"Room {room_id} is {room['status']}"}
        if check_out <= check_in:
            return {"success": False, "error": "check_out must be after check_in"}
        self.reservations[reservation_id] = {
            "reservation_id": reservation_id, "guest_id": guest_id, "room_id": room_id,
            "check_in": check_in, "check_out": check_out, "status": "confirmed",
        }
        self._set_room_status(room_id, "reserved")
        return {"success": True, "message": f"Reservation {reservation_id} created"}

    def list_guest_reservations(self, guest_id: str) -> dict:
        """
        List all reservations made by a guest.

        Args:
            guest_id (str): The guest's identifier.

        Returns:
            dict: {"success": True, "data": List[ReservationInfo]} or {"success": False, "error": str}
        """
        if guest_id not in self.guests:
            return {"success": False, "error": f"Guest {guest_id} not found"}
        found = [r for r in self.reservations.values() if r["guest_id"] == guest_id]
        return {"success": True, "data": found}

    def check_in_guest(self, reservation_id: str) -> dict:
        """
        Check the guest of a confirmed reservation into the room.

        Args:
            reservation_id (str): The reservation being checked in.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return {"success": False, "error": "Reservation not found"}
        if reservation["status"] != "confirmed":
            return {"success": False, "error": "Only confirmed reservations can be checked in"}
        reservation["status"] = "checked_in"
        self._set_room_status(reservation["room_id"], "occupied")
        self.guests[reservation["guest_id"]]["loyalty_points"] += 10
        return {"success": True, "message": "Guest checked in"}

    def _room_is_free(self, room: RoomInfo) -> bool:
        return room["status"] == "available"

    def _set_room_status(self, room_id: str, status: str) -> None:
        if room_id in self.rooms:
            self.rooms[room_id]["status"] = status
'''

HOTEL_STATE = {
    "rooms": {
        "R101": {"room_id": "R101", "room_type": "double", "nightly_rate": 129.0, "status": "available"},
        "R102": {"room_id": "R102", "room_type": "suite", "nightly_rate": 310.0, "status": "reserved"},
        "R201": {"room_id": "R201", "room_type": "single", "nightly_rate": 89.0, "status": "maintenance"},
    },
    "guests": {
        "G-17": {"guest_id": "G-17", "name": "Lena Park", "loyalty_points": 120},
        "G-22": {"guest_id": "G-22", "name": "Omar Haddad", "loyalty_points": 0},
    },
    "reservations": {
        "RES-1001": {"reservation_id": "RES-1001", "guest_id": "G-22", "room_id": "R102", "check_in": "2025-05-02",
                     "check_out": "2025-05-05", "status": "confirmed"},
        "RES-0998": {"reservation_id": "RES-0998", "guest_id": "G-17", "room_id": "R101", "check_in": "2025-03-01",
                     "check_out": "2025-03-03", "status": "completed"},
    },
}

HOTEL = Subject(
    name="hotel", style="envscaler", class_name="HotelReservationSystem", code=HOTEL_CODE, state=HOTEL_STATE,
    kinds={"cancel_reservation": "state_change", "get_room_details": "query", "create_reservation": "state_change",
           "list_guest_reservations": "query", "check_in_guest": "state_change"},
    defects={
        "mutates_on_failure": Defect(
            '''        if not self._room_is_free(room):
            return {"success": False, "error": f"Room {room_id} is {room['status']}"}''',
            '''        self.guests[guest_id]["loyalty_points"] += 5
        if not self._room_is_free(room):
            return {"success": False, "error": f"Room {room_id} is {room['status']}"}''',
            "create_reservation reported failure but changed state"),
        "query_mutates": Defect(
            '''        return {"success": True, "data": self.rooms[room_id]}''',
            '''        self.rooms[room_id]["last_viewed"] = "today"
        return {"success": True, "data": self.rooms[room_id]}''',
            "query tool get_room_details changed state"),
        "stores_set": Defect(
            '''        self.guests[reservation["guest_id"]]["loyalty_points"] += 10''',
            '''        self.guests[reservation["guest_id"]]["loyalty_points"] += 10
        self.guests[reservation["guest_id"]]["stays"] = {reservation_id}''',
            "unserializable in check_in_guest"),
        "raises_on_missing": Defect(
            '''        reservation = self.reservations.get(reservation_id)
        if reservation is None:
            return {"success": False, "error": f"Reservation {reservation_id} does not exist"}''',
            '''        reservation = self.reservations[reservation_id]''',
            "exception in cancel_reservation: KeyError"),
        "non_dict_return": Defect(
            '''        return {"success": True, "data": found}''',
            '''        return found''',
            "list_guest_reservations returned list, not a dict"),
        "hangs": Defect(
            '''        if room_id not in self.rooms:
            return {"success": False, "error": f"Room {room_id} not found"}''',
            '''        while room_id not in self.rooms or room_id in self.rooms:
            pass''',
            "timeout in get_room_details"),
    },
)


WAREHOUSE_CODE = '''from typing import Dict, List, TypedDict


class ProductInfo(TypedDict):
    product_id: str
    name: str
    stock_quantity: int
    reorder_level: int


class OrderLine(TypedDict):
    product_id: str
    quantity: int


class OrderInfo(TypedDict):
    order_id: str
    customer: str
    lines: List[OrderLine]
    status: str


class WarehouseInventorySystem:
    def __init__(self, init_config: dict):
        """
        Stock levels and outgoing orders of one warehouse.

        Constraints:
            - Stock cannot drop below 0.
            - Only 'pending' orders can be fulfilled; fulfilling takes every line from stock.
        """
        self.products: Dict[str, ProductInfo] = {}
        self.orders: Dict[str, OrderInfo] = {}
        self.init_config = init_config

    def list_low_stock_products(self) -> dict:
        """
        List products whose stock is at or below their reorder level.

        Returns:
            dict: {"success": True, "data": List[ProductInfo]}
        """
        low = [p for p in self.products.values() if p["stock_quantity"] <= p["reorder_level"]]
        return {"success": True, "data": low}

    def fulfill_order(self, order_id: str) -> dict:
        """
        Ship a pending order, taking every line's quantity from stock.

        Args:
            order_id (str): The order to fulfil.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}

        Constraints:
            - The order must be 'pending'.
            - Every product must have enough stock for its line; otherwise nothing is taken.
        """
        order = self.orders.get(order_id)
        if order is None:
            return {"success": False, "error": f"Order {order_id} not found"}
        if order["status"] != "pending":
            return {"success": False, "error": f"Order {order_id} is {order['status']}"}
        for line in order["lines"]:
            product = self.products.get(line["product_id"])
            if product is None or product["stock_quantity"] < line["quantity"]:
                return {"success": False, "error": f"Not enough stock for {line['product_id']}"}
        for line in order["lines"]:
            self._take(line["product_id"], line["quantity"])
        order["status"] = "shipped"
        return {"success": True, "message": f"Order {order_id} shipped"}

    def get_product(self, product_id: str) -> dict:
        """
        Get one product with its current stock.

        Args:
            product_id (str): The product's identifier.

        Returns:
            dict: {"success": True, "data": ProductInfo} or {"success": False, "error": str}
        """
        product = self.products.get(product_id)
        if product is None:
            return {"success": False, "error": f"Product {product_id} not found"}
        return {"success": True, "data": product}

    def restock_product(self, product_id: str, quantity: int) -> dict:
        """
        Add received units to a product's stock.

        Args:
            product_id (str): The product's identifier.
            quantity (int): Units received; must be positive.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if product_id not in self.products:
            return {"success": False, "error": f"Product {product_id} not found"}
        if quantity <= 0:
            return {"success": False, "error": "quantity must be positive"}
        self.products[product_id]["stock_quantity"] += quantity
        return {"success": True, "message": f"{quantity} units added to {product_id}"}

    def _take(self, product_id: str, quantity: int) -> None:
        self.products[product_id]["stock_quantity"] -= quantity
'''

WAREHOUSE_STATE = {
    "products": {
        "SKU-001": {"product_id": "SKU-001", "name": "Trail shoe", "stock_quantity": 14, "reorder_level": 5},
        "SKU-002": {"product_id": "SKU-002", "name": "Rain jacket", "stock_quantity": 1, "reorder_level": 3},
    },
    "orders": {
        "ORD-77": {"order_id": "ORD-77", "customer": "Ines Duarte", "status": "pending",
                   "lines": [{"product_id": "SKU-001", "quantity": 2}]},
        "ORD-78": {"order_id": "ORD-78", "customer": "Kofi Mensah", "status": "pending",
                   "lines": [{"product_id": "SKU-001", "quantity": 1}, {"product_id": "SKU-002", "quantity": 4}]},
        "ORD-70": {"order_id": "ORD-70", "customer": "Ines Duarte", "status": "shipped",
                   "lines": [{"product_id": "SKU-001", "quantity": 1}]},
    },
}

WAREHOUSE = Subject(
    name="warehouse", style="envscaler", class_name="WarehouseInventorySystem", code=WAREHOUSE_CODE,
    state=WAREHOUSE_STATE,
    kinds={"list_low_stock_products": "query", "fulfill_order": "state_change", "get_product": "query",
           "restock_product": "state_change"},
    defects={
        "mutates_on_failure": Defect(
            '''        for line in order["lines"]:
            product = self.products.get(line["product_id"])
            if product is None or product["stock_quantity"] < line["quantity"]:
                return {"success": False, "error": f"Not enough stock for {line['product_id']}"}
        for line in order["lines"]:
            self._take(line["product_id"], line["quantity"])''',
            '''        for line in order["lines"]:
            product = self.products.get(line["product_id"])
            if product is None or product["stock_quantity"] < line["quantity"]:
                return {"success": False, "error": f"Not enough stock for {line['product_id']}"}
            self._take(line["product_id"], line["quantity"])''',
            "fulfill_order reported failure but changed state"),
        "query_mutates": Defect(
            '''        low = [p for p in self.products.values() if p["stock_quantity"] <= p["reorder_level"]]''',
            '''        low = [p for p in self.products.values() if p["stock_quantity"] <= p["reorder_level"]]
        for p in low:
            p["flagged"] = True''',
            "query tool list_low_stock_products changed state"),
    },
)


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
