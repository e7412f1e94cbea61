from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Jobs"

    def ready(self):
        from .receivers import import_job_stored_enqueue
        from .signals import import_job_stored

        import_job_stored.connect(import_job_stored_enqueue, dispatch_uid="core.import_job_run")
