"""An installation upgraded (``migrate`` alone) gets what ``accounts.roles`` now ships: the Approver group (the mayor or
the treasurer who decides what two people must and prepares nothing), the crew's recording of a shut-off carried out and
service restored (the supervisor's too), cancelling a work order kept to the office, and the reports kept to the clerk,
the supervisor and the treasurer, the conversion pages to the clerk and the supervisor. A new installation has them
from ``setup_utility``."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

WANTED = (
    ("accounts", "view_account"), ("accounts", "view_customer"), ("accounts", "view_premises"),
    ("billing", "view_bill"), ("billing", "view_billline"), ("billing", "view_ledgerentry"),
    ("billing", "view_payment"), ("office", "view_refund"), ("office", "view_dayclose"),
    ("office", "view_dayreopen"), ("remittance", "view_achfile"), ("billing", "view_penaltywaiver"),
    ("billing", "view_amendmentrebill"), ("conversion", "view_conversionbatch"),
    ("office", "approve_refund"), ("office", "approve_dayreopen"), ("remittance", "approve_achfile"),
    ("billing", "change_penaltywaiver"), ("billing", "change_amendmentrebill"),
    ("conversion", "approve_conversionjob"),
)


CARRY_OUT = ("termination", "carry_out_terminationcase")
CANCEL = ("fieldwork", "cancel_fieldorder")
REPORTS = ("reports", "run_reportfile")
CONVERSION = ("conversion", "view_conversionbatch")


def give(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    if not Group.objects.filter(name="Clerk").exists():
        return  # not set up yet: setup_utility installs every role
    for label in sorted({app for app, _ in (*WANTED, CARRY_OUT, CANCEL, REPORTS)}):
        config = apps.get_app_config(label)
        config.models_module = True  # the historical app config has models: make its permissions now
        create_permissions(config, verbosity=0, apps=apps)
    def permission(app, codename):
        return Permission.objects.get(content_type__app_label=app, codename=codename)

    group, _ = Group.objects.get_or_create(name="Approver")
    group.permissions.add(*[permission(app, codename) for app, codename in WANTED])
    for group in Group.objects.filter(name__in=("Supervisor", "Field crew")):
        group.permissions.add(permission(*CARRY_OUT))
    for group in Group.objects.filter(name__in=("Clerk", "Supervisor")):
        group.permissions.add(permission(*CANCEL), permission(*CONVERSION))
    for group in Group.objects.filter(name__in=("Clerk", "Supervisor", "Treasurer")):
        group.permissions.add(permission(*REPORTS))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0011_premises_meter_location"),
        ("fieldwork", "0002_cancel_permission"),
        ("termination", "0004_carry_out_permission"),
        ("reports", "0002_run_reportfile_permission"),
        ("billing", "0047_requests_withdrawn"),
        ("conversion", "0008_requests_withdrawn"),
        ("office", "0005_requests_withdrawn"),
        ("remittance", "0010_requests_withdrawn"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(give, migrations.RunPython.noop)]
