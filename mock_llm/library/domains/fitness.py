"""Fitness class booking: members with credits, classes with capacity, bookings."""

from __future__ import annotations

import copy

from mock_llm.library import checks as C
from mock_llm.library.model import Domain, LibraryScenario

BASE = {
    "members": {
        "M-01": {"member_id": "M-01", "name": "Priya Patel", "membership": "premium", "credits": 5},
        "M-02": {"member_id": "M-02", "name": "Daniel Kim", "membership": "basic", "credits": 2},
        "M-03": {"member_id": "M-03", "name": "Sara Ahmed", "membership": "basic", "credits": 0},
        "M-04": {"member_id": "M-04", "name": "Leo Rossi", "membership": "premium", "credits": 10},
    },
    "classes": {
        "C-YOGA-1": {"class_id": "C-YOGA-1", "name": "Sunrise Vinyasa Yoga", "class_type": "yoga", "location": "online",
                     "start": "2025-03-15T07:00", "capacity": 20, "enrolled": ["M-04"], "virtual": True,
                     "premium_only": False},
        "C-ZUMBA-1": {"class_id": "C-ZUMBA-1", "name": "Zumba Blast", "class_type": "zumba", "location": "New York",
                      "start": "2025-03-15T18:00", "capacity": 2, "enrolled": ["M-01", "M-04"], "virtual": False,
                      "premium_only": False},
        "C-HIIT-1": {"class_id": "C-HIIT-1", "name": "HIIT Express", "class_type": "hiit", "location": "Brooklyn",
                     "start": "2025-03-16T07:30", "capacity": 12, "enrolled": [], "virtual": False,
                     "premium_only": False},
        "C-PIL-1": {"class_id": "C-PIL-1", "name": "Reformer Pilates", "class_type": "pilates", "location": "New York",
                    "start": "2025-03-16T09:00", "capacity": 6, "enrolled": ["M-04"], "virtual": False,
                    "premium_only": True},
        "C-MED-1": {"class_id": "C-MED-1", "name": "Guided Meditation", "class_type": "meditation",
                    "location": "online", "start": "2025-03-15T20:00", "capacity": 30, "enrolled": [],
                    "virtual": True, "premium_only": False},
    },
    "bookings": {
        "BK-001": {"booking_id": "BK-001", "member_id": "M-04", "class_id": "C-YOGA-1", "status": "booked"},
        "BK-002": {"booking_id": "BK-002", "member_id": "M-01", "class_id": "C-ZUMBA-1", "status": "booked"},
        "BK-003": {"booking_id": "BK-003", "member_id": "M-04", "class_id": "C-ZUMBA-1", "status": "booked"},
        "BK-004": {"booking_id": "BK-004", "member_id": "M-04", "class_id": "C-PIL-1", "status": "booked"},
    },
}

S0 = copy.deepcopy(BASE)

S1 = copy.deepcopy(BASE)
S1["classes"]["C-SPIN-1"] = {"class_id": "C-SPIN-1", "name": "Rhythm Spin", "class_type": "spin",
                             "location": "Brooklyn", "start": "2025-03-17T19:00", "capacity": 15, "enrolled": [],
                             "virtual": False, "premium_only": False}

S2 = copy.deepcopy(BASE)
S2["members"]["M-02"]["credits"] = 6

