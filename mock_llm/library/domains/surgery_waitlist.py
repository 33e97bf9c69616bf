"""DEFECTIVE variant: surgery waitlist registry.

Defects (validation must reject the class): `register_patient` adds the entry BEFORE checking the
hospital's capacity and the priority, so a failed call leaves a half-applied entry behind; and
`update_priority` returns a plain string (through `_reject`) instead of a dict on every failure. Its
scenarios only take happy paths, so they stay valid.
"""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "hospitals": {
        "H-1": {"hospital_id": "H-1", "name": "New York General", "city": "New York", "capacity": 3},
        "H-2": {"hospital_id": "H-2", "name": "Lakeside Medical Center", "city": "Chicago", "capacity": 2},
        "H-3": {"hospital_id": "H-3", "name": "Bay Surgical Institute", "city": "San Francisco", "capacity": 4},
    },
    "patients": {
        "SP-1": {"patient_id": "SP-1", "name": "Robert Hayes"},
        "SP-2": {"patient_id": "SP-2", "name": "Grace Liu"},
        "SP-3": {"patient_id": "SP-3", "name": "Omar Farouk"},
        "SP-4": {"patient_id": "SP-4", "name": "Julia Novak"},
    },
    "entries": {
        "W-001": {"entry_id": "W-001", "patient_id": "SP-2", "hospital_id": "H-1", "procedure": "hip replacement",
                  "priority": 2, "status": "waiting", "surgery_date": ""},
        "W-002": {"entry_id": "W-002", "patient_id": "SP-3", "hospital_id": "H-2", "procedure": "knee replacement",
                  "priority": 3, "status": "waiting", "surgery_date": ""},
        "W-003": {"entry_id": "W-003", "patient_id": "SP-4", "hospital_id": "H-2", "procedure": "cataract surgery",
                  "priority": 4, "status": "waiting", "surgery_date": ""},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["patients"]["SP-5"] = {"patient_id": "SP-5", "name": "Nina Petrova"}

S2 = copy.deepcopy(BASE)
S2["hospitals"]["H-3"]["capacity"] = 5

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Register Robert Hayes (patient SP-1) on the New York General (H-1) waitlist for a knee replacement "
              "with priority 2, and schedule Grace Liu's hip replacement (entry W-001) for 2025-04-18."),
        checklist=[
            "Has a waiting entry for patient SP-1 at hospital H-1 for 'knee replacement' with priority 2",
            "Has entry W-001 with surgery_date 2025-04-18",
        ],
        checks=[
            C.new_entity("entries", patient_id="SP-1", hospital_id="H-1", procedure="knee replacement", priority=2,
                         status="waiting"),
            C.field_is("entries", "W-001", "surgery_date", "2025-04-18"),
        ],
        reference_solution=[
            {"tool": "register_patient", "args": {"patient_id": "SP-1", "hospital_id": "H-1",
                                                  "procedure": "knee replacement", "priority": 2}},
            {"tool": "schedule_surgery", "args": {"entry_id": "W-001", "surgery_date": "2025-04-18"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Omar Farouk's knee replacement (entry W-002) has become urgent: raise it to priority 1 and schedule "
              "it for 2025-03-28."),
        checklist=[
            "Has entry W-002 with priority 1",
            "Has entry W-002 with surgery_date 2025-03-28",
        ],
        checks=[
            C.field_is("entries", "W-002", "priority", 1),
            C.field_is("entries", "W-002", "surgery_date", "2025-03-28"),
        ],
        reference_solution=[
            {"tool": "update_priority", "args": {"entry_id": "W-002", "priority": 1}},
            {"tool": "schedule_surgery", "args": {"entry_id": "W-002", "surgery_date": "2025-03-28"}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("Julia Novak (patient SP-4) is moving to San Francisco: take her entry W-003 off the Lakeside list and "
              "register her at Bay Surgical Institute (H-3) for cataract surgery with priority 4."),
        checklist=[
            "Has entry W-003 with status 'removed'",
            "Has a waiting entry for patient SP-4 at hospital H-3 for 'cataract surgery' with priority 4",
        ],
        checks=[
            C.field_is("entries", "W-003", "status", "removed"),
            C.new_entity("entries", patient_id="SP-4", hospital_id="H-3", procedure="cataract surgery", priority=4,
                         status="waiting"),
        ],
        reference_solution=[
            {"tool": "remove_entry", "args": {"entry_id": "W-003"}},
            {"tool": "register_patient", "args": {"patient_id": "SP-4", "hospital_id": "H-3",
                                                  "procedure": "cataract surgery", "priority": 4}},
        ],
    ),
]

DOMAIN = Domain(
    name="surgery_waitlist",
    class_name="SurgeryWaitlistRegistry",
    env_file="surgery_waitlist.py",
    summary="Surgery waitlist registry",
    summary_variants=("Surgery waitlist registry", "Hospital surgery waitlist system", "Elective surgery waitlist"),
    introduction=(
        "A surgery waitlist registry keeps hospitals with a waitlist capacity, patients, and waitlist entries "
        "for a procedure with a priority from 1 to 5. Coordinators list hospitals and their waitlists, "
        "register patients, change priorities, schedule surgeries and remove entries."),
    intro_variants=("The most urgent entries are listed first.",
                    "Each hospital caps the number of waiting patients.",
                    "Scheduled entries carry their surgery date."),
    rules=[
        "A hospital's waitlist holds at most `capacity` entries with status 'waiting'.",
        "A patient can wait for the same procedure at one hospital only once.",
        "priority is 1 (most urgent) to 5.",
        "Scheduling a waiting entry sets its surgery_date and status 'scheduled'.",
    ],
    tool_kinds={"list_hospitals": "query", "get_entry": "query", "list_waitlist": "query",
                "register_patient": "state_change", "update_priority": "state_change",
                "schedule_surgery": "state_change", "remove_entry": "state_change"},
    keywords={"waitlist": 5, "wait list": 5, "waiting list": 5, "surgery": 2, "surgical": 1, "transplant": 1,
              "priority": 2, "urgent": 1, "cataract": 1, "register": 1},
    entities=[
        {"name": "Hospital", "attributes": ["hospital_id", "name", "city", "capacity"],
         "description": "A hospital and how many patients its waitlist holds."},
        {"name": "Patient", "attributes": ["patient_id", "name"], "description": "A patient awaiting surgery."},
        {"name": "Entry", "attributes": ["entry_id", "patient_id", "hospital_id", "procedure", "priority", "status",
                                         "surgery_date"],
         "description": "A waitlist place; status waiting, scheduled or removed."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=8,
    defect="half-applied-failure-and-non-dict-return",
    defect_description=("register_patient leaves the new entry behind when it then fails on capacity or priority; "
                        "update_priority returns a plain string on failure"),
    example_values={"procedure": "knee replacement", "priority": 3, "surgery_date": "2025-04-02", "city": "Chicago"},
)
