"""gunicorn settings for serving the web app (docs/team.md).

    gunicorn -c gunicorn.conf.py --bind 0.0.0.0:8000 app:app

Workers: ``-w N`` or ``WEB_CONCURRENCY`` (gunicorn's own variable); each
serves pages with ``threads`` threads, because most of a page's time is
spent waiting on the database. Evaluation runs in Celery workers in team
mode, never in these processes. Command-line flags override what is here.
"""

import tempfile

bind = "127.0.0.1:8000"  # --bind for other interfaces (behind a proxy)
worker_class = "gthread"
threads = 4
timeout = 60  # a request this slow is a bug: results stream, pages aggregate in SQL
graceful_timeout = 30
keepalive = 5
accesslog = "-"  # stdout; LOG_FORMAT=json formats the app's own logs
preload_app = False  # each worker builds its own app (its own database pool)
forwarded_allow_ips = "127.0.0.1"  # with TRUSTED_PROXIES for X-Forwarded-For

# /metrics sums the counters of every worker through files in this folder
# (prometheus_client's multi-process mode): a fresh folder per start. The
# master sets it before forking, so every worker has it before it imports
# prometheus_client; `--env PROMETHEUS_MULTIPROC_DIR=...` chooses another.
raw_env = [
    f"PROMETHEUS_MULTIPROC_DIR={tempfile.mkdtemp(prefix='personasteer-metrics-')}"
]


def child_exit(server, worker):
    """A dead worker's live gauges leave the sums (its counters stay)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def _masked_logger():
    """gunicorn's logger with every share or manage token in an access-log
    line cut to its first 4 characters: a log is read by more people than
    the links were sent to, and a manage token deletes a run."""
    import re

    from gunicorn.glogging import Logger

    token = re.compile(r"([A-Za-z0-9_-]{4})[A-Za-z0-9_-]{18,}")

    class MaskedLogger(Logger):
        def atoms(self, resp, req, environ, request_time):
            found = super().atoms(resp, req, environ, request_time)
            for key in ("r", "U", "q", "f"):  # request line, path, query, referer
                if isinstance(found.get(key), str):
                    found[key] = token.sub(r"\1…", found[key])
            return found

    return MaskedLogger


logger_class = _masked_logger()
