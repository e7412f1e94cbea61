import pytest
from django.core.management import call_command


@pytest.fixture
def mineola(db):
    """The Mineola preset installed, as `setup_utility mineola` does."""
    call_command("setup_utility", "mineola", "--date", "2026-01-01", stdout=open("/dev/null", "w"))
    from billing.models import Utility

    return Utility.objects.get()
