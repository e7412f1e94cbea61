from datetime import date

import factory

from accounts.models import Account, Customer, Premises
from meters.models import Installation, Meter, Reading


class CustomerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Customer

    name = factory.Sequence(lambda n: f"Customer {n}")
    mailing_address = factory.Sequence(lambda n: f"{n} Main Street\nMineola, NY 11501")
    email = factory.Sequence(lambda n: f"customer{n}@example.org")


class PremisesFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Premises

    service_address = factory.Sequence(lambda n: f"{n} Jericho Turnpike")
    sbl = factory.Sequence(lambda n: f"9-{n // 100}-{n % 100}")


class AccountFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Account

    account_no = factory.Sequence(lambda n: f"1-{n:04d}")
    book = 1
    category = Account.Category.ONE_TWO_FAMILY
    premises = factory.SubFactory(PremisesFactory)
    owner = factory.SubFactory(CustomerFactory)


class MeterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Meter

    serial = factory.Sequence(lambda n: f"M{n:07d}")
    make = "Neptune"
    size = "5/8"
    unit = Meter.Unit.GALLONS


class InstallationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Installation

    meter = factory.SubFactory(MeterFactory)
    account = factory.SubFactory(AccountFactory)
    installed_on = date(2024, 1, 1)


class ReadingFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Reading

    meter = factory.SubFactory(MeterFactory)
    read_on = date(2025, 7, 10)
    value = 0


def staff_user(username: str, group: str):
    """A staff login in one of the shipped groups (they come with the preset: `setup_utility`)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username, is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return get_user_model().objects.get(pk=user.pk)  # fresh, without a cached permission set


def clerk_user(username: str = "clerk"):
    return staff_user(username, "Clerk")
