"""The payment plans in force in the old system come over with a conversion."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversion', '0004_conversion_notes'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversionjob',
            name='plans',
            field=models.FileField(blank=True, upload_to='conversion/'),
        ),
    ]
