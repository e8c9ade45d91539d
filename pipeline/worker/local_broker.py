"""The embedded mode's broker: kombu's filesystem transport in the instance
folder, one file per message.

Why this transport (kombu's SQLAlchemy transport was the other candidate):
the chunk table is already the source of truth, so the broker only hands
tasks from the process that claims a chunk to the worker process that runs
it. A folder does that with no schema beside Alembic's, no query polling
the SQLite file the run's rows are written to (SQLite has one writer; the
SQLAlchemy transport writes a row per delivery and keeps it), and no
residue: a delivered message is a deleted file. Both transports poll; a
``listdir`` of a near-empty folder every ``POLL_S`` costs microseconds.

A worker that starts takes back what was in flight (its first sweep,
``pipeline/worker/worker_process.begin``); messages left in the folder by the one
before are delivered too, and a chunk's task that finds it taken or done
does nothing, so a restart runs no chunk twice.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from time import monotonic
from typing import Any, cast

from kombu.transport import filesystem
from kombu.utils.json import dumps

TRANSPORT = "pipeline.worker.local_broker:Transport"
POLL_S = 0.02  # a hand-off waits at most this long (the first call: ≤ 0.3 s)
STAGING = ".staging"  # not a message name: the transport skips it
# kombu's ``dumps`` has no annotations: a message body as JSON text
_dumps = cast(Callable[[Any], str], dumps)


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]  # kombu's own
        """Write the message aside, then rename it into the queue: kombu
        writes in place, and a reader polling meanwhile could take a file
        still empty (the worker would lose that task)."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        staged = Path(self.data_folder_out, STAGING, name)
        staged.write_bytes(_dumps(payload).encode("utf-8"))
        os.replace(staged, Path(self.data_folder_out, name))


class Transport(filesystem.Transport):
    Channel = Channel


def settings(folder: str | Path) -> dict[str, Any]:
    """Celery settings for a broker in ``folder`` (created here)."""
    folder = Path(folder)
    (folder / STAGING).mkdir(parents=True, exist_ok=True)
    (folder / "control").mkdir(exist_ok=True)
    return {
        "broker_url": "filesystem://localhost/",  # a host: kombu warns without
        "broker_transport": TRANSPORT,
        "broker_transport_options": {
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "control_folder": str(folder / "control"),
            "polling_interval": POLL_S,
        },
        # nothing to broadcast to: one worker per instance (worker_process.py)
        "worker_enable_remote_control": False,
    }
