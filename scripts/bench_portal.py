"""The portal piece of scripts/bench.py: gunicorn with production settings, and Locust's clients."""

import csv
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench_celery import log_tail, process_stop, queue_forget
from bench_setup import ADMIN_USERNAME, PORTAL_CLIENTS, PORTAL_USERNAME, ROOT, SCRIPTS, VENV_BIN, Bench, billed_ensure


def piece_portal(bench: Bench):
    billed_ensure(bench)
    logins = portal_logins()
    static = bench.scratch / "static"
    settings_dir = bench.scratch / "settings"
    settings_dir.mkdir(exist_ok=True)
    # Production settings, with the collected static files (the manifest the pages need) kept in scratch.
    (settings_dir / "bench_settings.py").write_text(
        f"from waterbilling.settings import *  # noqa: F403\nSTATIC_ROOT = {str(static)!r}\n")
    env = bench.production_env(SECRET_KEY=os.environ["SECRET_KEY"], DJANGO_SETTINGS_MODULE="bench_settings",
                               PYTHONPATH=f"{settings_dir}{os.pathsep}{ROOT}")
    bench.manage("collectstatic", "--noinput", "-v", "0", env=env)
    port = port_free()
    host = f"http://127.0.0.1:{port}"
    log_path = bench.scratch / "gunicorn.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [str(VENV_BIN / "gunicorn"), "waterbilling.wsgi", "-w", "2", "-b", f"127.0.0.1:{port}"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_served(host, server, log_path)
        check_pages(host, logins)
        locust_env = {**os.environ, **{f"BENCH_{k.upper()}": json.dumps(v) if isinstance(v, list) else str(v)
                                       for k, v in logins.items()}}
        seconds = bench.args.portal_seconds

        one = locust_run(bench, host, locust_env, "PortalUser", users=1, seconds=seconds, name="one")
        for work, name in (("portal home", "portal home"), ("portal account", "portal account"),
                           ("portal bill", "portal bill")):
            stats = one[name]
            yield bench.row(work, f"p50 {stats['50%']:.0f} ms, p95 {stats['95%']:.0f} ms "
                            f"({stats['Request Count']:,.0f} requests, {stats['Failure Count']:.0f} errors)",
                            stats["50%"], "ms", bench.met(stats["50%"] < 20 and stats["Failure Count"] == 0))

        many = locust_run(bench, host, locust_env, "PortalUser", users=PORTAL_CLIENTS, seconds=seconds, name="twenty")
        total = many["Aggregated"]
        rate, p95, errors = total["Requests/s"], total["95%"], total["Failure Count"]
        yield bench.row("portal 20 clients", f"{rate:,.0f} requests/s, p50 {total['50%']:.0f} ms, p95 {p95:,.0f} ms, "
                        f"{errors:.0f} errors ({total['Request Count']:,.0f} requests; each client its own account)", rate, "requests/s",
                        bench.met(rate >= 150 and p95 < 200 and errors == 0), p95_ms=p95, errors=errors)

        staff = locust_run(bench, host, locust_env, "StaffUser", users=1, seconds=seconds, name="staff")
        for work, limit in (("statement API", 100), ("admin account page", 200)):
            stats = staff[work]
            yield bench.row(work, f"p95 {stats['95%']:.0f} ms, p50 {stats['50%']:.0f} ms "
                            f"({stats['Request Count']:,.0f} requests, {stats['Failure Count']:.0f} errors; "
                            f"account {logins['account_no']})",
                            stats["95%"], "ms", bench.met(stats["95%"] < limit and stats["Failure Count"] == 0))
    finally:
        process_stop(server)
        queue_forget(bench)


