"""Insurance claims desk: health policies with coverage limits, and claims moving through review."""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "policies": {
        "POL-100": {"policy_id": "POL-100", "holder": "Maria Lopez", "plan": "Family Health Plus",
                    "coverage_limit": 50000.0, "deductible": 500.0, "status": "active"},
        "POL-200": {"policy_id": "POL-200", "holder": "Kevin O'Brien", "plan": "Basic Health",
                    "coverage_limit": 10000.0, "deductible": 1500.0, "status": "active"},
        "POL-300": {"policy_id": "POL-300", "holder": "Hana Sato", "plan": "Dental Care",
                    "coverage_limit": 3000.0, "deductible": 100.0, "status": "lapsed"},
    },
    "claims": {
        "CLM-001": {"claim_id": "CLM-001", "policy_id": "POL-100", "incident_date": "2022-12-20", "amount": 1200.0,
                    "description": "emergency room visit", "status": "under_review",
                    "documents": ["er_invoice.pdf"], "appeal_reason": ""},
        "CLM-002": {"claim_id": "CLM-002", "policy_id": "POL-200", "incident_date": "2023-01-05", "amount": 850.0,
                    "description": "MRI scan", "status": "denied", "documents": ["mri_bill.pdf"],
                    "appeal_reason": ""},
        "CLM-003": {"claim_id": "CLM-003", "policy_id": "POL-100", "incident_date": "2023-02-11", "amount": 300.0,
                    "description": "physiotherapy", "status": "approved", "documents": [], "appeal_reason": ""},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["claims"]["CLM-003"]["status"] = "submitted"

S2 = copy.deepcopy(BASE)
S2["policies"]["POL-300"]["status"] = "active"

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("File a claim on Maria Lopez's policy POL-100 for her knee arthroscopy on 2025-02-14 costing $4800 "
              "(description 'knee arthroscopy') and attach the invoice 'knee_invoice.pdf' to it; also attach "
              "'er_discharge.pdf' to her open claim CLM-001."),
        checklist=[
            "Has a submitted claim on policy POL-100 for 4800 with incident_date 2025-02-14",
            "Has 'knee_invoice.pdf' in the documents of the new claim on policy POL-100",
            "Has 'er_discharge.pdf' in the documents of claim CLM-001",
        ],
        checks=[
            C.new_entity("claims", policy_id="POL-100", amount=4800.0, incident_date="2025-02-14", status="submitted"),
            C.new_entity_list_has("claims", "documents", "knee_invoice.pdf", policy_id="POL-100"),
            C.list_has("claims", "CLM-001", "documents", "er_discharge.pdf"),
        ],
        reference_solution=[
            {"tool": "get_policy", "args": {"policy_id": "POL-100"}},
            {"tool": "file_claim", "args": {"policy_id": "POL-100", "incident_date": "2025-02-14", "amount": 4800.0,
                                            "description": "knee arthroscopy"}},
            {"tool": "attach_document", "args": {"claim_id": "CLM-004", "document_name": "knee_invoice.pdf"}},
            {"tool": "attach_document", "args": {"claim_id": "CLM-001", "document_name": "er_discharge.pdf"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Kevin O'Brien's MRI claim CLM-002 was denied: appeal it with the reason 'MRI was pre-authorized', and "
              "file a new $240 claim on his policy POL-200 for 'blood tests' done on 2025-03-01."),
        checklist=[
            "Has claim CLM-002 with status 'under_review'",
            "Has claim CLM-002 with appeal_reason 'MRI was pre-authorized'",
            "Has a submitted claim on policy POL-200 for 240 described as 'blood tests'",
        ],
        checks=[
            C.field_is("claims", "CLM-002", "status", "under_review"),
            C.field_is("claims", "CLM-002", "appeal_reason", "MRI was pre-authorized"),
            C.new_entity("claims", policy_id="POL-200", amount=240.0, description="blood tests", status="submitted"),
        ],
        reference_solution=[
            {"tool": "get_claim", "args": {"claim_id": "CLM-002"}},
            {"tool": "appeal_claim", "args": {"claim_id": "CLM-002", "reason": "MRI was pre-authorized"}},
            {"tool": "file_claim", "args": {"policy_id": "POL-200", "incident_date": "2025-03-01", "amount": 240.0,
                                            "description": "blood tests"}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("Maria Lopez paid her emergency room visit out of pocket: withdraw claim CLM-001, and file a $950 claim "
              "on her policy POL-100 for a 'dental crown' done on 2025-03-04."),
        checklist=[
            "Has claim CLM-001 with status 'withdrawn'",
            "Has a submitted claim on policy POL-100 for 950 described as 'dental crown'",
        ],
        checks=[
            C.field_is("claims", "CLM-001", "status", "withdrawn"),
            C.new_entity("claims", policy_id="POL-100", amount=950.0, description="dental crown", status="submitted"),
        ],
        reference_solution=[
            {"tool": "withdraw_claim", "args": {"claim_id": "CLM-001"}},
            {"tool": "file_claim", "args": {"policy_id": "POL-100", "incident_date": "2025-03-04", "amount": 950.0,
                                            "description": "dental crown"}},
        ],
    ),
]

DOMAIN = Domain(
    name="insurance_claims",
    class_name="InsuranceClaimsDesk",
    env_file="insurance_claims.py",
    summary="Health insurance claims desk",
    summary_variants=("Health insurance claims desk", "Insurance claim tracking system",
                      "Health insurance claims management"),
    introduction=(
        "A health insurance claims desk keeps policies with their holder, plan, coverage limit, deductible "
        "and status, and claims filed against them with amount, incident date, supporting documents and a "
        "review status. Agents check policies and claim status, file new claims, attach documents, withdraw "
        "open claims and appeal denied ones."),
    intro_variants=("Claims move from submitted to under review to approved or denied.",
                    "Remaining coverage shrinks with every open or approved claim.",
                    "Claim ids double as reference numbers."),
    rules=[
        "Claims can only be filed on active policies, for an amount above 0 and within the remaining coverage.",
        "Documents can only be attached to open claims (submitted or under_review).",
        "Only open claims can be withdrawn; only denied claims can be appealed (back to under_review).",
    ],
    tool_kinds={"get_policy": "query", "get_claim": "query", "list_claims": "query", "file_claim": "state_change",
                "attach_document": "state_change", "withdraw_claim": "state_change", "appeal_claim": "state_change"},
    keywords={"insurance claim": 5, "claim": 3, "reference number": 1, "medical bill": 2, "reimbursement": 2,
              "appeal": 1},
    entities=[
        {"name": "Policy", "attributes": ["policy_id", "holder", "plan", "coverage_limit", "deductible", "status"],
         "description": "A health insurance policy."},
        {"name": "Claim", "attributes": ["claim_id", "policy_id", "incident_date", "amount", "description", "status",
                                         "documents", "appeal_reason"],
         "description": "A claim filed against a policy and its review status."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=8,
    example_values={"incident_date": "2025-03-01", "amount": 120.0, "description": "lab work",
                    "document_name": "receipt.pdf", "reason": "documentation was incomplete"},
)
