"""Clinic appointment scheduler: doctors with open slots, patients, bookable appointments."""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "patients": {
        "P001": {"patient_id": "P001", "name": "Maria Lopez", "date_of_birth": "1984-02-11", "phone": "555-0101"},
        "P002": {"patient_id": "P002", "name": "James Chen", "date_of_birth": "1990-07-23", "phone": "555-0102"},
        "P003": {"patient_id": "P003", "name": "Aisha Khan", "date_of_birth": "1978-11-05", "phone": "555-0103"},
        "P004": {"patient_id": "P004", "name": "Tom Becker", "date_of_birth": "1965-04-30", "phone": "555-0104"},
    },
    "doctors": {
        "D01": {"doctor_id": "D01", "name": "Dr. Alan Reyes", "specialty": "cardiology", "location": "Los Angeles",
                "available_slots": ["2025-03-10T09:00", "2025-03-10T10:00", "2025-03-11T14:00"]},
        "D02": {"doctor_id": "D02", "name": "Dr. Sofia Marin", "specialty": "dentistry", "location": "San Francisco",
                "available_slots": ["2025-03-12T08:30", "2025-03-12T11:00"]},
        "D03": {"doctor_id": "D03", "name": "Dr. Priya Nair", "specialty": "dermatology", "location": "New York",
                "available_slots": ["2025-03-13T10:30", "2025-03-14T15:00"]},
        "D04": {"doctor_id": "D04", "name": "Dr. John Smith", "specialty": "general practice", "location": "New York",
                "available_slots": ["2025-03-10T16:00", "2025-03-11T09:30"]},
    },
    "appointments": {
        "A-001": {"appointment_id": "A-001", "patient_id": "P002", "doctor_id": "D02", "slot": "2025-03-05T10:00",
                  "reason": "dental cleaning", "mode": "in_person", "status": "booked"},
        "A-002": {"appointment_id": "A-002", "patient_id": "P001", "doctor_id": "D03", "slot": "2025-03-07T11:00",
                  "reason": "skin rash", "mode": "virtual", "status": "booked"},
        "A-003": {"appointment_id": "A-003", "patient_id": "P004", "doctor_id": "D04", "slot": "2025-03-03T09:00",
                  "reason": "blood pressure review", "mode": "in_person", "status": "completed"},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["appointments"]["A-003"].update({"slot": "2025-03-09T13:00", "status": "booked"})
S1["patients"]["P005"] = {"patient_id": "P005", "name": "Lena Ortiz", "date_of_birth": "2001-09-14", "phone": "555-0105"}

S2 = copy.deepcopy(BASE)
S2["doctors"]["D01"]["available_slots"] = ["2025-03-17T09:00", "2025-03-18T13:30"]
S2["appointments"]["A-002"]["status"] = "cancelled"

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Book Maria Lopez (patient P001) an in-person cardiology check-up with Dr. Alan Reyes (D01) in his "
              "2025-03-10T09:00 slot, and cancel her dermatology appointment A-002, which she no longer needs."),
        checklist=[
            "Has a booked appointment for patient P001 with doctor D01 at slot 2025-03-10T09:00",
            "Has appointment A-002 with status 'cancelled'",
            "Has slot 2025-03-10T09:00 removed from doctor D01's available_slots",
        ],
        checks=[
            C.new_entity("appointments", patient_id="P001", doctor_id="D01", slot="2025-03-10T09:00", status="booked"),
            C.field_is("appointments", "A-002", "status", "cancelled"),
            C.list_lacks("doctors", "D01", "available_slots", "2025-03-10T09:00"),
        ],
        reference_solution=[
            {"tool": "get_doctor", "args": {"doctor_id": "D01"}},
            {"tool": "book_appointment", "args": {"patient_id": "P001", "doctor_id": "D01", "slot": "2025-03-10T09:00",
                                                  "reason": "cardiology check-up", "mode": "in_person"}},
            {"tool": "cancel_appointment", "args": {"appointment_id": "A-002"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Tom Becker (patient P004) needs his appointment A-003 with Dr. John Smith moved to 2025-03-11T09:30, "
              "and he also wants a virtual dermatology consultation with Dr. Priya Nair (D03) at 2025-03-14T15:00."),
        checklist=[
            "Has appointment A-003 with slot 2025-03-11T09:30",
            "Has a booked virtual appointment for patient P004 with doctor D03 at slot 2025-03-14T15:00",
            "Has slot 2025-03-09T13:00 back in doctor D04's available_slots",
        ],
        checks=[
            C.field_is("appointments", "A-003", "slot", "2025-03-11T09:30"),
            C.new_entity("appointments", patient_id="P004", doctor_id="D03", slot="2025-03-14T15:00",
                         mode="virtual", status="booked"),
            C.list_has("doctors", "D04", "available_slots", "2025-03-09T13:00"),
        ],
        reference_solution=[
            {"tool": "list_patient_appointments", "args": {"patient_id": "P004"}},
            {"tool": "reschedule_appointment", "args": {"appointment_id": "A-003", "new_slot": "2025-03-11T09:30"}},
            {"tool": "book_appointment", "args": {"patient_id": "P004", "doctor_id": "D03", "slot": "2025-03-14T15:00",
                                                  "reason": "dermatology consultation", "mode": "virtual"}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("James Chen (patient P002) wants to cancel his dental appointment A-001 and see Dr. Sofia Marin (D02) "
              "at 2025-03-12T11:00 instead for a root canal consultation; also book Aisha Khan (P003) a general "
              "check-up with Dr. John Smith (D04) at 2025-03-10T16:00."),
        checklist=[
            "Has appointment A-001 with status 'cancelled'",
            "Has a booked appointment for patient P002 with doctor D02 at slot 2025-03-12T11:00",
            "Has a booked appointment for patient P003 with doctor D04 at slot 2025-03-10T16:00",
        ],
        checks=[
            C.field_is("appointments", "A-001", "status", "cancelled"),
            C.new_entity("appointments", patient_id="P002", doctor_id="D02", slot="2025-03-12T11:00", status="booked"),
            C.new_entity("appointments", patient_id="P003", doctor_id="D04", slot="2025-03-10T16:00", status="booked"),
        ],
        reference_solution=[
            {"tool": "cancel_appointment", "args": {"appointment_id": "A-001"}},
            {"tool": "book_appointment", "args": {"patient_id": "P002", "doctor_id": "D02", "slot": "2025-03-12T11:00",
                                                  "reason": "root canal consultation"}},
            {"tool": "book_appointment", "args": {"patient_id": "P003", "doctor_id": "D04", "slot": "2025-03-10T16:00",
                                                  "reason": "general check-up"}},
        ],
    ),
]

DOMAIN = Domain(
    name="clinic_appointments",
    class_name="ClinicScheduler",
    env_file="clinic_scheduler.py",
    summary="Clinic appointment scheduler",
    summary_variants=("Clinic appointment scheduler", "Clinic appointment scheduling system",
                      "Outpatient clinic appointment scheduler"),
    introduction=(
        "A clinic appointment scheduler keeps patients, doctors with their specialty, location and open "
        "time slots, and appointments linking a patient to a doctor at a slot. Staff look up doctors and "
        "patients, book appointments into open slots, reschedule them to another open slot and cancel "
        "them, which gives the slot back to the doctor."),
    intro_variants=("Appointments may be in person or virtual.",
                    "Both in-person and telehealth visits are supported.",
                    "Each appointment records its reason and mode."),
    rules=[
        "An appointment can only be booked into a slot listed in the doctor's available_slots.",
        "Booking takes the slot out of available_slots; cancelling or rescheduling gives it back.",
        "Only appointments with status 'booked' can be rescheduled or cancelled.",
        "A patient cannot hold two booked appointments at the same slot.",
        "mode is 'in_person' or 'virtual'.",
    ],
    tool_kinds={"list_doctors": "query", "get_doctor": "query", "get_patient": "query",
                "list_patient_appointments": "query", "book_appointment": "state_change",
                "reschedule_appointment": "state_change", "cancel_appointment": "state_change"},
    keywords={"appointment": 3, "reschedule": 3, "consultation": 2, "schedule": 2, "book": 1, "doctor": 1,
              "dentist": 1, "cardiologist": 1, "dermatologist": 1, "check-up": 1, "checkup": 1, "telehealth": 2,
              "lab test": 1, "imaging": 1, "clinic": 1, "physician": 1, "confirm": 1},
    entities=[
        {"name": "Patient", "attributes": ["patient_id", "name", "date_of_birth", "phone"],
         "description": "A person who books appointments."},
        {"name": "Doctor", "attributes": ["doctor_id", "name", "specialty", "location", "available_slots"],
         "description": "A doctor and the slots still open for booking."},
        {"name": "Appointment", "attributes": ["appointment_id", "patient_id", "doctor_id", "slot", "reason", "mode",
                                               "status"],
         "description": "A patient's visit with a doctor at a slot; status booked, cancelled or completed."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=9,
    modelability=9,
    example_values={"slot": "2025-03-10T10:00", "new_slot": "2025-03-11T14:00", "reason": "check-up",
                    "mode": "in_person", "specialty": "cardiology", "location": "Los Angeles"},
)
