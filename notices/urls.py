from django.urls import path

from . import views

app_name = "notices"

urlpatterns = [
    path("text/inbound/", views.text_inbound, name="text_inbound"),
    path("text/status/", views.text_status, name="text_status"),
]
