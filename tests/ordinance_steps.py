"""Test steps for the installed ordinance: change a table of the installed copy in place, as a site's office
settings stood before a scenario (the product changes tables only by installing a file, dated)."""

from django.utils import timezone

from ordinance.models import BEGINNING, InstalledPreset, Section, Utility, _token
from ordinance.selectors import section_params, sections_forget


def section_set(table: str, *, effective_on=BEGINNING, **changes) -> None:
    """Table ``table``'s version from ``effective_on`` with ``changes`` over the one in force that day."""
    params = {**section_params(table, effective_on), **changes}
    Section.objects.update_or_create(table=table, effective_on=effective_on,
                                     defaults={"params": params, "installed": InstalledPreset.objects.first()})
    Utility.objects.update(rules_token=_token(), updated_at=timezone.now())
    sections_forget()
