"""A debit file made in the admin takes two people. Files made before were made and posted at once: approved,
decided when they were made."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def made_before_approved(apps, schema_editor):
    apps.get_model("remittance", "AchFile").objects.update(decided_at=F("created_at"))


class Migration(migrations.Migration):

    dependencies = [
        ('remittance', '0007_online_reinstated'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='achfile',
            options={'ordering': ['-created_at'], 'permissions': [('approve_achfile', 'Can approve or refuse an autopay debit file')]},
        ),
        migrations.AddField(
            model_name='achfile',
            name='decided_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='achfile',
            name='decided_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='achfile',
            name='decision_note',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='achfile',
            name='proposed',
            field=models.JSONField(blank=True, default=list, help_text='The debits as prepared: account, amount and presentment of each.'),
        ),
        migrations.AddField(
            model_name='achfile',
            name='status',
            field=models.CharField(choices=[('pending', 'Waiting for a supervisor'), ('approved', 'Approved: debits posted'), ('refused', 'Refused')], default='approved', max_length=10),
        ),
        migrations.RunPython(made_before_approved, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='achfile',
            name='status',
            field=models.CharField(choices=[('pending', 'Waiting for a supervisor'), ('approved', 'Approved: debits posted'), ('refused', 'Refused')], default='pending', max_length=10),
        ),
        migrations.AddConstraint(
            model_name='achfile',
            constraint=models.UniqueConstraint(condition=models.Q(('status', 'pending')), fields=('status',), name='one_ach_file_waiting', violation_error_message='A debit file is already waiting for a supervisor.'),
        ),
        migrations.AddConstraint(
            model_name='achfile',
            constraint=models.CheckConstraint(condition=models.Q(('status', 'pending'), ('decided_at__isnull', False), _connector='OR'), name='ach_file_decision_dated'),
        ),
    ]
