"""``/api/v1/``: staff-only (session or token), errors as ``{"errors": [{"field", "message"}]}``.

Each app serves its own endpoints; the paths and URL names are a contract (docs/api.md, the OpenAPI schema).
"""

from django.urls import include, path

urlpatterns = [
    path("", include("accounts.api_urls")),
    path("", include("meters.api_urls")),
    path("", include("billing.api_urls")),
    path("termination/", include("termination.api_urls")),
    path("backflow/", include("backflow.api_urls")),
]
