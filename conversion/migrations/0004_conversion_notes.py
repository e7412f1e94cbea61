"""The accounts' notes from the old system come over with a conversion."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversion', '0003_conversion_post_approval'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversionjob',
            name='notes',
            field=models.FileField(blank=True, upload_to='conversion/'),
        ),
    ]
