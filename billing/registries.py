"""The registries of strategy classes a preset selects by name: billing calendars, rate structures, penalty
schemes and fee rules. Rule modules register their classes here; ``billing.ordinance`` builds them. Kept
apart from the ordinance so a rule module never imports the ordinance that imports it."""

from core.errors import ApplicationError


class Registry:
    """Strategy classes of one kind by name: a preset names one, ``build`` makes it from the preset's
    parameters. The classes register themselves in their rule module; ``billing.ordinance`` imports every
    rule module, so a name is known wherever the ordinance is."""

    def __init__(self, kind: str, *, field: str):
        self.kind, self.field = kind, field
        self._classes: dict[str, type] = {}

    def register(self, cls: type) -> type:
        """Class decorator: register ``cls`` under its ``name``."""
        name = cls.name
        if self._classes.get(name, cls) is not cls:
            raise ValueError(f"two {self.kind}s are named '{name}': {self._classes[name].__qualname__} "
                             f"and {cls.__qualname__}")
        self._classes[name] = cls
        return cls

    def names(self) -> list[str]:
        return sorted(self._classes)

    def class_of(self, name) -> type | None:
        """The class registered as ``name``, or None."""
        return self._classes.get(name) if isinstance(name, str) else None

    def build(self, name: str, params: dict):
        """The strategy ``name`` made from ``params``; an unknown name, or a parameter the strategy needs
        and the preset does not give, is refused naming it."""
        known = self.names()
        if name not in self._classes:
            raise ApplicationError(f"unknown {self.kind} '{name}'; known: {', '.join(known) or 'none'}",
                                   field=self.field)
        try:
            return self._classes[name](params)
        except KeyError as exc:
            raise ApplicationError(f"the {self.kind} '{name}' needs the parameter {exc} in the preset",
                                   field=self.field) from exc


CALENDARS = Registry("billing calendar", field="calendar")
RATE_STRUCTURES = Registry("rate structure", field="rate_schedule")
PENALTY_SCHEMES = Registry("penalty scheme", field="penalty")
FEE_RULES = Registry("fee rule", field="fee")
