"""The termination office in the admin: the clerk's and the hearing officer's pages.

A case is never edited through a change form. Its page is read-only — the grounds with the notices and the
bills, the hearing, the determination, the appeal, the work orders, the timeline and the status history —
and each step of the due process is a button leading to a small page of its own whose form calls one
service of ``termination.services.cases``. A refusal comes back on that page as form errors, each under
the field it names (or above the form when it is about the case as a whole), never as a server error.
The buttons shown follow the case's status and the user's permissions: the hearing file, the
determination and the Commission's decision need ``termination.determine_terminationcase``; issuing a shut-off
order needs ``termination.order_terminationcase``, recording it carried out and restoring service
``termination.carry_out_terminationcase`` (the crew and the supervisor); the other steps
``termination.change_terminationcase``. Each form's date is the day the step happened (default today).

Beside the case pages: opening a case ("Add"), the delinquency list with "Open cases for the selected
accounts", the case board (active cases by stage with each next step), a printable timeline, the notice,
determination and work-order papers, and the log of emergency interruptions (never a case).
"""

from . import cases, interruptions  # noqa: F401 - each registers its admin pages
