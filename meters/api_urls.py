from django.urls import path

from . import api

urlpatterns = [
    path("readings/", api.ReadingCreate.as_view(), name="api-readings"),
    path("readings/bulk/", api.ReadingBulkCreate.as_view(), name="api-readings-bulk"),
]
