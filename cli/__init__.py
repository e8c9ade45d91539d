"""The command line: ``flask --app app validate|evaluate|convert|judge-check|report|compare``
(docs/cli.md).

Commands go through the same run service as the web app and fail with one
clear line on stderr and a documented exit code, never a traceback.
"""

import atexit
import functools
import gc

from cli.commands import evaluate_command, validate_command
from cli.convert import convert_command
from cli.judge import judge_check_command
from cli.reports import compare_command, report_command

COMMANDS = (
    validate_command,
    evaluate_command,
    judge_check_command,
    convert_command,
    report_command,
    compare_command,
)


def _frozen_at_exit(command):
    """A command whose process skips the cyclic garbage collection of its
    last moments: with the app, SQLAlchemy and the worker's supervisor
    loaded, the interpreter's collections at exit took 0.30-0.38 s of CPU
    after a ``flask evaluate`` had written its results (0.09-0.10 s in all
    after its last judge call with ``gc.freeze()``; issue 61 item 8's
    2,000-call run, whose command this was a quarter of). Files are closed by
    the commands, and the standard streams are flushed by the interpreter
    either way."""
    callback = command.callback

    @functools.wraps(callback)
    def run(*args, **kwargs):
        atexit.unregister(gc.freeze)  # once, however many commands ran
        atexit.register(gc.freeze)
        return callback(*args, **kwargs)

    command.callback = run
    return command


for _command in COMMANDS:  # once per process, at import
    _frozen_at_exit(_command)


def init_app(app) -> None:
    for command in COMMANDS:
        app.cli.add_command(command)
