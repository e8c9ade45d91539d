"""What a run is asked with: the request (suites, judge, samples, options,
protocol) and the checks that turn it into a run's settings before anything
is stored: the protocol read with its problems, the suites chosen, every
suite option validated (a 400 naming the option, never a failed worker)."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Any

import dataset
from config import DEFAULTS
from core.problems import Problem, Rejected
from evaluator import JudgeConfig
from judge_client.config import run_limits
from metrics import protocols, registry

MAX_RUN_NAME_CHARS = 255  # the width of runs.name (store/models.py)


@dataclass
class RunRequest:
    suites: list[str] | None = None  # None: every suite the file can run
    judge_url: str | None = None  # CLI only: never accepted from the web (SSRF)
    judge_model: str | None = None
    # a judge panel: several models of JUDGE_MODELS, each asked every item
    judge_models: list[str] | None = None
    samples: int = 1
    use_cache: bool = True
    # through the provider's Batch API (about half the price, up to 24 h)
    batch: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # suite options by name
    client: str | None = (
        None  # who submits: their runs share a fair part of the workers
    )
    workspace_id: str | None = None  # the workspace the run joins
    # without one: make a workspace for the run (a browser's first upload;
    # the page hands its manage token to the browser for the next ones)
    new_workspace: bool = False
    name: str | None = None  # shown in the workspace and in comparisons
    # the judge protocol: a built-in name, or a protocol file's text
    protocol: str | None = None
    protocol_text: str | None = None
    # the model family of methods and judges (self-preference): {"methods":
    # {name: family}, "judges": {model: family}}, as sent (checked_families)
    families: dict[str, Any] | None = None


def protocol_of(request: RunRequest) -> protocols.Protocol:
    """The run's protocol; a 400 naming each problem's line and key."""
    try:
        if request.protocol_text is not None:
            return protocols.load(request.protocol_text)
        return protocols.builtin(request.protocol or protocols.DEFAULT)
    except protocols.ProtocolError as error:
        raise Rejected(protocol_problems(error)) from None


def estimate_options(request: RunRequest | None) -> dict[str, Any]:
    """What a file's judge estimate reads of the run asked for: its protocol
    (which modes are asked). Without a request, or with a protocol that has
    problems, the default protocol's: such a run is refused naming them
    (``judge_options``) once the file itself is valid."""
    if request is None:
        return {}
    try:
        return {"protocol": protocol_of(request).stored()}
    except Rejected:
        return {}


def protocol_problems(error: protocols.ProtocolError) -> list[Problem]:
    names = ", ".join(protocols.builtins())
    return [
        Problem.make(
            line,
            f"protocol:{key}" if key else "protocol",
            f"protocol_{code}",
            **{**params, "names": names},
        )
        for line, key, code, params in error.problems
    ]


def choose_suites(
    report: dataset.ValidationReport, wanted: list[str] | None
) -> list[str]:
    if not wanted:  # opt-in suites (Suite.by_default) only when named
        return [name for name in report.suites if registry.get(name).by_default]
    unusable = [name for name in wanted if name not in report.suites]
    if unusable:
        raise Rejected.one("bad_suite", path="suites", suites=unusable)
    return [name for name in report.suites if name in wanted]


def checked_suite_options(suites: list[str], raw: dict[str, Any]) -> dict[str, Any]:
    """Every option of the chosen suites, checked up front so a bad value is
    a 400 naming it, not a failed worker."""
    options = {}
    for name in suites:
        for option in registry.get(name).options:
            try:
                options[option.name] = option.validate(raw.get(option.name))
            except (TypeError, ValueError, ArithmeticError, RecursionError) as exc:
                problem = Problem.make(
                    None, option.name, option.problem, detail=str(exc)
                )
                raise Rejected([problem]) from None
    return options


def public_judge(
    settings: dict[str, Any], suites: list[str], options: dict[str, Any]
) -> dict[str, Any] | None:
    """What results may show of the judge: model, sampling, prompt versions."""
    used = [registry.get(name) for name in suites if registry.get(name).uses_judge]
    config = JudgeConfig.from_settings(settings, options)
    if config is None or not used:
        return None  # nothing of this run asks the judge
    protocol = protocols.from_options(options)
    prompts = {}
    for suite in used:  # a protocol's modes where it has them
        for mode in suite.modes:
            if mode.template is None:
                prompts[mode.name] = mode.prompt
            elif mode.name in protocol.modes:
                prompts[mode.name] = protocol.modes[mode.name].prompt
    window = history_chars(options)
    models = options.get("judge_models") or [config.model]
    # Prices as they were when the run was made: its cost never changes.
    known = settings["JUDGE_PRICES"]
    prices = {model: known[model] for model in models if model in known}
    return {
        **config.public(),
        "models": models,
        "prompts": prompts,
        "history_chars": window,
        "prices": prices,
        "protocol": protocol.public(),
    }


def history_chars(options: dict[str, Any], header: dict[str, Any] | None = None) -> int:
    """The run's judge history window, as recorded when it was made; runs
    of earlier releases recorded it in their header only (``header``: the
    run's public judge)."""
    recorded: int | None = options.get(
        "history_chars", (header or {}).get("history_chars")
    )
    return DEFAULTS["JUDGE_HISTORY_CHARS"] if recorded is None else recorded


def judge_options(settings: dict[str, Any], request: RunRequest) -> dict[str, Any]:
    """The judge settings of a run. A model from the web or the API must
    be one the operator configured (``JUDGE_MODELS``): any other name
    would spend the server's judge budget on a model nobody chose."""
    models = list(dict.fromkeys(request.judge_models or [])) or (
        [request.judge_model] if request.judge_model else []
    )
    allowed = settings["JUDGE_MODELS"]
    for model in models:
        if request.judge_url is None and model not in allowed:
            raise Rejected.one(
                "bad_judge_model",
                path="judge_model",
                model=model[:100],
                models=", ".join(allowed) or "-",
            )
    return {
        "protocol": protocol_of(request).stored(),
        "samples": request.samples,
        "judge_url": request.judge_url,
        # the instance's model when the request named none: a worker
        # configured with another still asks this one (run_spec.py)
        "judge_model": models[0] if models else settings.get("JUDGE_MODEL"),
        # two or more: a panel (pipeline/worker/execution.py: judge_for)
        "judge_models": models if len(models) > 1 else None,
        "use_cache": request.use_cache,
        "batch": request.batch,
        # recorded at submit: a worker configured otherwise judges the run
        # as its header says (pipeline/service/run_spec.py: RunSpec.judge_config)
        "temperature": settings["JUDGE_TEMPERATURE"],
        "history_chars": settings["JUDGE_HISTORY_CHARS"],
        "judge_limits": run_limits(settings),  # max tokens, timeouts, retries...
    }


MAX_FILE_NAME_CHARS = 255  # runs.file_name is VARCHAR(255)


def check_file_name(filename: str) -> None:
    """An upload's name as a run may keep it."""
    if "\x00" in filename:
        raise Rejected.one("nul_character", path="file")
    if len(filename) > MAX_FILE_NAME_CHARS:
        raise Rejected.one(
            "too_long", path="file", length=len(filename), limit=MAX_FILE_NAME_CHARS
        )


def unstorable(exc: OSError) -> Rejected:
    """A full disk (507) or storage that failed otherwise (503)."""
    code = "disk_full" if exc.errno == errno.ENOSPC else "storage_unavailable"
    return Rejected.one(code, path="file", http=507 if code == "disk_full" else 503)


MAX_FAMILY_CHARS = 80
FAMILY_PARTS = ("methods", "judges")


def family_pairs(text: str, path: str) -> dict[str, str]:
    """``name=family`` pairs, separated by commas or lines (the upload form
    and the CLI); a pair without ``=`` is refused naming it.

    >>> family_pairs("Ours = llama, Base=qwen", "method_families")
    {'Ours': 'llama', 'Base': 'qwen'}
    """
    found = {}
    for part in text.replace("\n", ",").split(","):
        if not part.strip():
            continue
        name, equals, family = part.partition("=")
        if not equals or not name.strip() or not family.strip():
            raise Rejected.one("family_pair", path=path, value=part.strip()[:80])
        found[name.strip()] = family.strip()
    return found


def checked_families(
    families: Any, methods: list[str], judges: list[str]
) -> dict[str, dict[str, str]] | None:
    """The families a run stores: every name a method of the file or one of
    the run's judge models, every family a non-empty string; None when none
    is named. Problems are refused naming their path.

    >>> checked_families({"methods": {"A": " llama "}}, ["A", "B"], ["j"])
    {'methods': {'A': 'llama'}, 'judges': {}}
    >>> checked_families(None, ["A"], []) is None
    True
    """
    if families is None or families == {}:
        return None
    if not isinstance(families, dict) or set(families) - set(FAMILY_PARTS):
        raise Rejected.one("families_shape", path="families")
    problems = []
    found: dict[str, dict[str, str]] = {}
    for part, known in (("methods", methods), ("judges", judges)):
        given = families.get(part) or {}
        if not isinstance(given, dict):
            raise Rejected.one("families_shape", path="families")
        found[part] = {}
        for name, family in given.items():
            path = f"families.{part}.{name}"
            if name not in known:
                code = f"family_unknown_{part[:-1]}"
                listed = ", ".join(known) or "—"
                problems.append(
                    Problem.make(None, path, code, name=str(name)[:200], known=listed)
                )
            elif not isinstance(family, str) or not family.strip():
                problems.append(Problem.make(None, path, "family_empty"))
            else:
                found[part][name] = family.strip()[:MAX_FAMILY_CHARS]
    if problems:
        raise Rejected(problems)
    return found if any(found.values()) else None
