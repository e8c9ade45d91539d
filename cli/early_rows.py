"""The rows of ``flask evaluate``'s results document, encoded while the
worker finalizes the run.

A run's rows are final once its finalize is claimed (every chunk done or
given up; finalize only reads them), but its results document begins with
what finalize makes. The command waited for ``done``, then read and encoded
every row: 0.6-0.9 s for 40,000 rows here, after the 1.2-1.6 s of the
finalize. Now it encodes them into a temporary file as soon as they are
final, on the second core while the worker aggregates, and writes the
document's opening before them once the run is done. The bytes are the
same either way (``tests/test_early_rows.py``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

READ_SIZE = 1 << 16


class EarlyRows:
    """Call :meth:`poll` at each look at the run's progress; then
    :meth:`document` gives the whole results document."""

    def __init__(self, service, run_id: str, folder: Path | None = None):
        self.service = service
        self.run_id = run_id
        self.folder = folder  # where the temporary file goes (the --out's)
        self.file: IO[str] | None = None  # the rows part, once encoded
        self._given_up = False

    def poll(self, done: int, total: int) -> None:
        """Encode the rows, once, when they are final. (``done`` reaches
        ``total`` before the finalize is claimed: only then is it asked.)"""
        if self.file is not None or self._given_up or done < total:
            return
        if not self.service.storage.rows_final(self.run_id):
            return
        self.file = self._encoded()
        self._given_up = self.file is None

    def _encoded(self) -> IO[str] | None:
        """The rows in an anonymous temporary file, which leaves nothing
        behind whatever happens to the command; None when it cannot be
        written (no such folder, a full disk): the rows are then streamed at
        the end, as before, and the end reports what is wrong."""
        file = None
        try:
            # kept open until :meth:`document` has read it
            file = tempfile.TemporaryFile("w+", encoding="utf-8", dir=self.folder)  # noqa: SIM115
            file.writelines(self.service.rows_text(self.run_id))
            file.seek(0)
        except OSError:
            if file is not None:
                file.close()
            return None
        return file

    def document(self, run, indent: int | None = None) -> Iterator[str]:
        """The results document of the ended ``run``, in pieces."""
        if self.file is None:
            yield from self.service.results_chunks(run, indent)
            return
        with self.file:
            yield self.service.results_opening(run, indent)
            while chunk := self.file.read(READ_SIZE):
                yield chunk
