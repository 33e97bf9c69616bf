from typing import Any

RECORD_TYPES = ("lab_result", "visit_note", "imaging", "prescription")
SCOPES = ("full", "summary")


class PatientRecordsSystem:
    # Rules:
    # - Records belong to an existing patient; record_type is one of RECORD_TYPES.
    # - A provider gets access to a patient's records only through an active grant (scope full|summary).
    # - One active grant per patient and provider; revoking sets status 'revoked' (grants are never deleted).
    # - Allergies are a list of distinct lower-case names.

    def __init__(self, init_config: dict | None = None):
        config = init_config or {}
        self.patients: dict[str, dict[str, Any]] = config.get("patients", {})
        self.providers: dict[str, dict[str, Any]] = config.get("providers", {})
        self.records: dict[str, dict[str, Any]] = config.get("records", {})
        self.access_grants: dict[str, dict[str, Any]] = config.get("access_grants", {})

    def _next_id(self, prefix: str, container: dict) -> str:
        n = len(container) + 1
        while f"{prefix}-{n:03d}" in container:
            n += 1
        return f"{prefix}-{n:03d}"

    def _active_grant(self, patient_id: str, provider_id: str) -> dict | None:
        for grant in self.access_grants.values():
            if grant["patient_id"] == patient_id and grant["provider_id"] == provider_id and grant["status"] == "active":
                return grant
        return None

    def get_patient(self, patient_id: str) -> dict:
        """Get one patient's demographics and allergies.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the patient, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        return {"success": True, "data": self.patients[patient_id]}

    def list_records(self, patient_id: str, record_type: str | None = None) -> dict:
        """List a patient's records, optionally of one type.

        Args:
            patient_id: The patient's id.
            record_type: Only records of this type (lab_result, visit_note, imaging, prescription).

        Returns:
            dict: success flag and the records, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        found = [r for r in self.records.values()
                 if r["patient_id"] == patient_id and (record_type is None or r["record_type"] == record_type)]
        return {"success": True, "data": found}

    def get_record(self, record_id: str) -> dict:
        """Get one record in full.

        Args:
            record_id: The record's id.

        Returns:
            dict: success flag and the record, or an error.
        """
        if record_id not in self.records:
            return {"success": False, "error": f"record {record_id} not found"}
        return {"success": True, "data": self.records[record_id]}

    def add_record(self, patient_id: str, record_type: str, title: str, date: str, content: str = "") -> dict:
        """Add a record to a patient's chart.

        Args:
            patient_id: The patient's id.
            record_type: One of lab_result, visit_note, imaging, prescription.
            title: Short title of the record.
            date: ISO date 'YYYY-MM-DD'.
            content: The record's text.

        Returns:
            dict: success flag and a message naming the new record id, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        if record_type not in RECORD_TYPES:
            return {"success": False, "error": f"record_type must be one of {', '.join(RECORD_TYPES)}"}
        if not title.strip():
            return {"success": False, "error": "title must not be empty"}
        record_id = self._next_id("REC", self.records)
        self.records[record_id] = {
            "record_id": record_id, "patient_id": patient_id, "record_type": record_type,
            "title": title, "date": date, "content": content,
        }
        return {"success": True, "message": f"record {record_id} added"}

    def add_allergy(self, patient_id: str, allergy: str) -> dict:
        """Add an allergy to a patient's profile.

        Args:
            patient_id: The patient's id.
            allergy: The allergen, e.g. 'penicillin'.

        Returns:
            dict: success flag and a message, or an error.
        """
        patient = self.patients.get(patient_id)
        if patient is None:
            return {"success": False, "error": f"patient {patient_id} not found"}
        name = allergy.strip().lower()
        if not name:
            return {"success": False, "error": "allergy must not be empty"}
        if name in patient["allergies"]:
            return {"success": False, "error": f"{name} is already listed"}
        patient["allergies"].append(name)
        return {"success": True, "message": f"allergy {name} added to {patient_id}"}

    def list_access_grants(self, patient_id: str) -> dict:
        """List who has (or had) access to a patient's records.

        Args:
            patient_id: The patient's id.

        Returns:
            dict: success flag and the grants, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        return {"success": True, "data": [g for g in self.access_grants.values() if g["patient_id"] == patient_id]}

    def grant_access(self, patient_id: str, provider_id: str, scope: str = "summary", expires: str = "") -> dict:
        """Give a provider access to a patient's records.

        Args:
            patient_id: The patient's id.
            provider_id: The provider's id.
            scope: 'full' or 'summary'.
            expires: ISO date the access ends, or '' for no end date.

        Returns:
            dict: success flag and a message naming the new grant id, or an error.
        """
        if patient_id not in self.patients:
            return {"success": False, "error": f"patient {patient_id} not found"}
        if provider_id not in self.providers:
            return {"success": False, "error": f"provider {provider_id} not found"}
        if scope not in SCOPES:
            return {"success": False, "error": "scope must be 'full' or 'summary'"}
        if self._active_grant(patient_id, provider_id) is not None:
            return {"success": False, "error": f"{provider_id} already has active access to {patient_id}"}
        grant_id = self._next_id("G", self.access_grants)
        self.access_grants[grant_id] = {
            "grant_id": grant_id, "patient_id": patient_id, "provider_id": provider_id,
            "scope": scope, "expires": expires, "status": "active",
        }
        return {"success": True, "message": f"grant {grant_id} created"}

    def revoke_access(self, grant_id: str) -> dict:
        """Revoke an active access grant.

        Args:
            grant_id: The grant's id.

        Returns:
            dict: success flag and a message, or an error.
        """
        grant = self.access_grants.get(grant_id)
        if grant is None:
            return {"success": False, "error": f"grant {grant_id} not found"}
        if grant["status"] != "active":
            return {"success": False, "error": f"grant {grant_id} is already {grant['status']}"}
        grant["status"] = "revoked"
        return {"success": True, "message": f"grant {grant_id} revoked"}
