"""What `queuetop doctor` reports: findings (ok / warn / fail / unknown, what it means, the fix to print) and
the report over them, shared by its checks (doctor.py, doctor_sqlserver.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from queuetop.watch.blocking import Blocking


class Status(Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"  # the database cannot tell; the finding says what to check by hand


@dataclass(frozen=True)
class Finding:
    check: str  # what was checked, in a DBA's words ("plan: poll, states (full pass)")
    status: Status
    summary: str  # what was found, one line
    meaning: str = ""  # what it means for the queue
    fix: str | None = None  # the statement(s) that would fix it: printed, never run
    details: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status.value, "summary": self.summary, "meaning": self.meaning,
                "fix": self.fix, "details": list(self.details)}


@dataclass(frozen=True)
class Report:
    target: str
    dialect: str
    layout: str
    findings: tuple[Finding, ...]
    blocking: Blocking = field(default_factory=Blocking)

    def count(self, status: Status) -> int:
        return sum(1 for f in self.findings if f.status is status)

    def exit_code(self, strict: bool = False) -> int:
        """0: nothing failed; 1: a finding failed (or, with strict, warned). 2 (could not check) is the CLI's."""
        worst = {f.status for f in self.findings}
        return 1 if Status.FAIL in worst or (strict and Status.WARN in worst) else 0

    def as_json(self) -> dict[str, Any]:
        return {"target": self.target, "dialect": self.dialect, "layout": self.layout,
                "counts": {s.value: self.count(s) for s in Status},
                "findings": [f.as_json() for f in self.findings]}  # fmt: skip
