"""The demo's sample bank files, downloaded from the pages that read them (``demo.bank_files``): on a demo or training
site only, to staff who may read that file."""

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse

from core.admin import admin_page_register
from core.clock import today
from ordinance.selectors import installed_utility

from .bank_files import SAMPLES, sample_bai2, sample_lockbox, sample_returns

# Who may download each sample: whoever may read that file from its page.
READS = {"lockbox": "billing.add_payment", "bai2": "remittance.add_bankdeposit",
         "returns": "remittance.change_achfile"}


def sample_view(request, kind: str):
    utility = installed_utility()
    if kind not in SAMPLES or utility is None or not utility.is_demo_site:
        raise Http404("sample files are a demo site's")
    if not request.user.has_perm(READS[kind]):
        raise PermissionDenied
    text = {"lockbox": lambda: sample_lockbox(as_of=today()), "bai2": lambda: sample_bai2(as_of=today()),
            "returns": sample_returns}[kind]()
    if not text:
        raise Http404("the demo made no such file")
    name, content_type = SAMPLES[kind]
    response = HttpResponse(text, content_type=f"{content_type}; charset=us-ascii")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


admin_page_register(admin.site, "demo/samples/<str:kind>/", sample_view, "demo_sample")
