"""One error family for the whole application.

Services raise ``ApplicationError`` (or a subclass) with one or more ``FieldError`` items naming the
field and the rule broken. Views, the API and management commands turn them into messages, JSON
``{"errors": [...]}`` with a 4xx status, or a non-zero exit — never a 500.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.field}: {self.message}" if self.field else f"{where}{self.message}"

    def as_dict(self) -> dict:
        data = {"field": self.field, "message": self.message}
        if self.line is not None:
            data["line"] = self.line
        return data


class ApplicationError(Exception):
    """``errors`` lists the problems; ``unlisted`` counts more that were found but not listed (a file with
    a million bad rows lists its first few hundred, see ``core.csvimport.ImportErrors``)."""

    status_code = 400

    def __init__(self, message: str = "", *, errors: list[FieldError] | None = None, field: str = "",
                 unlisted: int = 0):
        self.errors = list(errors or [])
        if message and not self.errors:
            self.errors = [FieldError(field=field, message=message)]
        self.unlisted = unlisted
        super().__init__(message or "; ".join(str(e) for e in self.errors))

    @property
    def error_count(self) -> int:
        return len(self.errors) + self.unlisted

    @property
    def error_lines(self) -> int:
        """How many lines of a file the errors are on (0 when they are not about a file's lines)."""
        return len({e.line for e in self.errors if e.line is not None})

    def as_dict(self) -> dict:
        data = {"errors": [e.as_dict() for e in self.errors]}
        if self.unlisted:
            data["errors_not_listed"] = self.unlisted
        return data


def refuse_any(errors: list[FieldError]) -> None:
    """Refuse with every problem a guard collected (a guard never stops at the first); nothing when none."""
    if errors:
        raise ApplicationError(errors=errors)


class NotFound(ApplicationError):
    status_code = 404


class Conflict(ApplicationError):
    status_code = 409


NUL_MESSAGE = "contains a NUL character (\\x00), which is not allowed"


def refuse_nul(**values) -> None:
    """Refuse, naming the field, any text value holding a NUL (``\\x00``): PostgreSQL can neither store nor compare
    it, so one reaching a query would be a traceback, not a refusal."""
    errors = [FieldError(field, NUL_MESSAGE) for field, value in values.items()
              if isinstance(value, str) and "\x00" in value]
    refuse_any(errors)
