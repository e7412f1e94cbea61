"""An installation upgraded (``migrate`` alone) gives its Clerk and Supervisor groups what ``accounts.roles`` now gives
them: a town's premises put in their water districts. A new installation has them from ``setup_utility``."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUPS = ("Clerk", "Supervisor")
WANTED = (("accounts", "view_premisesdistrict"), ("accounts", "add_premisesdistrict"),
          ("accounts", "view_historicalpremisesdistrict"), ("ordinance", "view_district"))


def give(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    groups = list(Group.objects.filter(name__in=GROUPS))
    if not groups:
        return
    for label in ("accounts", "ordinance"):
        config = apps.get_app_config(label)
        config.models_module = True  # the historical app config has models: make its permissions now
        create_permissions(config, verbosity=0, apps=apps)
    permissions = [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in WANTED]
    for group in groups:
        group.permissions.add(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0009_premises_district"),
        ("ordinance", "0006_districts"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(give, migrations.RunPython.noop)]
