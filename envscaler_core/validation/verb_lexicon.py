"""The words the label rule of `tool_kinds` reads a tool's name and docstring by: the verbs that declare a
lookup or a change, the change verbs that may also be nouns, and the two-word changes. They are lists, so
an unusual verb on either side reads as unknown (docs/interop.md, Known limits); a verb that can be either
("scan a ticket", "assess a fee") stays out of both, so the file's label stands for it."""

from __future__ import annotations

QUERY_VERBS = frozenset({
    "get", "list", "find", "search", "lookup", "look", "view", "show", "query", "count", "fetch", "retrieve",
    "read", "describe", "check", "is", "has", "can", "verify", "validate", "calculate", "compute",
    "estimate", "summarize", "summarise", "filter", "browse", "display", "inspect", "peek", "preview",
    "see", "total", "sum", "compare", "quote", "lists", "gets", "finds", "retrieves", "returns",
    "return", "looks", "shows", "counts", "checks", "searches", "reads", "describes", "fetches",
    "provides", "reports", "tells", "determines", "whether", "lookup", "explore", "examine", "audit", "track",
    # rt14-B F2: lookups a generator writes that the lexicon lacked ("Locate a book.", "Print a book's card.")
    "locate", "print", "explain", "tell", "determine", "identify", "analyze", "analyse", "recommend",
    "enumerate", "detect", "measure", "forecast", "predict", "trace", "discover", "render", "simulate",
    "visualize", "visualise", "plot", "chart", "gather", "extract", "aggregate", "inquire", "enquire",
    # rt17-C F3: everyday lookups ("Sort the books by year.", "Poll the status of the book."); a verb that can be
    # either stays unplaced (scan a ticket, assess a fee, price an item at 5, generate an invoice, review, give)
    "sort", "evaluate", "poll", "monitor", "rank", "group", "tally", "test", "export", "observe", "survey",
    "investigate", "diagnose", "interpret", "quantify", "tabulate", "itemize", "itemise", "study", "research",
    "download", "translate", "parse", "decode", "benchmark", "average",
})
STATE_VERBS = frozenset({
    "request", "add", "create", "register", "book", "reserve", "cancel", "delete", "remove", "update", "set", "mark",
    "assign", "unassign", "move", "rename", "complete", "close", "open", "approve", "reject", "deny",
    "submit", "lend", "loan", "borrow", "return", "transfer", "pay", "schedule", "reschedule", "enroll",
    "enrol", "unenroll", "archive", "restore", "reset", "increment", "decrement", "apply", "attach",
    "detach", "withdraw", "appeal", "file", "log", "record", "grant", "revoke", "pause", "resume", "start",
    "stop", "finish", "extend", "renew", "change", "edit", "modify", "insert", "append", "put", "post",
    "save", "store", "write", "send", "issue", "refund", "charge", "deposit", "credit", "debit", "place",
    "order", "purchase", "buy", "sell", "ship", "deliver", "dispatch", "confirm", "accept", "decline",
    "activate", "deactivate", "enable", "disable", "suspend", "block", "unblock", "lock", "unlock",
    "link", "unlink", "join", "leave", "subscribe", "unsubscribe", "follow", "unfollow", "like", "rate",
    "review", "comment", "tag", "untag", "upload", "import", "clear", "purge", "release", "allocate",
    "claim", "redeem", "void", "terminate", "admit", "discharge", "prescribe", "dispense", "refill",
    "checkin", "checkout", "login", "logout", "signup", "toggle", "increase", "decrease", "adjust",
    "upgrade", "downgrade", "merge", "split", "publish", "unpublish", "flag", "resolve", "reopen",
    "escalate", "rollback", "undo", "redo", "bulk", "batch", "mute", "unmute", "hold", "mint", "burn",
    "queue", "enqueue", "dequeue", "pop", "push", "drop", "kick", "ban", "invite", "revert", "give", "take",
    "top", "make", "bump", "freeze", "unfreeze", "thaw", "ping", "touch", "raise", "lower", "fill", "empty", "replace", "swap", "convert", "process",
    # rt14-C F1: common changes whose docstrings were read as saying nothing ("Seat the party at a table.")
    "acknowledge", "ack", "seat", "unseat", "tick", "untick", "dismiss", "reply", "respond", "upvote", "downvote",
    "vote", "favorite", "favourite", "unfavorite", "bookmark", "unbookmark", "star", "unstar", "pin", "unpin",
    "hide", "unhide", "snooze", "forward", "notify", "remind", "warn", "sign", "countersign", "stamp", "award",
    "reward", "penalize", "penalise", "grade", "annotate", "relabel", "reorder", "install",
    "uninstall", "configure", "provision", "deploy", "launch", "trigger", "settle", "reconcile",
    "finalize", "finalise", "initialize", "initialise", "switch", "turn", "pack", "unpack", "restock",
    "discard", "trash", "erase", "wipe", "destroy", "dispose", "retire", "discontinue", "reinstate",
    "recover", "unarchive", "requeue", "retry", "rerun", "rebook", "reassign", "delegate", "allot", "accrue",
    "earn", "spend", "consume", "use", "donate", "contribute", "invest", "bid", "offer", "hire", "fire",
    "employ", "promote", "demote", "rent", "lease", "sublet", "park", "board", "greet", "welcome", "serve",
    "cook", "clean", "wash", "repair", "fix", "correct", "hang", "hail", "cast", "enlist", "nominate",
    "elect", "appoint", "endorse", "certify", "authorize", "authorise", "vaccinate", "waitlist", "shortlist",
})
# words that are verbs in "book_appointment" but nouns in "Get a member's bookings and credits"
NOUNISH = frozenset({"book", "order", "record", "file", "log", "review", "rate", "hold", "place", "credit",
                     "charge", "post", "schedule", "ship", "tag", "comment", "claim", "queue", "top", "return", "empty", "process",
                     "seat", "reply", "vote", "favorite", "favourite", "star", "pin", "stamp", "award", "reward",
                     "grade", "bid", "offer", "rent", "lease", "park", "board", "clean", "correct", "cast", "use",
                     "pack", "fire", "forward", "trigger", "bookmark", "tick", "sign", "launch"})
