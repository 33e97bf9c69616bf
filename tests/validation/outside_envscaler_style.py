"""Outside classes in EnvScaler's generator style (../shared/reference/envscaler_skel_builder.md §2.2-2.7):
TypedDict records, an `__init__(self, init_config: dict)` that declares empty containers and stores the
config (the runtime setattr's the state in), long Google docstrings, private `_helpers`."""

from __future__ import annotations

from tests.validation.outside_subject import Defect, Subject

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
