import re
from typing import Any

_TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FREQUENCIES = ("daily", "twice_daily", "weekly")


class MedicationReminderService:
    # Rules:
    # - A reminder belongs to one patient and one of that patient's ACTIVE medications.
    # - Times are 24h 'HH:MM'; frequency is daily, twice_daily or weekly.
    # - Only active reminders can be paused, only paused ones resumed.
    # - Doses are logged against active reminders, one entry per reminder and date.

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.patients: dict[str, dict[str, Any]] = config.get("patients", {})
        self.medications: dict[str, dict[str, Any]] = config.get("medications", {})
        self.reminders: dict[str, dict[str, Any]] = config.get("reminders", {})
        self.dose_log: list[dict[str, Any]] = config.get("dose_log", [])

    def _next_reminder_id(self) -> str:
        n = len(self.reminders) + 1
        while f"R-{n:03d}" in self.reminders:
            n += 1
        return f"R-{n:03d}"

    def _valid_time(self, value: Any) -> bool:
        return isinstance(value, str) and _TIME.match(value) is not None

    def get_patient(self, patient_id: str) -> dict:
        """Get one patient's profile.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the patient, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        return {"success": True, "data": self.patients[patient_id]}

    def list_medications(self, patient_id: str) -> dict:
        """List the medications prescribed to a patient.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the medications, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        return {"success": True, "data": [m for m in self.medications.values() if m["patient_id"] == patient_id]}

    def list_reminders(self, patient_id: str) -> dict:
        """List a patient's reminders, active and paused.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the reminders, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        return {"success": True, "data": [r for r in self.reminders.values() if r["patient_id"] == patient_id]}

    def create_reminder(self, patient_id: str, medication_id: str, time: str, frequency: str = "daily") -> dict:
        """Create a dose reminder for one of the patient's active medications.

        Args:
            patient_id: The patient's id.
            medication_id: The medication's id; it must belong to the patient and be active.
            time: Time of day, 24h 'HH:MM'.
            frequency: 'daily', 'twice_daily' or 'weekly'.

        Returns:
            dict: success flag and a message naming the new reminder id, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        medication = self.medications.get(medication_id)
        if medication is None or medication["patient_id"] != patient_id:
            return {"success": False, "error": f"medication {medication_id} is not prescribed to {patient_id}"}
        if not medication["active"]:
            return {"success": False, "error": f"medication {medication_id} is no longer active"}
        if not self._valid_time(time):
            return {"success": False, "error": f"time {time!r} is not 'HH:MM'"}
        if frequency not in FREQUENCIES:
            return {"success": False, "error": f"frequency must be one of {', '.join(FREQUENCIES)}"}
        reminder_id = self._next_reminder_id()
        self.reminders[reminder_id] = {
            "reminder_id": reminder_id, "patient_id": patient_id, "medication_id": medication_id,
            "time": time, "frequency": frequency, "status": "active",
        }
        return {"success": True, "message": f"reminder {reminder_id} created"}

    def update_reminder_time(self, reminder_id: str, time: str) -> dict:
        """Change the time of day of a reminder.

        Args:
            reminder_id: The reminder's id.
            time: New time of day, 24h 'HH:MM'.

        Returns:
            dict: success flag and a message, or an error.
        """
        reminder = self.reminders.get(reminder_id)
        if reminder is None:
            return {"success": False, "error": f"reminder {reminder_id} not found"}
        if not self._valid_time(time):
            return {"success": False, "error": f"time {time!r} is not 'HH:MM'"}
        reminder["time"] = time
        return {"success": True, "message": f"reminder {reminder_id} now rings at {time}"}

    def pause_reminder(self, reminder_id: str) -> dict:
        """Pause an active reminder.

        Args:
            reminder_id: The reminder's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        reminder = self.reminders.get(reminder_id)
        if reminder is None:
            return {"success": False, "error": f"reminder {reminder_id} not found"}
        if reminder["status"] != "active":
            return {"success": False, "error": f"reminder {reminder_id} is {reminder['status']}"}
        reminder["status"] = "paused"
        return {"success": True, "message": f"reminder {reminder_id} paused"}

    def resume_reminder(self, reminder_id: str) -> dict:
        """Resume a paused reminder.

        Args:
            reminder_id: The reminder's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        reminder = self.reminders.get(reminder_id)
        if reminder is None:
            return {"success": False, "error": f"reminder {reminder_id} not found"}
        if reminder["status"] != "paused":
            return {"success": False, "error": f"reminder {reminder_id} is {reminder['status']}"}
        reminder["status"] = "active"
        return {"success": True, "message": f"reminder {reminder_id} resumed"}

    def log_dose(self, reminder_id: str, date: str, taken: bool = True) -> dict:
        """Record whether the dose of an active reminder was taken on a date.

        Args:
            reminder_id: The reminder's id.
            date: ISO date 'YYYY-MM-DD'.
            taken: True if the dose was taken, False if it was missed.

        Returns:
            dict: success flag and a message, or an error.
        """
        reminder = self.reminders.get(reminder_id)
        if reminder is None:
            return {"success": False, "error": f"reminder {reminder_id} not found"}
        if reminder["status"] != "active":
            return {"success": False, "error": f"reminder {reminder_id} is {reminder['status']}"}
        if not isinstance(date, str) or _DATE.match(date) is None:
            return {"success": False, "error": f"date {date!r} is not 'YYYY-MM-DD'"}
        if any(e["reminder_id"] == reminder_id and e["date"] == date for e in self.dose_log):
            return {"success": False, "error": f"a dose is already logged for {reminder_id} on {date}"}
        self.dose_log.append({"reminder_id": reminder_id, "date": date, "taken": bool(taken)})
        return {"success": True, "message": f"dose for {reminder_id} on {date} logged"}
