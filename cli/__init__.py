"""The command line: ``flask --app app validate|evaluate|convert|judge-check|report|compare``
(docs/cli.md).

Commands go through the same run service as the web app and fail with one
clear line on stderr and a documented exit code, never a traceback.
"""

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


def init_app(app) -> None:
    for command in COMMANDS:
        app.cli.add_command(command)
