from django.urls import path

from . import preferences, views

app_name = "portal"

urlpatterns = [
    path("", views.home, name="home"),
    path("signup/", views.sign_up, name="signup"),
    path("signup/sent/", views.sign_up_sent, name="signup_sent"),
    path("signup/finish/<str:token>/", views.sign_up_finish, name="signup_finish"),
    path("login/", views.SignInView.as_view(), name="login"),
    path("logout/", views.SignOutView.as_view(), name="logout"),
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("password-reset/sent/", views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("password-reset/<uidb64>/<token>/", views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("password-reset/done/", views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("link/", views.account_link, name="link"),
    path("accounts/<uuid:public_id>/", views.account_detail, name="account"),
    path("accounts/<uuid:public_id>/paperless/", views.account_paperless, name="paperless"),
    path("accounts/<uuid:public_id>/notifications/", preferences.notifications, name="notifications"),
    path("bills/<uuid:public_id>/", views.bill_detail, name="bill"),
    path("bills/<uuid:public_id>/pdf/", views.bill_pdf, name="bill_pdf"),
    path("cases/<str:number>/", views.termination_case, name="termination_case"),
    path("cases/<str:number>/request/", views.termination_request, name="termination_request"),
    path("cases/<str:number>/notices/<int:notice_id>/pdf/", views.termination_notice_pdf,
         name="termination_notice_pdf"),
    path("cases/<str:number>/determination/pdf/", views.termination_determination_pdf,
         name="termination_determination_pdf"),
    path("tester/", views.tester_home, name="tester_home"),
    path("tester/submit/", views.tester_submit, name="tester_submit"),
    path("tester/tests/<int:test_id>/", views.tester_test, name="tester_test"),
]
