"""What the previous system had relevied comes over with a conversion."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversion', '0006_conversion_cases'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversionjob',
            name='relevied',
            field=models.FileField(blank=True, upload_to='conversion/'),
        ),
    ]
