"""A conversion posted from the admin takes two supervisors; jobs asked for before were decided as asked."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F


def asked_before_decided(apps, schema_editor):
    """Jobs asked for before a post took two people were decided as they were asked."""
    jobs = apps.get_model("conversion", "ConversionJob").objects
    jobs.filter(status="queued").update(status="approved")
    jobs.exclude(status="pending").update(decided_at=F("created_at"))



class Migration(migrations.Migration):

    dependencies = [
        ('conversion', '0002_conversion_job_contacts'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='conversionjob',
            options={'ordering': ['-created_at', '-id'], 'permissions': [('approve_conversionjob', 'Can approve or refuse a conversion post asked for by another')]},
        ),
        migrations.AddField(
            model_name='conversionjob',
            name='control',
            field=models.FileField(blank=True, help_text="The old system's control report: the files must tie to it to the cent.", upload_to='conversion/'),
        ),
        migrations.AddField(
            model_name='conversionjob',
            name='decided_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversionjob',
            name='decided_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='conversionjob',
            name='decision_note',
            field=models.TextField(blank=True),
        ),
        migrations.AlterField(
            model_name='conversionjob',
            name='status',
            field=models.CharField(choices=[('pending', 'Waiting for a second supervisor'), ('approved', 'Approved: waiting for a worker'), ('checking', 'Checking the files'), ('posting', 'Posting'), ('posted', 'Posted'), ('already', 'Posted already'), ('refused', 'Refused: nothing was saved'), ('failed', 'Failed: nothing was saved')], default='pending', max_length=10),
        ),
        migrations.RunPython(asked_before_decided, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='conversionjob',
            constraint=models.CheckConstraint(condition=models.Q(('status', 'pending'), ('decided_at__isnull', False), _connector='OR'), name='conversion_job_decision_dated'),
        ),
    ]
