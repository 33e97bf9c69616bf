from typing import Any


class SurgeryWaitlistRegistry:
    # Rules:
    # - A hospital's waitlist holds at most `capacity` entries with status 'waiting'.
    # - A patient can wait for the same procedure at one hospital only once.
    # - priority is 1 (most urgent) to 5.
    # - Scheduling a waiting entry sets its surgery_date and status 'scheduled'.

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.hospitals: dict[str, dict[str, Any]] = config.get("hospitals", {})
        self.patients: dict[str, dict[str, Any]] = config.get("patients", {})
        self.entries: dict[str, dict[str, Any]] = config.get("entries", {})

    def _next_entry_id(self) -> str:
        n = len(self.entries) + 1
        while f"W-{n:03d}" in self.entries:
            n += 1
        return f"W-{n:03d}"

    def _waiting(self, hospital_id: str) -> list:
        return [e for e in self.entries.values() if e["hospital_id"] == hospital_id and e["status"] == "waiting"]

    def _reject(self, message: str) -> Any:
        return "error: " + message

    def list_hospitals(self, city: str | None = None) -> dict:
        """List hospitals with waitlists, optionally in one city.

        Args:
            city: Only hospitals in this city.

        Returns:
            dict: success flag and the hospitals with their free waitlist places.
        """
        found = []
        for hospital in self.hospitals.values():
            if city and hospital["city"].lower() != city.lower():
                continue
            free = hospital["capacity"] - len(self._waiting(hospital["hospital_id"]))
            found.append({**hospital, "free_places": free})
        return {"success": True, "data": found}

    def get_entry(self, entry_id: str) -> dict:
        """Get one waitlist entry.

        Args:
            entry_id: The entry's id.

        Returns:
            dict: success flag and the entry, or an error.
        """
        if entry_id not in self.entries:
            return {"success": False, "error": f"entry {entry_id} not found"}
        return {"success": True, "data": self.entries[entry_id]}

    def list_waitlist(self, hospital_id: str) -> dict:
        """List the waiting entries of a hospital, most urgent first.

        Args:
            hospital_id: The hospital's id.

        Returns:
            dict: success flag and the entries, or an error.
        """
        if hospital_id not in self.hospitals:
            return {"success": False, "error": f"hospital {hospital_id} not found"}
        waiting = sorted(self._waiting(hospital_id), key=lambda e: (e["priority"], e["entry_id"]))
        return {"success": True, "data": waiting}

    def register_patient(self, patient_id: str, hospital_id: str, procedure: str, priority: int = 3) -> dict:
        """Put a patient on a hospital's waitlist for a procedure.

        Args:
            patient_id: The patient's id.
            hospital_id: The hospital's id.
            procedure: The surgery, e.g. 'knee replacement'.
            priority: 1 (most urgent) to 5.

        Returns:
            dict: success flag and a message naming the new entry id, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        hospital = self.hospitals.get(hospital_id)
        if hospital is None:
            return {"success": False, "error": f"hospital {hospital_id} not found"}
        for entry in self._waiting(hospital_id):
            if entry["patient_id"] == patient_id and entry["procedure"] == procedure:
                return {"success": False, "error": f"{patient_id} already waits for {procedure} here"}
        entry_id = self._next_entry_id()
        self.entries[entry_id] = {"entry_id": entry_id, "patient_id": patient_id, "hospital_id": hospital_id,
                                  "procedure": procedure, "priority": priority, "status": "waiting",
                                  "surgery_date": ""}
        if len(self._waiting(hospital_id)) > hospital["capacity"]:
            return {"success": False, "error": f"the waitlist of {hospital_id} is full"}
        if not isinstance(priority, int) or not 1 <= priority <= 5:
            return {"success": False, "error": "priority must be from 1 to 5"}
        return {"success": True, "message": f"entry {entry_id} added"}

    def update_priority(self, entry_id: str, priority: int) -> dict:
        """Change the priority of a waiting entry.

        Args:
            entry_id: The entry's id.
            priority: 1 (most urgent) to 5.

        Returns:
            dict: success flag and a message, or an error.
        """
        entry = self.entries.get(entry_id)
        if entry is None:
            return self._reject(f"entry {entry_id} not found")
        if entry["status"] != "waiting":
            return self._reject(f"entry {entry_id} is {entry['status']}")
        if not isinstance(priority, int) or not 1 <= priority <= 5:
            return self._reject("priority must be from 1 to 5")
        entry["priority"] = priority
        return {"success": True, "message": f"entry {entry_id} now has priority {priority}"}

    def schedule_surgery(self, entry_id: str, surgery_date: str) -> dict:
        """Give a waiting entry its surgery date.

        Args:
            entry_id: The entry's id.
            surgery_date: ISO date of the surgery.

        Returns:
            dict: success flag and a message, or an error.
        """
        entry = self.entries.get(entry_id)
        if entry is None:
            return {"success": False, "error": f"entry {entry_id} not found"}
        if entry["status"] != "waiting":
            return {"success": False, "error": f"entry {entry_id} is {entry['status']}"}
        if not surgery_date:
            return {"success": False, "error": "surgery_date must not be empty"}
        entry["status"] = "scheduled"
        entry["surgery_date"] = surgery_date
        return {"success": True, "message": f"entry {entry_id} scheduled for {surgery_date}"}

    def remove_entry(self, entry_id: str) -> dict:
        """Take a waiting entry off the list.

        Args:
            entry_id: The entry's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        entry = self.entries.get(entry_id)
        if entry is None:
            return {"success": False, "error": f"entry {entry_id} not found"}
        if entry["status"] != "waiting":
            return {"success": False, "error": f"entry {entry_id} is {entry['status']}"}
        entry["status"] = "removed"
        return {"success": True, "message": f"entry {entry_id} removed"}
