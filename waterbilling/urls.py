from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from core.permissions import StaffUnlessDebug
from notices.webhooks import mail_webhook_urls

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="portal:home", permanent=False)),
    path("portal/", include("portal.urls")),
    path("pay/", include("remittance.urls")),
    path("notices/", include("notices.urls")),
    # The mail provider's tracking webhooks (bounces, complaints): off without ANYMAIL_WEBHOOK_SECRET.
    path("anymail/", include((mail_webhook_urls(), "anymail"))),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the portal's language link
    path("admin/", admin.site.urls),
    path("api/v1/", include("waterbilling.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[StaffUnlessDebug]), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema", permission_classes=[StaffUnlessDebug]),
         name="api-docs"),
]

handler404 = "core.api.page_not_found"
