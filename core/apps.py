from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Jobs"

    def ready(self):
        from django.db.models import Field, ForeignObject

        from .db import AnyOf
        from .receivers import import_job_stored_enqueue
        from .signals import import_job_stored

        import_job_stored.connect(import_job_stored_enqueue, dispatch_uid="core.import_job_run")
        Field.register_lookup(AnyOf)
        ForeignObject.register_lookup(AnyOf)  # relations keep lookups of their own