SCENARIOS = [
    LibraryScenario(
        initial_state=S0,
        task=("Daniel Kim (member M-02) wants to join the virtual yoga class C-YOGA-1 and the HIIT Express class "
              "C-HIIT-1 in Brooklyn, using his remaining credits."),
        checklist=[
            "Has a booked booking for member M-02 in class C-YOGA-1",
            "Has a booked booking for member M-02 in class C-HIIT-1",
            "Has member M-02 with 0 credits",
        ],
        checks=[
            C.new_entity("bookings", member_id="M-02", class_id="C-YOGA-1", status="booked"),
            C.new_entity("bookings", member_id="M-02", class_id="C-HIIT-1", status="booked"),
            C.field_is("members", "M-02", "credits", 0),
        ],
        reference_solution=[
            {"tool": "get_member", "args": {"member_id": "M-02"}},
            {"tool": "book_class", "args": {"member_id": "M-02", "class_id": "C-YOGA-1"}},
            {"tool": "book_class", "args": {"member_id": "M-02", "class_id": "C-HIIT-1"}},
        ],
    ),
    LibraryScenario(
        initial_state=S1,
        task=("Sara Ahmed (member M-03) has no credits left: top her up with 5 credits and book her into the Guided "
              "Meditation class C-MED-1."),
        checklist=[
            "Has a booked booking for member M-03 in class C-MED-1",
            "Has member M-03 with 4 credits",
        ],
        checks=[
            C.new_entity("bookings", member_id="M-03", class_id="C-MED-1", status="booked"),
            C.field_is("members", "M-03", "credits", 4),
        ],
        reference_solution=[
            {"tool": "add_credits", "args": {"member_id": "M-03", "amount": 5}},
            {"tool": "book_class", "args": {"member_id": "M-03", "class_id": "C-MED-1"}},
        ],
    ),
    LibraryScenario(
        initial_state=S2,
        task=("Priya Patel (member M-01) can't make Zumba Blast: cancel her booking BK-002 and book her into the "
              "Reformer Pilates class C-PIL-1 instead."),
        checklist=[
            "Has booking BK-002 with status 'cancelled'",
            "Has member M-01 removed from class C-ZUMBA-1's enrolled list",
            "Has a booked booking for member M-01 in class C-PIL-1",
        ],
        checks=[
            C.field_is("bookings", "BK-002", "status", "cancelled"),
            C.list_lacks("classes", "C-ZUMBA-1", "enrolled", "M-01"),
            C.new_entity("bookings", member_id="M-01", class_id="C-PIL-1", status="booked"),
        ],
        reference_solution=[
            {"tool": "cancel_booking", "args": {"booking_id": "BK-002"}},
            {"tool": "book_class", "args": {"member_id": "M-01", "class_id": "C-PIL-1"}},
        ],
    ),
]

DOMAIN = Domain(
    name="fitness_classes",
    class_name="FitnessClassBooking",
    env_file="fitness_classes.py",
    summary="Fitness class booking system",
    summary_variants=("Fitness class booking system", "Gym class reservation system", "Fitness studio class booking"),
    introduction=(
        "A fitness class booking system keeps members with their membership tier and class credits, classes "
        "(yoga, zumba, HIIT, pilates, meditation, in a city or online) with capacity and enrolled members, "
        "and bookings. Members browse classes, book places with credits, cancel bookings for a refund and "
        "top up credits."),
    intro_variants=("Some classes are reserved for premium members.",
                    "Classes can be held in a studio or streamed online.",
                    "Each booking spends one credit."),
    rules=[
        "Booking a class costs the member one credit; cancelling refunds it.",
        "A class cannot be booked beyond its capacity, nor twice by the same member.",
        "premium_only classes need a 'premium' membership.",
        "Credits are added in amounts from 1 to 50.",
    ],
    tool_kinds={"list_classes": "query", "get_class": "query", "get_member": "query", "book_class": "state_change",
                "cancel_booking": "state_change", "add_credits": "state_change"},
    keywords={"fitness class": 4, "class": 1, "yoga": 2, "zumba": 2, "pilates": 2, "meditation class": 2,
              "workout": 1, "gym": 1, "fitness": 1, "join": 1, "fitness challenge": 2},
    entities=[
        {"name": "Member", "attributes": ["member_id", "name", "membership", "credits"],
         "description": "A gym member and their class credits."},
        {"name": "FitnessClass", "attributes": ["class_id", "name", "class_type", "location", "start", "capacity",
                                                "enrolled", "virtual", "premium_only"],
         "description": "A scheduled class and who is enrolled."},
        {"name": "Booking", "attributes": ["booking_id", "member_id", "class_id", "status"],
         "description": "A member's place in a class; status booked or cancelled."},
    ],
    initial_states=[S0, S1, S2],
    scenarios=SCENARIOS,
    usefulness=8,
    modelability=9,
    example_values={"amount": 3, "class_type": "yoga", "location": "online"},
)
