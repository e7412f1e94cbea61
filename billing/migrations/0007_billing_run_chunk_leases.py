"""Leases on billing-run chunks: attempts, when a chunk was handed out, until when its worker holds it, and
the last error. Chunks of runs left running get no dispatch time, so the first sweep hands them out again."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('billing', '0006_recipient_is_final'),
    ]

    operations = [
        migrations.AddField(
            model_name='billingrunchunk',
            name='attempts',
            field=models.PositiveSmallIntegerField(default=0, help_text='Times a worker has taken the chunk.'),
        ),
        migrations.AddField(
            model_name='billingrunchunk',
            name='dispatched_at',
            field=models.DateTimeField(blank=True, help_text='When the chunk was last handed to the workers.', null=True),
        ),
        migrations.AddField(
            model_name='billingrunchunk',
            name='last_error',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='billingrunchunk',
            name='leased_until',
            field=models.DateTimeField(blank=True, help_text='While in the future, the worker that took the chunk is billing it and no other takes it.', null=True),
        ),
    ]
