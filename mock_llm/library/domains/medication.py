"""Medication reminder service: patients, prescribed medications, dose reminders and a dose log."""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "patients": {
        "P101": {"patient_id": "P101", "name": "John Smith", "timezone": "America/New_York"},
        "P102": {"patient_id": "P102", "name": "Ana Silva", "timezone": "Europe/Lisbon"},
        "P103": {"patient_id": "P103", "name": "John Doe", "timezone": "America/Chicago"},
    },
    "medications": {
        "M1": {"medication_id": "M1", "patient_id": "P101", "name": "Lisinopril", "dosage": "10 mg",
               "condition": "hypertension", "active": True},
        "M2": {"medication_id": "M2", "patient_id": "P101", "name": "Metformin", "dosage": "500 mg",
               "condition": "type 2 diabetes", "active": True},
        "M3": {"medication_id": "M3", "patient_id": "P102", "name": "Levothyroxine", "dosage": "50 mcg",
               "condition": "hypothyroidism", "active": True},
        "M4": {"medication_id": "M4", "patient_id": "P103", "name": "Atorvastatin", "dosage": "20 mg",
               "condition": "high cholesterol", "active": False},
        "M5": {"medication_id": "M5", "patient_id": "P103", "name": "Sertraline", "dosage": "50 mg",
               "condition": "anxiety", "active": True},
    },
    "reminders": {
        "R-001": {"reminder_id": "R-001", "patient_id": "P102", "medication_id": "M3", "time": "07:00",
                  "frequency": "daily", "status": "active"},
        "R-002": {"reminder_id": "R-002", "patient_id": "P103", "medication_id": "M5", "time": "21:00",
                  "frequency": "daily", "status": "paused"},
    },
    "dose_log": [{"reminder_id": "R-001", "date": "2025-03-01", "taken": True}],
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["reminders"]["R-003"] = {"reminder_id": "R-003", "patient_id": "P101", "medication_id": "M1", "time": "09:00",
                            "frequency": "daily", "status": "active"}

S2 = copy.deepcopy(BASE)
S2["dose_log"].append({"reminder_id": "R-001", "date": "2025-03-02", "taken": True})
S2["medications"]["M4"]["active"] = True

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Set up medication reminders for John Smith (patient P101): his hypertension medication Lisinopril "
              "(M1) every day at 08:00, and his Metformin (M2) twice daily starting at 07:30."),
        checklist=[
            "Has an active daily reminder for patient P101 and medication M1 at 08:00",
            "Has an active twice_daily reminder for patient P101 and medication M2 at 07:30",
        ],
        checks=[
            C.new_entity("reminders", patient_id="P101", medication_id="M1", time="08:00", frequency="daily",
                         status="active"),
            C.new_entity("reminders", patient_id="P101", medication_id="M2", time="07:30", frequency="twice_daily",
                         status="active"),
        ],
        reference_solution=[
            {"tool": "list_medications", "args": {"patient_id": "P101"}},
            {"tool": "create_reminder", "args": {"patient_id": "P101", "medication_id": "M1", "time": "08:00",
                                                 "frequency": "daily"}},
            {"tool": "create_reminder", "args": {"patient_id": "P101", "medication_id": "M2", "time": "07:30",
                                                 "frequency": "twice_daily"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("John Doe (patient P103) wants his paused Sertraline reminder R-002 switched back on and moved to "
              "20:30, and to record that he took that dose on 2025-03-02."),
        checklist=[
            "Has reminder R-002 with status 'active'",
            "Has reminder R-002 with time 20:30",
            "Has a dose_log entry for R-002 on 2025-03-02 with taken true",
        ],
        checks=[
            C.field_is("reminders", "R-002", "status", "active"),
            C.field_is("reminders", "R-002", "time", "20:30"),
            C.appended("dose_log", reminder_id="R-002", date="2025-03-02", taken=True),
        ],
        reference_solution=[
            {"tool": "resume_reminder", "args": {"reminder_id": "R-002"}},
            {"tool": "update_reminder_time", "args": {"reminder_id": "R-002", "time": "20:30"}},
            {"tool": "log_dose", "args": {"reminder_id": "R-002", "date": "2025-03-02", "taken": True}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("Ana Silva (patient P102) is travelling: record that she missed her Levothyroxine dose of reminder "
              "R-001 on 2025-03-03, then pause that reminder."),
        checklist=[
            "Has a dose_log entry for R-001 on 2025-03-03 with taken false",
            "Has reminder R-001 with status 'paused'",
        ],
        checks=[
            C.appended("dose_log", reminder_id="R-001", date="2025-03-03", taken=False),
            C.field_is("reminders", "R-001", "status", "paused"),
        ],
        reference_solution=[
            {"tool": "list_reminders", "args": {"patient_id": "P102"}},
            {"tool": "log_dose", "args": {"reminder_id": "R-001", "date": "2025-03-03", "taken": False}},
            {"tool": "pause_reminder", "args": {"reminder_id": "R-001"}},
        ],
    ),
]

DOMAIN = Domain(
    name="medication_reminders",
    class_name="MedicationReminderService",
    env_file="medication_reminders.py",
    summary="Medication reminder service",
    summary_variants=("Medication reminder service", "Medication dosage reminder system",
                      "Medication adherence reminder service"),
    introduction=(
        "A medication reminder service keeps patients, the medications prescribed to them with dosage and "
        "condition, dose reminders with a time of day and a frequency, and a log of doses taken or missed. "
        "Caregivers list medications, create reminders for active medications, change reminder times, pause "
        "and resume reminders, and log doses."),
    intro_variants=("Reminders ring daily, twice daily or weekly.",
                    "Adherence is tracked through the dose log.",
                    "Inactive medications cannot get new reminders."),
    rules=[
        "A reminder belongs to one patient and one of that patient's active medications.",
        "Times are 24h 'HH:MM'; frequency is daily, twice_daily or weekly.",
        "Only active reminders can be paused, only paused ones resumed.",
        "Doses are logged against active reminders, one entry per reminder and date.",
    ],
    tool_kinds={"get_patient": "query", "list_medications": "query", "list_reminders": "query",
                "create_reminder": "state_change", "update_reminder_time": "state_change",
                "pause_reminder": "state_change", "resume_reminder": "state_change", "log_dose": "state_change"},
    keywords={"medication": 2, "reminder": 3, "remind": 3, "dosage": 2, "dose": 2, "adherence": 3,
              "pill": 2, "prescription": 1, "refill": 1},
    entities=[
        {"name": "Patient", "attributes": ["patient_id", "name", "timezone"], "description": "A person taking medication."},
        {"name": "Medication", "attributes": ["medication_id", "patient_id", "name", "dosage", "condition", "active"],
         "description": "A medication prescribed to a patient."},
        {"name": "Reminder", "attributes": ["reminder_id", "patient_id", "medication_id", "time", "frequency", "status"],
         "description": "A dose reminder; status active or paused."},
        {"name": "DoseLogEntry", "attributes": ["reminder_id", "date", "taken"],
         "description": "Whether the dose of a reminder was taken on a date."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=9,
    example_values={"time": "08:15", "frequency": "daily", "date": "2025-03-04", "taken": True},
)
