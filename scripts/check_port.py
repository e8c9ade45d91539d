"""Exit 1 with a clear message when the port the app would serve on
(``PORT``, read by config.py; default 5000) is taken at 127.0.0.1, 2 when
``PORT`` is no port, else 0. ``bash scripts/bootstrap.sh run`` calls it
before installing anything, so a taken port fails in a second instead of
after the whole install. Runs on the system Python (config.py needs only
the standard library).

Usage: python3 scripts/check_port.py
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import config  # noqa: E402  (the project is run from its tree, not installed)


def main() -> int:
    try:
        port = config.port()
    except config.ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # as the server binds (a socket left in TIME_WAIT is no conflict)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            probe.listen(1)
        except OSError as error:
            other = 5001 if port == 5000 else 5000
            print(
                f"error: port {port} on 127.0.0.1 is taken ({error.strerror}). "
                "Stop what serves there, or choose another port: "
                f"PORT={other} bash scripts/bootstrap.sh run",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
