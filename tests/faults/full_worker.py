"""The embedded worker process with a full-database switch on its engine:
``python -m tests.faults.full_worker FLAG CONFIG``, spawned by the product's
supervisor in place of ``python app.py --worker CONFIG``
(``WorkerProcess.command``, tests/faults/test_storage_full.py). Everything
else is the product's worker process (``worker_process.run``)."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

from tests.faults.sqlite_full import FullSwitch


def worker_app(switch: FullSwitch, settings: dict[str, Any]):
    """The worker process's app, with the switch on its database engine."""
    from app import create_app

    app = create_app(settings)
    switch.install(app.extensions["storage"].get().engine)
    return app


def main(flag: str, config_path: str) -> None:
    from pipeline.worker import worker_process

    worker_process.run(partial(worker_app, FullSwitch(Path(flag))), config_path)


if __name__ == "__main__":
    main(*sys.argv[1:])
