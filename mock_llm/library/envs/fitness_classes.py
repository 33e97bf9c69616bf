from typing import Any


class FitnessClassBooking:
    # Rules:
    # - Booking a class costs the member one credit; cancelling refunds it.
    # - A class cannot be booked beyond its capacity, nor twice by the same member.
    # - premium_only classes need a 'premium' membership.
    # - Credits are added in amounts from 1 to 50.

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.members: dict[str, dict[str, Any]] = config.get("members", {})
        self.classes: dict[str, dict[str, Any]] = config.get("classes", {})
        self.bookings: dict[str, dict[str, Any]] = config.get("bookings", {})

    def _next_booking_id(self) -> str:
        n = len(self.bookings) + 1
        while f"BK-{n:03d}" in self.bookings:
            n += 1
        return f"BK-{n:03d}"

    def list_classes(self, class_type: str | None = None, location: str | None = None) -> dict:
        """List classes with their free places, optionally by type and location.

        Args:
            class_type: Only classes of this type, e.g. 'yoga'.
            location: Only classes held here (a city, or 'online').

        Returns:
            dict: success flag and the matching classes.
        """
        found = []
        for item in self.classes.values():
            if class_type and item["class_type"].lower() != class_type.lower():
                continue
            if location and item["location"].lower() != location.lower():
                continue
            found.append({**item, "free_places": item["capacity"] - len(item["enrolled"])})
        return {"success": True, "data": found}

    def get_class(self, class_id: str) -> dict:
        """Get one class.

        Args:
            class_id: The class's id.

        Returns:
            dict: success flag and the class, or an error.
        """
        if class_id not in self.classes:
            return {"success": False, "error": f"class {class_id} not found"}
        return {"success": True, "data": self.classes[class_id]}

    def get_member(self, member_id: str) -> dict:
        """Get one member's membership and credits.

        Args:
            member_id: The member's id.

        Returns:
            dict: success flag and the member, or an error.
        """
        if member_id not in self.members:
            return {"success": False, "error": f"member {member_id} not found"}
        return {"success": True, "data": self.members[member_id]}

    def book_class(self, member_id: str, class_id: str) -> dict:
        """Book a member into a class, spending one credit.

        Args:
            member_id: The member's id.
            class_id: The class's id.

        Returns:
            dict: success flag and a message naming the new booking id, or an error.
        """
        member = self.members.get(member_id)
        if member is None:
            return {"success": False, "error": f"member {member_id} not found"}
        item = self.classes.get(class_id)
        if item is None:
            return {"success": False, "error": f"class {class_id} not found"}
        if member_id in item["enrolled"]:
            return {"success": False, "error": f"{member_id} is already booked into {class_id}"}
        if len(item["enrolled"]) >= item["capacity"]:
            return {"success": False, "error": f"class {class_id} is full"}
        if item["premium_only"] and member["membership"] != "premium":
            return {"success": False, "error": f"class {class_id} is for premium members"}
        if member["credits"] < 1:
            return {"success": False, "error": f"{member_id} has no credits left"}
        booking_id = self._next_booking_id()
        member["credits"] -= 1
        item["enrolled"].append(member_id)
        self.bookings[booking_id] = {"booking_id": booking_id, "member_id": member_id, "class_id": class_id,
                                     "status": "booked"}
        return {"success": True, "message": f"booking {booking_id} confirmed"}

    def cancel_booking(self, booking_id: str) -> dict:
        """Cancel a booking, freeing the place and refunding the credit.

        Args:
            booking_id: The booking's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        booking = self.bookings.get(booking_id)
        if booking is None:
            return {"success": False, "error": f"booking {booking_id} not found"}
        if booking["status"] != "booked":
            return {"success": False, "error": f"booking {booking_id} is already {booking['status']}"}
        item = self.classes.get(booking["class_id"])
        member = self.members.get(booking["member_id"])
        if item is not None and booking["member_id"] in item["enrolled"]:
            item["enrolled"].remove(booking["member_id"])
        if member is not None:
            member["credits"] += 1
        booking["status"] = "cancelled"
        return {"success": True, "message": f"booking {booking_id} cancelled"}

    def add_credits(self, member_id: str, amount: int) -> dict:
        """Top up a member's class credits.

        Args:
            member_id: The member's id.
            amount: Credits to add, from 1 to 50.

        Returns:
            dict: success flag and a message, or an error.
        """
        member = self.members.get(member_id)
        if member is None:
            return {"success": False, "error": f"member {member_id} not found"}
        if not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= 50:
            return {"success": False, "error": "amount must be an integer from 1 to 50"}
        member["credits"] += amount
        return {"success": True, "message": f"{member_id} now has {member['credits']} credits"}
