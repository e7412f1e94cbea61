"""What backflow announces. The termination app (beside it on the same floor) is wired to it by the composition
root, so neither imports the other."""

from django.dispatch import Signal

# kwargs: account_id, section, detail, as_of, actor, emergency_kind ("" or e.g. "health_hazard")
noncompliance_found = Signal()
