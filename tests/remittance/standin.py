"""A local stand-in for the Stripe endpoints the ``stripe`` library calls, and for Stripe's hosted checkout page.

The real client (``stripe.StripeClient``) is pointed at it with ``STRIPE_API_BASE``: it creates checkout sessions
(``POST /v1/checkout/sessions``, form-encoded, the secret key as a bearer token, one session per idempotency key)
and serves each session's page (``/checkout/<id>``) with a Pay and a Cancel button. Paying completes the session
and sends ``checkout.session.completed`` to the webhook, signed the way the library checks signatures
(``stripe.WebhookSignature``, the ``t=…,v1=…`` header), then sends the browser to the session's success URL.
Tests make any other event with ``event`` and sign it with ``signed`` (with the wrong secret for a forgery).
"""

import html
import itertools
import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import stripe

SECRET_KEY = "sk_test_standin"
WEBHOOK_SECRET = "whsec_standin"


class StripeStandIn:
    def __init__(self):
        self.sessions: dict[str, dict] = {}
        self.by_key: dict[str, str] = {}
        self.requests: list[tuple[str, str, dict]] = []  # (method, path, form) as received
        self.webhook_url = ""  # where Pay sends its event (a live server's); blank: nowhere
        self.delivered: list[tuple[int, str]] = []
        self.payouts: list[dict] = []  # each with its balance transactions under "transactions"
        self._numbers = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()

    # --- what Stripe would send -------------------------------------------------------------------------

    def event(self, kind: str, obj: dict, *, created: int | None = None) -> str:
        return json.dumps({"id": f"evt_test_{next(self._numbers)}", "object": "event", "type": kind,
                           "api_version": "2025-01-01", "livemode": False,
                           "created": created if created is not None else int(time.time()),
                           "data": {"object": obj}})

    @staticmethod
    def signed(payload: str, *, secret: str = WEBHOOK_SECRET, timestamp: int | None = None) -> str:
        return stripe.WebhookSignature.generate_signature_header(payload, secret, timestamp=timestamp)

    def complete(self, session_id: str, *, created: int | None = None) -> str:
        """The customer paid: the session is complete; its event (not yet sent)."""
        session = self.sessions[session_id]
        session.update(status="complete", payment_status="paid",
                       payment_intent=session["payment_intent"] or f"pi_test_{next(self._numbers)}")
        return self.event("checkout.session.completed", dict(session), created=created)

    def refund(self, session_id: str, *, amount_cents: int | None = None) -> str:
        session = self.sessions[session_id]
        total = session["amount_total"]
        return self.event("charge.refunded", {"id": f"ch_test_{next(self._numbers)}", "object": "charge",
                                              "payment_intent": session["payment_intent"], "amount": total,
                                              "metadata": {"reference": session["client_reference_id"]},
                                              "amount_refunded": total if amount_cents is None else amount_cents})

    def dispute(self, session_id: str, *, created: int | None = None) -> str:
        session = self.sessions[session_id]
        return self.event("charge.dispute.created", {"id": f"dp_test_{next(self._numbers)}", "object": "dispute",
                                                     "payment_intent": session["payment_intent"],
                                                     "amount": session["amount_total"]}, created=created)

    def dispute_won(self, session_id: str, *, kind: str = "charge.dispute.closed", created: int | None = None) -> str:
        """The village won the dispute: Stripe's ``charge.dispute.closed`` (status won) or ``funds_reinstated``."""
        session = self.sessions[session_id]
        return self.event(kind, {"id": f"dp_test_{next(self._numbers)}", "object": "dispute", "status": "won",
                                 "payment_intent": session["payment_intent"], "amount": session["amount_total"]},
                          created=created)

    def payout(self, session_ids: list[str], *, arrival: int, fee_cents: int = 30) -> dict:
        """A payout of these paid sessions arriving at ``arrival`` (a timestamp), each charge less its fee."""
        transactions = []
        for session_id in session_ids:
            session = self.sessions[session_id]
            transactions.append({"id": f"txn_{next(self._numbers)}", "object": "balance_transaction",
                                 "type": "charge", "amount": session["amount_total"], "fee": fee_cents,
                                 "net": session["amount_total"] - fee_cents,
                                 "source": {"id": f"ch_{session_id}", "object": "charge",
                                            "payment_intent": session["payment_intent"]}})
        amount = sum(t["net"] for t in transactions)
        payout = {"id": f"po_test_{next(self._numbers)}", "object": "payout", "amount": amount,
                  "arrival_date": arrival, "status": "paid", "transactions": transactions}
        transactions.append({"id": f"txn_{next(self._numbers)}", "object": "balance_transaction", "type": "payout",
                             "amount": -amount, "fee": 0, "net": -amount, "source": payout["id"]})
        self.payouts.append(payout)
        return payout

    def deliver(self, payload: str, header: str) -> int:
        request = urllib.request.Request(self.webhook_url, data=payload.encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Stripe-Signature": header})
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        self.delivered.append((status, payload))
        return status

    # --- the HTTP side ----------------------------------------------------------------------------------

    def _session_create(self, form: dict, key: str) -> dict:
        if key and key in self.by_key:
            return self.sessions[self.by_key[key]]
        number = next(self._numbers)
        session_id = f"cs_test_{number}"
        session = {"id": session_id, "object": "checkout.session", "url": f"{self.url}/checkout/{session_id}",
                   "status": "open", "payment_status": "unpaid", "payment_intent": None,
                   "amount_total": int(form["line_items[0][price_data][unit_amount]"]),
                   "currency": "usd", "client_reference_id": form.get("client_reference_id", ""),
                   "customer_email": form.get("customer_email"), "success_url": form["success_url"],
                   "cancel_url": form["cancel_url"], "payment_method_types": ["card", "us_bank_account"],
                   "customer_details": {"email": form.get("customer_email")},
                   "description": form.get("line_items[0][price_data][product_data][name]", "")}
        self.sessions[session_id] = session
        if key:
            self.by_key[key] = session_id
        return session

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, body: str, content_type: str = "application/json", headers=()):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Request-Id", "req_standin")
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _form(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

            def do_POST(self):
                form = self._form()
                standin.requests.append(("POST", self.path, form))
                if self.path == "/v1/checkout/sessions":
                    if self.headers.get("Authorization") != f"Bearer {SECRET_KEY}":
                        self._send(401, json.dumps({"error": {"type": "invalid_request_error",
                                                              "message": "Invalid API Key provided"}}))
                        return
                    session = standin._session_create(form, self.headers.get("Idempotency-Key", ""))
                    self._send(200, json.dumps(session))
                    return
                if self.path.startswith("/checkout/") and self.path.endswith("/pay"):
                    session_id = self.path.split("/")[2]
                    payload = standin.complete(session_id)
                    if standin.webhook_url:
                        standin.deliver(payload, standin.signed(payload))
                    self._send(303, "", "text/plain", headers=[("Location", standin.sessions[session_id]
                                                                ["success_url"])])
                    return
                self._send(404, json.dumps({"error": {"message": "unknown endpoint"}}))

            def _list(self, data: list) -> None:
                self._send(200, json.dumps({"object": "list", "data": data, "has_more": False,
                                            "url": self.path.split("?")[0]}))

            def do_GET(self):
                standin.requests.append(("GET", self.path, {}))
                path, _, query = self.path.partition("?")
                params = {k: v[0] for k, v in parse_qs(query).items()}
                if path == "/v1/payouts":
                    low, high = int(params["arrival_date[gte]"]), int(params["arrival_date[lt]"])
                    self._list([{k: v for k, v in p.items() if k != "transactions"} for p in standin.payouts
                                if low <= p["arrival_date"] < high])
                    return
                if path == "/v1/balance_transactions":
                    payout = next(p for p in standin.payouts if p["id"] == params["payout"])
                    self._list(payout["transactions"])
                    return
                if self.path.startswith("/checkout/"):
                    session = standin.sessions.get(self.path.split("/")[2])
                    if session is None:
                        self._send(404, "no such checkout", "text/plain")
                        return
                    amount = f"${session['amount_total'] / 100:,.2f}"
                    page = (f"<!DOCTYPE html><html lang='en'><head><title>Checkout</title></head><body><main>"
                            f"<h1>Pay {amount}</h1><p>{html.escape(session['description'])}</p>"
                            f"<form method='post' action='/checkout/{session['id']}/pay'>"
                            f"<button type='submit'>Pay {amount}</button></form>"
                            f"<p><a href='{html.escape(session['cancel_url'])}'>Cancel</a></p></main></body></html>")
                    self._send(200, page, "text/html")
                    return
                self._send(404, json.dumps({"error": {"message": "unknown endpoint"}}))

        return Handler
