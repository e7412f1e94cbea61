"""Text messages through one interface: ``sms_send(to, body)`` with the backend ``settings.SMS_BACKEND`` names.

* ``notices.sms.ConsoleBackend`` (development): prints each message.
* ``notices.sms.FileBackend``: appends each message as a line of JSON to ``settings.SMS_FILE_PATH``.
* ``notices.sms.LocmemBackend`` (the tests): keeps them in ``notices.sms.outbox``.
* ``notices.sms.TwilioBackend`` (production): Twilio's library, from ``TWILIO_FROM`` with ``TWILIO_ACCOUNT_SID``
  and ``TWILIO_AUTH_TOKEN``; Twilio calls back ``/notices/text/status/`` with each message's status, and
  ``/notices/text/inbound/`` with each reply (STOP, HELP, START), both checked against Twilio's signature.
"""

import json
import re
import sys
import uuid

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

outbox: list[dict] = []

NUMBER = re.compile(r"^\+1[2-9]\d{9}$")


def phone_number(value: str) -> str:
    """A US number as +1 and ten digits, from what a customer types ("(516) 555-0100", "516.555.0100"); "" when it
    is not one."""
    digits = re.sub(r"\D", "", value or "")
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    number = f"+1{digits}" if len(digits) == 10 else ""
    return number if NUMBER.match(number) else ""


class ConsoleBackend:
    def send(self, to: str, body: str) -> str:
        sys.stdout.write(f"[text to {to}] {body}\n")
        return f"console-{uuid.uuid4().hex[:12]}"


class LocmemBackend:
    def send(self, to: str, body: str) -> str:
        message_id = f"locmem-{len(outbox) + 1}"
        outbox.append({"to": to, "body": body, "id": message_id})
        return message_id


class FileBackend:
    def send(self, to: str, body: str) -> str:
        message_id = f"file-{uuid.uuid4().hex[:12]}"
        with open(settings.SMS_FILE_PATH, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"to": to, "body": body, "id": message_id, "at": timezone.now().isoformat()}) + "\n")
        return message_id


class TwilioBackend:
    def send(self, to: str, body: str) -> str:
        from twilio.rest import Client

        client = Client(settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN)
        callback = settings.SITE_URL.rstrip("/") + "/notices/text/status/"
        message = client.messages.create(to=to, from_=settings.TWILIO_FROM, body=body, status_callback=callback)
        return message.sid


def sms_send(to: str, body: str) -> str:
    """Send one text message; returns the provider's id for it. Raises what the provider raises."""
    return import_string(settings.SMS_BACKEND)().send(to, body)


def signature_valid(request) -> bool:
    """Whether a callback carries Twilio's signature of this URL and its parameters, by Twilio's own check."""
    from twilio.request_validator import RequestValidator

    url = settings.SITE_URL.rstrip("/") + request.path
    return RequestValidator(settings.TWILIO_AUTH_TOKEN).validate(
        url, request.POST.dict(), request.headers.get("X-Twilio-Signature", ""))
