"""DEFECTIVE variant: medical equipment loan program.

Defects (validation must reject the class): `get_item` is a query that writes a view counter into
the item, and `return_item` indexes `self.loans[loan_id]` directly, so an unknown loan id raises
KeyError instead of returning `{"success": False, ...}`. Its scenarios are still valid on the happy
path (they only use existing ids), so the defect is only visible to validation.
"""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "items": {
        "EQ-1": {"item_id": "EQ-1", "name": "Standard wheelchair", "category": "wheelchair", "location": "Los Angeles",
                 "status": "available"},
        "EQ-2": {"item_id": "EQ-2", "name": "Folding walker", "category": "walker", "location": "New York",
                 "status": "available"},
        "EQ-3": {"item_id": "EQ-3", "name": "Portable oxygen concentrator", "category": "oxygen_concentrator",
                 "location": "Los Angeles", "status": "on_loan"},
        "EQ-4": {"item_id": "EQ-4", "name": "Home treadmill", "category": "treadmill", "location": "New York",
                 "status": "available"},
        "EQ-5": {"item_id": "EQ-5", "name": "Hospital bed", "category": "hospital_bed", "location": "San Francisco",
                 "status": "maintenance"},
    },
    "borrowers": {
        "B-1": {"borrower_id": "B-1", "name": "Rosa Martinez", "city": "New York"},
        "B-2": {"borrower_id": "B-2", "name": "Ethan Wright", "city": "Los Angeles"},
        "B-3": {"borrower_id": "B-3", "name": "Mei Lin", "city": "San Francisco"},
    },
    "loans": {
        "L-001": {"loan_id": "L-001", "item_id": "EQ-3", "borrower_id": "B-2", "start_date": "2025-02-01",
                  "due_date": "2025-03-01", "status": "active"},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["items"]["EQ-5"]["status"] = "available"

S2 = copy.deepcopy(BASE)
S2["borrowers"]["B-4"] = {"borrower_id": "B-4", "name": "Samuel Okafor", "city": "New York"}

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Loan the folding walker EQ-2 to Rosa Martinez (borrower B-1) from 2025-03-10 until 2025-04-10, and "
              "take back the oxygen concentrator Ethan Wright returned (loan L-001)."),
        checklist=[
            "Has an active loan of item EQ-2 to borrower B-1 from 2025-03-10 due 2025-04-10",
            "Has loan L-001 with status 'returned'",
            "Has item EQ-3 with status 'available'",
        ],
        checks=[
            C.new_entity("loans", item_id="EQ-2", borrower_id="B-1", start_date="2025-03-10", due_date="2025-04-10",
                         status="active"),
            C.field_is("loans", "L-001", "status", "returned"),
            C.field_is("items", "EQ-3", "status", "available"),
        ],
        reference_solution=[
            {"tool": "loan_item", "args": {"item_id": "EQ-2", "borrower_id": "B-1", "start_date": "2025-03-10",
                                           "due_date": "2025-04-10"}},
            {"tool": "return_item", "args": {"loan_id": "L-001"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Ethan Wright (borrower B-2) needs the oxygen concentrator longer: extend loan L-001 to 2025-04-01, and "
              "also loan him the standard wheelchair EQ-1 from 2025-03-05 to 2025-03-26."),
        checklist=[
            "Has loan L-001 with due_date 2025-04-01",
            "Has an active loan of item EQ-1 to borrower B-2 from 2025-03-05 due 2025-03-26",
        ],
        checks=[
            C.field_is("loans", "L-001", "due_date", "2025-04-01"),
            C.new_entity("loans", item_id="EQ-1", borrower_id="B-2", start_date="2025-03-05", due_date="2025-03-26",
                         status="active"),
        ],
        reference_solution=[
            {"tool": "extend_loan", "args": {"loan_id": "L-001", "new_due_date": "2025-04-01"}},
            {"tool": "loan_item", "args": {"item_id": "EQ-1", "borrower_id": "B-2", "start_date": "2025-03-05",
                                           "due_date": "2025-03-26"}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task="Rent the home treadmill EQ-4 to Samuel Okafor (borrower B-4) for one month, from 2025-03-01 to 2025-03-31.",
        checklist=[
            "Has an active loan of item EQ-4 to borrower B-4 from 2025-03-01 due 2025-03-31",
            "Has item EQ-4 with status 'on_loan'",
        ],
        checks=[
            C.new_entity("loans", item_id="EQ-4", borrower_id="B-4", start_date="2025-03-01", due_date="2025-03-31",
                         status="active"),
            C.field_is("items", "EQ-4", "status", "on_loan"),
        ],
        reference_solution=[
            {"tool": "list_available_items", "args": {"category": "treadmill"}},
            {"tool": "loan_item", "args": {"item_id": "EQ-4", "borrower_id": "B-4", "start_date": "2025-03-01",
                                           "due_date": "2025-03-31"}},
        ],
    ),
]

DOMAIN = Domain(
    name="equipment_loans",
    class_name="EquipmentLoanProgram",
    env_file="equipment_loans.py",
    summary="Medical equipment loan program",
    summary_variants=("Medical equipment loan program", "Medical equipment rental service",
                      "Home medical equipment lending program"),
    introduction=(
        "A medical equipment loan program keeps items such as wheelchairs, walkers, oxygen concentrators and "
        "treadmills with their category, location and status, the borrowers, and loans with start and due "
        "dates. Coordinators list available items, loan them to borrowers, extend loans and record returns."),
    intro_variants=("Items under maintenance cannot be loaned.",
                    "Each loan has a due date that can be extended.",
                    "Items are stored in several cities."),
    rules=[
        "Only 'available' items can be loaned; a loan marks the item 'on_loan'.",
        "Returning an active loan marks it 'returned' and the item 'available' again.",
        "due_date must not be before start_date.",
    ],
    tool_kinds={"list_available_items": "query", "get_item": "query", "list_loans": "query",
                "loan_item": "state_change", "return_item": "state_change", "extend_loan": "state_change"},
    keywords={"equipment": 3, "loan": 2, "rent": 2, "rental": 2, "wheelchair": 2, "treadmill": 2, "ventilator": 2,
              "oxygen concentrator": 2, "walker": 1},
    entities=[
        {"name": "Item", "attributes": ["item_id", "name", "category", "location", "status"],
         "description": "A piece of medical equipment; status available, on_loan or maintenance."},
        {"name": "Borrower", "attributes": ["borrower_id", "name", "city"], "description": "Someone who borrows items."},
        {"name": "Loan", "attributes": ["loan_id", "item_id", "borrower_id", "start_date", "due_date", "status"],
         "description": "An item lent to a borrower; status active or returned."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=8,
    defect="keyerror-and-mutating-query",
    defect_description=("get_item (a query) writes a 'views' counter into the item; return_item raises KeyError "
                        "for an unknown loan id"),
    example_values={"start_date": "2025-03-10", "due_date": "2025-04-10", "new_due_date": "2025-05-01",
                    "category": "wheelchair"},
)
