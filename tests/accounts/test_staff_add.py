"""A member of staff who can sign in and work, in one step: ``manage.py staff_add`` and the superuser's page."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: roles")]


def test_the_command_makes_a_working_clerk(mineola):
    out = io.StringIO()
    call_command("staff_add", "Clara@Village.example", "--role", "Clerk", "--name", "Clara Clerk", stdout=out)
    password = out.getvalue().split("temporary password: ")[1].split()[0]
    user = get_user_model().objects.get(username="clara@village.example")
    assert user.is_staff and user.is_active and not user.is_superuser and user.get_full_name() == "Clara Clerk"
    assert [g.name for g in user.groups.all()] == ["Clerk"] and user.has_perm("billing.add_payment")
    client = Client()
    signed_in = client.post(reverse("admin:login"), {"username": "clara@village.example", "password": password})
    assert signed_in.status_code == 302, signed_in.content.decode()[:2000]
    assert client.get(reverse("admin:accounts_account_changelist")).status_code == 200
    # Again: back in a role, with a new password; never a second login.
    call_command("staff_add", "clara@village.example", "--role", "Supervisor", stdout=io.StringIO())
    assert [g.name for g in get_user_model().objects.get(username="clara@village.example").groups.all()] == [
        "Supervisor"]
    assert get_user_model().objects.filter(email="clara@village.example").count() == 1


def test_the_command_refuses_naming_the_field(mineola):
    with pytest.raises(CommandError) as refused:
        call_command("staff_add", "not-an-address", "--role", "Janitor", stdout=io.StringIO())
    said = str(refused.value)
    assert "email: 'not-an-address' is not an e-mail address" in said
    assert "role: 'Janitor' is not a role; the roles are Clerk, Supervisor" in said
    assert not get_user_model().objects.exists()


def test_the_superusers_page_does_the_same_and_no_one_else_opens_it(client, mineola):
    from tests.office.conftest import staff

    client.force_login(staff("sam", "Supervisor"))
    assert client.get(reverse("admin:staff_add")).status_code == 403
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw-for-tests-9"))
    assert "Add a member of staff" in client.get(reverse("admin:index")).content.decode()
    refused = client.post(reverse("admin:staff_add"), {"email": "x", "role": "Clerk"})
    assert refused.status_code == 400 and "Enter a valid email address." in refused.content.decode()
    done = client.post(reverse("admin:staff_add"), {"email": "fred@village.example", "name": "Fred Field",
                                                    "role": "Field crew"}).content.decode()
    assert "Temporary password" in done and "fred@village.example" in done
    fred = get_user_model().objects.get(username="fred@village.example")
    assert fred.is_staff and [g.name for g in fred.groups.all()] == ["Field crew"]
