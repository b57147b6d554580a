"""One base error for everything the user can fix, each saying where to look."""

from __future__ import annotations

from pathlib import Path


class IclrKgError(Exception):
    """An error the CLI reports as one line; `exit_code` is the process status."""

    exit_code = 1


class DataError(IclrKgError):
    """A problem in a curated data file, located by file, line and field."""

    exit_code = 2

    def __init__(self, file: Path | str, line: int | None, field: str | None, message: str):
        self.file, self.line, self.field, self.message = Path(file), line, field, message
        where = f"{file}:{line}" if line else str(file)
        super().__init__(f"{where}: {field + ': ' if field else ''}{message}")


class ValidationFailed(IclrKgError):
    """The data violates the SHACL shapes; `report` is the readable report."""

    exit_code = 1

    def __init__(self, report: str, count: int):
        self.report, self.count = report, count
        super().__init__(f"{count} SHACL violation(s):\n{report}")


class InconsistentGraph(IclrKgError):
    """OWL RL reasoning found a contradiction (e.g. an entity in two disjoint classes)."""


class StoreError(IclrKgError):
    """The store is missing, corrupt, or locked by another build."""


class QueryError(IclrKgError):
    """A query failed to parse or run; the message is the parser's."""


class ImportFailed(IclrKgError):
    """An import could not fetch, or its result would not build; nothing was written."""

    exit_code = 3


class SettingsError(IclrKgError):
    """A setting (flag or ICLR_KG_* variable) has a value no command can use."""
