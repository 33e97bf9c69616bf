"""Patient records system: charts of records per patient, allergies, and provider access grants."""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "patients": {
        "PT-01": {"patient_id": "PT-01", "name": "John Smith", "date_of_birth": "1975-06-02", "allergies": ["penicillin"]},
        "PT-02": {"patient_id": "PT-02", "name": "Emily Johnson", "date_of_birth": "1988-10-17", "allergies": []},
        "PT-03": {"patient_id": "PT-03", "name": "Carlos Diaz", "date_of_birth": "1959-01-29", "allergies": ["latex"]},
    },
    "providers": {
        "PR-1": {"provider_id": "PR-1", "name": "Dr. Grace Lee", "organization": "Mercy Cardiology"},
        "PR-2": {"provider_id": "PR-2", "name": "Dr. Omar Haddad", "organization": "City Imaging Center"},
        "PR-3": {"provider_id": "PR-3", "name": "Dr. Helen Park", "organization": "Northside Family Practice"},
    },
    "records": {
        "REC-001": {"record_id": "REC-001", "patient_id": "PT-01", "record_type": "lab_result", "title": "Lipid panel",
                    "date": "2025-01-15", "content": "LDL 131 mg/dL"},
        "REC-002": {"record_id": "REC-002", "patient_id": "PT-01", "record_type": "visit_note",
                    "title": "Annual physical", "date": "2025-01-20", "content": "Routine exam, no concerns."},
        "REC-003": {"record_id": "REC-003", "patient_id": "PT-02", "record_type": "imaging", "title": "Knee MRI",
                    "date": "2025-02-02", "content": "Mild meniscus tear."},
    },
    "access_grants": {
        "G-001": {"grant_id": "G-001", "patient_id": "PT-02", "provider_id": "PR-2", "scope": "full",
                  "expires": "", "status": "active"},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["access_grants"]["G-002"] = {"grant_id": "G-002", "patient_id": "PT-03", "provider_id": "PR-3",
                                "scope": "summary", "expires": "2025-12-31", "status": "active"}

S2 = copy.deepcopy(BASE)
S2["records"]["REC-004"] = {"record_id": "REC-004", "patient_id": "PT-03", "record_type": "prescription",
                            "title": "Amlodipine 5 mg", "date": "2025-02-20", "content": "Once daily."}

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Give Dr. Grace Lee (provider PR-1) full access to the medical records of John Smith (patient PT-01) "
              "until 2025-12-31, and add a milk allergy to his profile."),
        checklist=[
            "Has an active full-scope access grant for patient PT-01 and provider PR-1 expiring 2025-12-31",
            "Has 'milk' in patient PT-01's allergies",
        ],
        checks=[
            C.new_entity("access_grants", patient_id="PT-01", provider_id="PR-1", scope="full", expires="2025-12-31",
                         status="active"),
            C.list_has("patients", "PT-01", "allergies", "milk"),
        ],
        reference_solution=[
            {"tool": "list_access_grants", "args": {"patient_id": "PT-01"}},
            {"tool": "grant_access", "args": {"patient_id": "PT-01", "provider_id": "PR-1", "scope": "full",
                                              "expires": "2025-12-31"}},
            {"tool": "add_allergy", "args": {"patient_id": "PT-01", "allergy": "milk"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Carlos Diaz (patient PT-03) is switching doctors: revoke Dr. Helen Park's access grant G-002 and give "
              "Dr. Grace Lee (provider PR-1) summary access to his records with no end date."),
        checklist=[
            "Has access grant G-002 with status 'revoked'",
            "Has an active summary-scope access grant for patient PT-03 and provider PR-1 with no expiry",
        ],
        checks=[
            C.field_is("access_grants", "G-002", "status", "revoked"),
            C.new_entity("access_grants", patient_id="PT-03", provider_id="PR-1", scope="summary", expires="",
                         status="active"),
        ],
        reference_solution=[
            {"tool": "revoke_access", "args": {"grant_id": "G-002"}},
            {"tool": "grant_access", "args": {"patient_id": "PT-03", "provider_id": "PR-1", "scope": "summary",
                                              "expires": ""}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("File a new lab result for Emily Johnson (patient PT-02) titled 'HbA1c test', dated 2025-03-05, with "
              "the content 'HbA1c 6.1%', and revoke City Imaging Center's access grant G-001."),
        checklist=[
            "Has a lab_result record for patient PT-02 titled 'HbA1c test' dated 2025-03-05",
            "Has access grant G-001 with status 'revoked'",
        ],
        checks=[
            C.new_entity("records", patient_id="PT-02", record_type="lab_result", title="HbA1c test", date="2025-03-05"),
            C.field_is("access_grants", "G-001", "status", "revoked"),
        ],
        reference_solution=[
            {"tool": "add_record", "args": {"patient_id": "PT-02", "record_type": "lab_result", "title": "HbA1c test",
                                            "date": "2025-03-05", "content": "HbA1c 6.1%"}},
            {"tool": "revoke_access", "args": {"grant_id": "G-001"}},
        ],
    ),
]

DOMAIN = Domain(
    name="patient_records",
    class_name="PatientRecordsSystem",
    env_file="patient_records.py",
    summary="Patient medical records system",
    summary_variants=("Patient medical records system", "Electronic health records access system",
                      "Medical records management system"),
    introduction=(
        "A patient medical records system keeps patients with their allergies, healthcare providers, the "
        "records in each patient's chart (lab results, visit notes, imaging, prescriptions) and the access "
        "grants that let a provider read a patient's records. Staff read charts, file new records, update "
        "allergies, and grant or revoke provider access."),
    intro_variants=("Access can be full or summary-only.",
                    "Grants can carry an expiry date.",
                    "Revoked grants stay on file for auditing."),
    rules=[
        "Records belong to an existing patient; record_type is lab_result, visit_note, imaging or prescription.",
        "A provider reads a patient's records only through an active grant (scope full or summary).",
        "One active grant per patient and provider; revoking sets status 'revoked' (grants are never deleted).",
        "Allergies are a list of distinct lower-case names.",
    ],
    tool_kinds={"get_patient": "query", "list_records": "query", "get_record": "query", "add_record": "state_change",
                "add_allergy": "state_change", "list_access_grants": "query", "grant_access": "state_change",
                "revoke_access": "state_change"},
    keywords={"medical records": 4, "records": 2, "record": 1, "health record": 3, "chart": 1, "access": 1,
              "share": 1, "allergy": 1, "patient history": 2, "lab result": 2, "revoke": 2,
              "access grant": 2},
    entities=[
        {"name": "Patient", "attributes": ["patient_id", "name", "date_of_birth", "allergies"],
         "description": "A patient and their allergies."},
        {"name": "Provider", "attributes": ["provider_id", "name", "organization"],
         "description": "A clinician who may be granted access."},
        {"name": "Record", "attributes": ["record_id", "patient_id", "record_type", "title", "date", "content"],
         "description": "One entry in a patient's chart."},
        {"name": "AccessGrant", "attributes": ["grant_id", "patient_id", "provider_id", "scope", "expires", "status"],
         "description": "A provider's access to a patient's records; status active or revoked."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=8,
    example_values={"record_type": "visit_note", "title": "Follow-up visit", "date": "2025-03-06",
                    "content": "Stable.", "allergy": "peanuts", "scope": "summary", "expires": "2025-12-31"},
)
