# The utility row is the ordinance floor's now (ordinance.Utility, the same table).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [("billing", "0038_prior_relevies"), ("ordinance", "0002_sections_from_the_utility_row")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Utility")],
                                            database_operations=[]),
    ]
