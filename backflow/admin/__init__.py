"""Backflow and cross-connection compliance in the admin: the clerk's and the Backflow inspector's pages.

Nothing here is edited through a change form of its fields. An assessment, a device, a test and a notice
each have a read-only page, and each thing done to them is a button leading to a small form that calls one
service of ``backflow.services.compliance``; a refusal comes back on that form under the field it names
(or above the form when it is about the record as a whole), never as a server error.

* Assessments: "Assess premises" (the list's add page) records the conditions found at an account's
  premises, from the installed preset's device rule, and shows the answer: required or not, the device
  types allowed, the citation and the trace of the condition that decided.
* Devices: "Register device"; a device's page shows its tests and notices, when its next test is due and
  why, with "Record test" and "Serve notice".
* Testers: add and change (a lapsed certification is marked on the list).
* Tests: a test a tester submitted online waits for "Accept test" or "Reject test" (with a note); only an
  accepted test moves the device's next test due.
* Compliance notices: "Serve notice"; a notice's page has its PDF, "Shorten window" (where the preset lets
  the Board or Superintendent shorten it), "Complied / paid", and the account's "Fine accrued" page, whose
  "Charge to the next bill" charges the days not yet charged, once.
* Reverse-flow follow-ups: opened when a meter reports reverse flow, each with what the chapter asks (test the
  devices, or survey and assess); "Followed up" records the day and what was found.
* The noncompliance list, with "Act on noncompliance" per premises (a termination case on violation
  grounds, or Old Westbury's health hazard logged as an emergency interruption), and the reports page:
  tests due this month and overdue, devices by hazard, the annual summary as CSV and PDF.

Who may press what: adding a record needs the model's add permission; accepting or rejecting a test,
shortening a window and recording compliance need the change permission of the test or the notice;
charging a fine needs ``backflow.charge_compliancenotice``; acting on noncompliance also needs the
termination permission of what it opens (``termination.add_terminationcase``, or
``termination.add_interruption`` where the preset logs a health hazard).
"""

from . import assessments, devices, notices, reverse_flows, testers  # noqa: F401 - each registers its admin pages
