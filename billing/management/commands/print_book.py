"""The mail-house print file: one book's bills of one bill date, in account order, as one PDF.

The bills are laid out fresh (a stored bill PDF and a fresh layout of the same bill print the same
page); laying them out in batches into one document is faster than reading and merging stored files.
Accounts that chose paperless bills are emailed instead, so their bills are left out — and counted —
unless ``--include-paperless`` asks for them; a paperless account with no address to email (no owner's
address on file, nobody linked online) is printed.
"""

import argparse
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from accounts.selectors import emailed_bills
from billing.selectors import book_bills
from billing.services.bill_pdfs import bills_pdf_render
from core.commands import as_of_argument, parse_as_of


class Command(BaseCommand):
    help = "Write a book's bills for one bill date as one PDF in account order (for the mail house)."

    def add_arguments(self, parser):
        parser.add_argument("book", type=int, help="book number (1-10)")
        as_of_argument(parser)
        parser.add_argument("--out", required=True, metavar="FILE.pdf", help="where to write the PDF")
        paperless = parser.add_mutually_exclusive_group()
        paperless.add_argument("--include-paperless", action="store_true",
                               help="also print the bills of accounts that chose paperless bills (left out by "
                                    "default: they are emailed)")
        # Leaving them out is the default now; the flag stays so scripts written for it keep working.
        paperless.add_argument("--exclude-paperless", action="store_true", help=argparse.SUPPRESS)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, book, out, **options):
        bill_date = parse_as_of(options["date"])
        if not 1 <= book <= 10:
            raise CommandError(f"book: {book} is not a book number; books are 1 to 10")
        bills = book_bills(book=book, bill_date=bill_date)
        include_paperless = options["include_paperless"]
        paperless = 0
        if not include_paperless:
            emailed = emailed_bills("account__")
            paperless = bills.filter(emailed).count()
            bills = bills.exclude(emailed)
        bills = list(bills.only("id"))
        if not bills and paperless:
            raise CommandError(f"every bill of book {book} dated {bill_date} ({paperless}) is for a paperless "
                               "account, which is emailed; nothing to print (--include-paperless prints them)")
        if not bills:
            raise CommandError(f"book {book} has no bills dated {bill_date}; check the book and the bill date "
                               "(bills are dated the 1st of the month)")
        quiet = options["no_progress"] or options["verbosity"] < 1
        with tqdm(total=len(bills), unit=" bills", disable=quiet, desc=f"Book {book} {bill_date}") as bar:
            data = bills_pdf_render(bills=bills, title=f"Book {book} water bills dated {bill_date}",
                                    progress=bar.update)
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.stdout.write(f"Wrote {len(bills)} bills of book {book} dated {bill_date} to {path} "
                          f"({len(data) / 1024:,.0f} KiB)")
        if not include_paperless:
            self.stdout.write(f"Left out {paperless} bill{'' if paperless == 1 else 's'} of paperless accounts, "
                              "which are emailed (--include-paperless prints them too)")