def portal_logins(clients: int = PORTAL_CLIENTS) -> dict:
    """``clients`` portal customers, each linked to an account of its own — the accounts with the longest
    histories, so every client reads a full page and no two share an account (one account read twenty
    times over would sit in every cache between the page and the disk) — a superuser with an API token, and
    a signed-in session for each (made here, so Locust times pages rather than argon2). The staff pages
    read the busiest account."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.db.models import Count
    from rest_framework.authtoken.models import Token

    from accounts.models import Account, PortalLink
    from billing.models import Bill, LedgerEntry

    users = get_user_model()

    def session(user) -> str:
        store = SessionStore()
        store[SESSION_KEY] = str(user.pk)
        store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.save()
        return store.session_key

    busiest = list(LedgerEntry.objects.values("account_id").annotate(n=Count("id")).order_by("-n", "account_id")
                   .values_list("account_id", flat=True)[:clients])
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=busiest)}
    portal = []
    for number, account_id in enumerate(busiest, start=1):
        account = accounts[account_id]
        bill = (Bill.objects.filter(account=account).exclude(status=Bill.Status.VOID)
                .order_by("-bill_date", "-pk").first())
        if bill is None:
            raise RuntimeError(f"account {account.account_no} has no bill to show")
        username = PORTAL_USERNAME.replace("@", f"-{number}@")
        customer = users.objects.filter(username=username).first() or users.objects.create_user(
            username=username, email=username, password=secrets.token_urlsafe(16))
        PortalLink.objects.filter(user=customer).exclude(account=account).delete()
        PortalLink.objects.get_or_create(user=customer, account=account)
        portal.append({"session": session(customer), "account": str(account.public_id),
                       "bill": str(bill.public_id)})
    if len(portal) < clients:
        raise RuntimeError(f"{clients} portal clients need {clients} accounts with bills; the village has "
                           f"{len(portal)}")
    staff_account = accounts[busiest[0]]
    admin = users.objects.filter(username=ADMIN_USERNAME).first() or users.objects.create_superuser(
        ADMIN_USERNAME, email="bench-admin@example.org", password=secrets.token_urlsafe(16))
    token, _ = Token.objects.get_or_create(user=admin)
    return {"portal_users": portal, "admin_session": session(admin), "token": token.key,
            "account_no": staff_account.account_no, "account_pk": staff_account.pk}


def port_free() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_status(url: str, headers: dict) -> int:
    request = urllib.request.Request(url, headers={"X-Forwarded-Proto": "https", **headers})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - 127.0.0.1 only
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def wait_served(host: str, server: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {log_tail(log_path)}")
        try:
            if http_status(f"{host}/portal/login/", {}) == 200:
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"gunicorn did not serve the login page in 60 s: {log_tail(log_path)}")
        time.sleep(0.5)


def check_pages(host: str, logins: dict) -> None:
    """Each page answers 200 once before it is timed (a login that did not take would time a redirect)."""
    admin = {"Cookie": f"sessionid={logins['admin_session']}"}
    pages = [(f"/api/v1/accounts/{logins['account_no']}/statement/", {"Authorization": f"Token {logins['token']}"}),
             (f"/admin/accounts/account/{logins['account_pk']}/change/", admin)]
    for user in logins["portal_users"]:
        portal = {"Cookie": f"sessionid={user['session']}"}
        pages += [(f"/portal/accounts/{user['account']}/", portal), (f"/portal/bills/{user['bill']}/", portal),
                  ("/portal/", portal)]
    for path, headers in pages:
        status = http_status(host + path, headers)
        if status != 200:
            raise RuntimeError(f"{path} answered {status}, not 200")


def locust_run(bench: Bench, host: str, env: dict, user_class: str, *, users: int, seconds: int, name: str) -> dict:
    """Run Locust headless; returns its stats rows by name (numbers as floats)."""
    prefix = bench.scratch / f"locust_{name}"
    result = subprocess.run(
        [str(VENV_BIN / "locust"), "-f", str(SCRIPTS / "locustfile.py"), user_class, "--headless", "-u", str(users),
         "-r", str(users), "-t", f"{seconds}s", "--host", host, "--csv", str(prefix), "--only-summary",
         "--stop-timeout", "5", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=seconds + 120)
    stats_path = Path(f"{prefix}_stats.csv")
    if not stats_path.exists():
        tail = (result.stderr or result.stdout).strip().splitlines()[-2:]
        raise RuntimeError(f"locust wrote no stats (exit {result.returncode}): {' / '.join(tail)}")
    stats = {}
    with stats_path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            stats[row["Name"]] = {k: as_number(v) for k, v in row.items() if k not in ("Type", "Name")}
    return stats


def as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")
