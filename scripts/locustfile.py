"""The pages ``scripts/bench.py all`` times under load, for Locust (headless, against 127.0.0.1 only).

    BENCH_PORTAL_USERS='[{"session": "...", "account": "<public id>", "bill": "<public id>"}, ...]' \\
        .venv/bin/locust -f scripts/locustfile.py PortalUser --headless -u 20 -r 20 -t 30s \\
        --host http://127.0.0.1:8001 --csv /tmp/portal

``PortalUser`` reads a customer's three portal pages (home, account, bill) one after another without a
pause, each client signed in as a customer of its own with an account of its own (the next one of
``BENCH_PORTAL_USERS`` as it starts); ``StaffUser`` reads the statement API with a token and the admin
account page with a session.
bench.py makes the logins and passes them in the environment: signing in through the form on every
start would time argon2 rather than the pages. Every request says it came through HTTPS
(``X-Forwarded-Proto``), as it would behind the site's proxy, so production settings serve it instead of
redirecting; the session cookie goes in the header because a Secure cookie is not sent over plain HTTP.
The users are Locust's ``FastHttpUser`` (geventhttpclient): Locust shares the server's two cores, and its
plain ``HttpUser`` (requests) spends about twice the processor time on each request, time the pages then lack.
"""

import itertools
import json
import os

from locust import FastHttpUser, constant, task

HTTPS = {"X-Forwarded-Proto": "https"}


def _session_headers(variable: str) -> dict:
    return {**HTTPS, "Cookie": f"sessionid={os.environ[variable]}"}


class PortalUser(FastHttpUser):
    wait_time = constant(0)
    started = itertools.count()

    def on_start(self):
        logins = json.loads(os.environ["BENCH_PORTAL_USERS"])
        login = logins[next(PortalUser.started) % len(logins)]
        self.headers = {**HTTPS, "Cookie": f"sessionid={login['session']}"}
        self.account, self.bill = login["account"], login["bill"]

    @task
    def pages(self):
        self.client.get("/portal/", headers=self.headers, name="portal home")
        self.client.get(f"/portal/accounts/{self.account}/", headers=self.headers, name="portal account")
        self.client.get(f"/portal/bills/{self.bill}/", headers=self.headers, name="portal bill")


class StaffUser(FastHttpUser):
    wait_time = constant(0)

    def on_start(self):
        self.account_no = os.environ["BENCH_ACCOUNT_NO"]
        self.account_pk = os.environ["BENCH_ACCOUNT_PK"]
        self.api_headers = {**HTTPS, "Authorization": f"Token {os.environ['BENCH_TOKEN']}"}
        self.admin_headers = _session_headers("BENCH_ADMIN_SESSION")

    @task
    def pages(self):
        self.client.get(f"/api/v1/accounts/{self.account_no}/statement/", headers=self.api_headers,
                        name="statement API")
        self.client.get(f"/admin/accounts/account/{self.account_pk}/change/", headers=self.admin_headers,
                        name="admin account page")
