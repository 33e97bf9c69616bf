from typing import Any

OPEN_STATUSES = ("submitted", "under_review")


class InsuranceClaimsDesk:
    # Rules:
    # - Claims can only be filed on active policies, for an amount above 0 and within the
    #   remaining coverage (coverage_limit minus approved and open claims).
    # - Documents can only be attached to open claims (submitted or under_review).
    # - Only open claims can be withdrawn; only denied claims can be appealed (back to under_review).

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.policies: dict[str, dict[str, Any]] = config.get("policies", {})
        self.claims: dict[str, dict[str, Any]] = config.get("claims", {})

    def _next_claim_id(self) -> str:
        n = len(self.claims) + 1
        while f"CLM-{n:03d}" in self.claims:
            n += 1
        return f"CLM-{n:03d}"

    def _committed(self, policy_id: str) -> float:
        return sum(c["amount"] for c in self.claims.values()
                   if c["policy_id"] == policy_id and c["status"] in ("approved", *OPEN_STATUSES))

    def get_policy(self, policy_id: str) -> dict:
        """Get one policy with its remaining coverage.

        Args:
            policy_id: The policy's id.

        Returns:
            dict: success flag and the policy, or an error.
        """
        policy = self.policies.get(policy_id)
        if policy is None:
            return {"success": False, "error": f"policy {policy_id} not found"}
        remaining = round(policy["coverage_limit"] - self._committed(policy_id), 2)
        return {"success": True, "data": {**policy, "remaining_coverage": remaining}}

    def get_claim(self, claim_id: str) -> dict:
        """Get one claim and its status.

        Args:
            claim_id: The claim's id (its reference number).

        Returns:
            dict: success flag and the claim, or an error.
        """
        if claim_id not in self.claims:
            return {"success": False, "error": f"claim {claim_id} not found"}
        return {"success": True, "data": self.claims[claim_id]}

    def list_claims(self, policy_id: str) -> dict:
        """List the claims filed on a policy.

        Args:
            policy_id: The policy's id.

        Returns:
            dict: success flag and the claims, or an error.
        """
        if policy_id not in self.policies:
            return {"success": False, "error": f"policy {policy_id} not found"}
        return {"success": True, "data": [c for c in self.claims.values() if c["policy_id"] == policy_id]}

    def file_claim(self, policy_id: str, incident_date: str, amount: float, description: str) -> dict:
        """File a new claim on an active policy.

        Args:
            policy_id: The policy's id.
            incident_date: ISO date of the incident, 'YYYY-MM-DD'.
            amount: Claimed amount in dollars, above 0 and within the remaining coverage.
            description: What happened.

        Returns:
            dict: success flag and a message naming the new claim id, or an error.
        """
        policy = self.policies.get(policy_id)
        if policy is None:
            return {"success": False, "error": f"policy {policy_id} not found"}
        if policy["status"] != "active":
            return {"success": False, "error": f"policy {policy_id} is {policy['status']}"}
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
            return {"success": False, "error": "amount must be a positive number"}
        if amount > policy["coverage_limit"] - self._committed(policy_id):
            return {"success": False, "error": "amount exceeds the remaining coverage"}
        claim_id = self._next_claim_id()
        self.claims[claim_id] = {
            "claim_id": claim_id, "policy_id": policy_id, "incident_date": incident_date, "amount": amount,
            "description": description, "status": "submitted", "documents": [], "appeal_reason": "",
        }
        return {"success": True, "message": f"claim {claim_id} submitted"}

    def attach_document(self, claim_id: str, document_name: str) -> dict:
        """Attach a supporting document to an open claim.

        Args:
            claim_id: The claim's id.
            document_name: File name of the document, e.g. 'invoice.pdf'.

        Returns:
            dict: success flag and a message, or an error.
        """
        claim = self.claims.get(claim_id)
        if claim is None:
            return {"success": False, "error": f"claim {claim_id} not found"}
        if claim["status"] not in OPEN_STATUSES:
            return {"success": False, "error": f"claim {claim_id} is {claim['status']}"}
        if not document_name.strip():
            return {"success": False, "error": "document_name must not be empty"}
        if document_name in claim["documents"]:
            return {"success": False, "error": f"{document_name} is already attached"}
        claim["documents"].append(document_name)
        return {"success": True, "message": f"{document_name} attached to {claim_id}"}

    def withdraw_claim(self, claim_id: str) -> dict:
        """Withdraw an open claim.

        Args:
            claim_id: The claim's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        claim = self.claims.get(claim_id)
        if claim is None:
            return {"success": False, "error": f"claim {claim_id} not found"}
        if claim["status"] not in OPEN_STATUSES:
            return {"success": False, "error": f"claim {claim_id} is {claim['status']}"}
        claim["status"] = "withdrawn"
        return {"success": True, "message": f"claim {claim_id} withdrawn"}

    def appeal_claim(self, claim_id: str, reason: str) -> dict:
        """Appeal a denied claim, sending it back to review.

        Args:
            claim_id: The claim's id.
            reason: Why the decision should be reconsidered.

        Returns:
            dict: success flag and a message, or an error.
        """
        claim = self.claims.get(claim_id)
        if claim is None:
            return {"success": False, "error": f"claim {claim_id} not found"}
        if claim["status"] != "denied":
            return {"success": False, "error": f"only denied claims can be appealed; {claim_id} is {claim['status']}"}
        if not reason.strip():
            return {"success": False, "error": "reason must not be empty"}
        claim["status"] = "under_review"
        claim["appeal_reason"] = reason
        return {"success": True, "message": f"claim {claim_id} is under review again"}
