from typing import Any


class ClinicScheduler:
    # Rules:
    # - An appointment can only be booked into a slot listed in the doctor's available_slots.
    # - Booking takes the slot out of available_slots; cancelling or rescheduling gives it back.
    # - Only appointments with status 'booked' can be rescheduled or cancelled.
    # - A patient cannot hold two booked appointments at the same slot.
    # - mode is 'in_person' or 'virtual'.

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.patients: dict[str, dict[str, Any]] = config.get("patients", {})
        self.doctors: dict[str, dict[str, Any]] = config.get("doctors", {})
        self.appointments: dict[str, dict[str, Any]] = config.get("appointments", {})

    def _next_appointment_id(self) -> str:
        n = len(self.appointments) + 1
        while f"A-{n:03d}" in self.appointments:
            n += 1
        return f"A-{n:03d}"

    def _patient_busy(self, patient_id: str, slot: str) -> bool:
        return any(
            a["patient_id"] == patient_id and a["slot"] == slot and a["status"] == "booked"
            for a in self.appointments.values()
        )

    def list_doctors(self, specialty: str | None = None, location: str | None = None) -> dict:
        """List doctors, optionally filtered by specialty and location (case-insensitive).

        Args:
            specialty: Only doctors with this specialty, e.g. 'cardiology'.
            location: Only doctors practising in this city.

        Returns:
            dict: success flag and the matching doctors.
        """
        found = []
        for doctor in self.doctors.values():
            if specialty and doctor["specialty"].lower() != specialty.lower():
                continue
            if location and doctor["location"].lower() != location.lower():
                continue
            found.append(doctor)
        return {"success": True, "data": found}

    def get_doctor(self, doctor_id: str) -> dict:
        """Get one doctor, including the open slots.

        Args:
            doctor_id: The doctor's id.

        Returns:
            dict: success flag and the doctor, or an error.
        """
        if doctor_id not in self.doctors:
            return {"success": False, "error": f"doctor {doctor_id} not found"}
        return {"success": True, "data": self.doctors[doctor_id]}

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

    def list_patient_appointments(self, patient_id: str) -> dict:
        """List every appointment of a patient, whatever its status.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the appointments, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        found = [a for a in self.appointments.values() if a["patient_id"] == patient_id]
        return {"success": True, "data": found}

    def book_appointment(
        self, patient_id: str, doctor_id: str, slot: str, reason: str = "", mode: str = "in_person"
    ) -> dict:
        """Book a patient into one of a doctor's open slots.

        Args:
            patient_id: The patient's id.
            doctor_id: The doctor's id.
            slot: An open slot of the doctor, ISO 'YYYY-MM-DDTHH:MM'.
            reason: Why the patient is coming (free text).
            mode: 'in_person' or 'virtual'.

        Returns:
            dict: success flag and a message naming the new appointment id, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        doctor = self.doctors.get(doctor_id)
        if doctor is None:
            return {"success": False, "error": f"doctor {doctor_id} not found"}
        if mode not in ("in_person", "virtual"):
            return {"success": False, "error": "mode must be 'in_person' or 'virtual'"}
        if slot not in doctor["available_slots"]:
            return {"success": False, "error": f"slot {slot} is not open for doctor {doctor_id}"}
        if self._patient_busy(patient_id, slot):
            return {"success": False, "error": f"patient {patient_id} already has an appointment at {slot}"}
        appointment_id = self._next_appointment_id()
        doctor["available_slots"].remove(slot)
        self.appointments[appointment_id] = {
            "appointment_id": appointment_id, "patient_id": patient_id, "doctor_id": doctor_id,
            "slot": slot, "reason": reason, "mode": mode, "status": "booked",
        }
        return {"success": True, "message": f"appointment {appointment_id} booked for {slot}"}

    def reschedule_appointment(self, appointment_id: str, new_slot: str) -> dict:
        """Move a booked appointment to another open slot of the same doctor.

        Args:
            appointment_id: The appointment's id.
            new_slot: An open slot of the same doctor, ISO 'YYYY-MM-DDTHH:MM'.

        Returns:
            dict: success flag and a message, or an error.
        """
        appointment = self.appointments.get(appointment_id)
        if appointment is None:
            return {"success": False, "error": f"appointment {appointment_id} not found"}
        if appointment["status"] != "booked":
            return {"success": False, "error": f"appointment {appointment_id} is {appointment['status']}"}
        doctor = self.doctors.get(appointment["doctor_id"])
        if doctor is None or new_slot not in doctor["available_slots"]:
            return {"success": False, "error": f"slot {new_slot} is not open for this doctor"}
        if self._patient_busy(appointment["patient_id"], new_slot):
            return {"success": False, "error": f"the patient already has an appointment at {new_slot}"}
        doctor["available_slots"].remove(new_slot)
        doctor["available_slots"].append(appointment["slot"])
        doctor["available_slots"].sort()
        appointment["slot"] = new_slot
        return {"success": True, "message": f"appointment {appointment_id} moved to {new_slot}"}

    def cancel_appointment(self, appointment_id: str) -> dict:
        """Cancel a booked appointment and give its slot back to the doctor.

        Args:
            appointment_id: The appointment's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        appointment = self.appointments.get(appointment_id)
        if appointment is None:
            return {"success": False, "error": f"appointment {appointment_id} not found"}
        if appointment["status"] != "booked":
            return {"success": False, "error": f"appointment {appointment_id} is already {appointment['status']}"}
        doctor = self.doctors.get(appointment["doctor_id"])
        if doctor is not None and appointment["slot"] not in doctor["available_slots"]:
            doctor["available_slots"].append(appointment["slot"])
            doctor["available_slots"].sort()
        appointment["status"] = "cancelled"
        return {"success": True, "message": f"appointment {appointment_id} cancelled"}
