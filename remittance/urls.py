from django.urls import path

from . import views

app_name = "remittance"
urlpatterns = [
    path("", views.find_account, name="find"),
    path("account/", views.pay_found, name="pay_found"),
    path("account/<uuid:public_id>/", views.pay_linked, name="pay_linked"),
    path("done/<uuid:public_id>/", views.done, name="done"),
    path("cancelled/<uuid:public_id>/", views.cancelled, name="cancelled"),
    path("webhook/<str:processor_name>/", views.webhook, name="webhook"),
    path("test-checkout/<str:checkout_id>/", views.test_checkout, name="test_checkout"),
    path("autopay/<uuid:public_id>/", views.autopay, name="autopay"),
]