COMPOUND_STATE = {("check", "in"), ("check", "out"), ("sign", "in"), ("sign", "up"), ("sign", "out"),
                  ("log", "in"), ("log", "out"), ("check", "off"), ("set", "up"), ("look", "after"),
                  ("pick", "up"), ("hang", "up"), ("put", "up"), ("drop", "off"), ("opt", "in"), ("opt", "out"),
                  ("sign", "off"), ("write", "off"), ("cash", "out"), ("top", "up"), ("turn", "on"), ("turn", "off"),
                  ("switch", "on"), ("switch", "off"), ("hand", "over"), ("hand", "in"), ("fill", "in"),
                  ("fill", "out")}
# someone a thing may be done for ("Get the room booked for the guest."): a causative `get` is a change only for one of
# these; "Get the hearing scheduled for the case." says which hearing (rt22-R15 F1). A list, like the verbs: a person
# noun missing here reads as a thing, so the sentence picks a record and the name or the code decides
PEOPLE = frozenset({
    "person", "people", "party", "guest", "guests", "client", "customer", "member", "user", "patient", "student",
    "tenant", "renter", "landlord", "owner", "buyer", "seller", "vendor", "supplier", "contractor", "employee", "staff",
    "worker", "manager", "agent", "broker", "driver", "rider", "passenger", "traveler", "traveller", "visitor",
    "player", "team", "family", "child", "children", "parent", "teacher", "doctor", "nurse", "dentist", "lawyer",
    "attorney", "applicant", "candidate", "donor", "volunteer", "subscriber", "borrower", "lender", "diner", "caller",
    "requester", "recipient", "sender", "attendee", "participant", "resident", "homeowner", "contact", "friend",
    "colleague", "coworker", "partner", "spouse", "pet", "hire", "intern", "trainee", "author", "artist", "speaker",
    "presenter", "host", "couple", "group", "crew", "pilot", "captain", "director", "officer", "clerk", "cashier",
    "shopper", "consumer", "investor", "holder", "beneficiary", "payee", "defendant", "plaintiff",
    "claimant", "judge", "witness", "athlete", "coach", "instructor", "tutor", "pupil", "guardian", "caregiver",
    "technician", "mechanic", "plumber", "electrician", "courier", "chef", "waiter", "bride", "groom", "me", "us"})
