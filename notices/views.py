"""Twilio's callbacks: each reply to our texts (STOP, HELP, START) and each message's delivery status, both
refused unless signed by Twilio (its request-signature check), and off (404) without ``TWILIO_AUTH_TOKEN``."""

from xml.sax.saxutils import escape

from django.http import HttpResponse, HttpResponseForbidden
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ordinance.selectors import utility_required

from .sms import signature_valid
from .texts import text_reply, text_undelivered
from .webhooks import only_when, text_webhooks_on

UNDELIVERED = {"failed", "undelivered"}


@csrf_exempt
@require_POST
@only_when(text_webhooks_on, "TWILIO_AUTH_TOKEN")
def text_inbound(request):
    if not signature_valid(request):
        return HttpResponseForbidden("not signed by the text message provider")
    answer = text_reply(number=request.POST.get("From", ""), body=request.POST.get("Body", ""),
                        utility=utility_required())
    twiml = f"<Response><Message>{escape(answer)}</Message></Response>" if answer else "<Response/>"
    return HttpResponse('<?xml version="1.0" encoding="UTF-8"?>' + twiml, content_type="text/xml")


@csrf_exempt
@require_POST
@only_when(text_webhooks_on, "TWILIO_AUTH_TOKEN")
def text_status(request):
    if not signature_valid(request):
        return HttpResponseForbidden("not signed by the text message provider")
    if request.POST.get("MessageStatus") in UNDELIVERED:
        text_undelivered(number=request.POST.get("To", ""), error=request.POST.get("ErrorCode", "") or "no reason")
    return HttpResponse(status=204)
