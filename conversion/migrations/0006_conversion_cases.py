"""The termination cases in progress in the old system come over with a conversion."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversion', '0005_conversion_plans'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversionjob',
            name='cases',
            field=models.FileField(blank=True, upload_to='conversion/'),
        ),
    ]
