"""The command line: ``flask --app app validate|evaluate|convert|judge-check`` (see the README).

Commands go through the same run service as the web app and fail with one
clear line on stderr and a documented exit code, never a traceback.
"""

from cli.commands import evaluate_command, validate_command
from cli.convert import convert_command
from cli.judge import judge_check_command


def init_app(app) -> None:
    app.cli.add_command(validate_command)
    app.cli.add_command(evaluate_command)
    app.cli.add_command(judge_check_command)
    app.cli.add_command(convert_command)
