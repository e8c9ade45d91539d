"""What a judge call is made with: the judge's settings, whether it answers
structured output, and the keys and sizes of what is sent."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from config import DEFAULTS
from metrics.judging import JudgeItem


@dataclass(frozen=True)
class JudgeConfig:
    """A judge's settings; every default is the one in ``config.DEFAULTS``."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = DEFAULTS["JUDGE_TEMPERATURE"]
    max_tokens: int = DEFAULTS["JUDGE_MAX_TOKENS"]
    timeout_s: float = DEFAULTS["JUDGE_TIMEOUT_S"]
    connect_timeout_s: float = DEFAULTS["JUDGE_CONNECT_TIMEOUT_S"]
    max_retries: int = DEFAULTS["JUDGE_MAX_RETRIES"]
    concurrency: int = DEFAULTS["JUDGE_CONCURRENCY"]
    samples: int = 1
    backoff_cap_s: float = DEFAULTS["JUDGE_BACKOFF_CAP_S"]
    max_tokens_retry: int = DEFAULTS["JUDGE_MAX_TOKENS_RETRY"]
    max_prompt_chars: int = DEFAULTS["MAX_PROMPT_CHARS_PER_CALL"]
    deadline_s: float = DEFAULTS["JUDGE_DEADLINE_S"]
    max_reply_bytes: int = DEFAULTS["JUDGE_MAX_REPLY_BYTES"]
    rpm: int | None = DEFAULTS["JUDGE_RPM"]  # limits without headers (pacing.py)
    tpm: int | None = DEFAULTS["JUDGE_TPM"]

    @classmethod
    def from_settings(
        cls,
        config: Mapping[str, Any],
        options: Mapping[str, Any],
        limits: Mapping[str, Any] | None = None,
    ) -> JudgeConfig | None:
        """The judge a run uses: its own settings (``options``: endpoint,
        model, sampling; ``limits``: those of :data:`RUN_LIMITS`, as the run
        recorded them) plus, from this process's configuration, the key,
        the pacing and any limit the run did not record; None when no judge
        is configured."""
        url = options.get("judge_url") or config.get("JUDGE_API_URL")
        model = options.get("judge_model") or config.get("JUDGE_MODEL")
        if not (url and model):
            return None
        return cls(
            base_url=url,
            model=model,
            api_key=config.get("JUDGE_API_KEY"),
            # the run's, recorded when it was made (none before: the default)
            temperature=options.get("temperature", DEFAULTS["JUDGE_TEMPERATURE"]),
            samples=options.get("samples", 1),
            # this process's: its pool and the endpoint's rate limits
            concurrency=config["JUDGE_CONCURRENCY"],
            rpm=config.get("JUDGE_RPM"),
            tpm=config.get("JUDGE_TPM"),
            **{**run_limits(config), **(limits or {})},
        )

    def public(self) -> dict[str, Any]:
        """What results may show: never the API key."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "samples": self.samples,
        }


# What a run's judge is asked with beyond its model and sampling: each
# field's setting of config.py, recorded in the run when it is made
# (``pipeline/service/run_request.py: judge_options``) so that every chunk, online or
# batch, first claim or retry, asks as the run recorded. Not recorded: the
# API key, the concurrency (this process's pool) and the pacing (the
# endpoint's limits, shared by every run).
RUN_LIMITS = {
    "max_tokens": "JUDGE_MAX_TOKENS",
    "max_tokens_retry": "JUDGE_MAX_TOKENS_RETRY",
    "timeout_s": "JUDGE_TIMEOUT_S",
    "connect_timeout_s": "JUDGE_CONNECT_TIMEOUT_S",
    "deadline_s": "JUDGE_DEADLINE_S",
    "max_retries": "JUDGE_MAX_RETRIES",
    "backoff_cap_s": "JUDGE_BACKOFF_CAP_S",
    "max_prompt_chars": "MAX_PROMPT_CHARS_PER_CALL",
    "max_reply_bytes": "JUDGE_MAX_REPLY_BYTES",
}


def run_limits(config: Mapping[str, Any]) -> dict[str, Any]:
    """The judge limits of :data:`RUN_LIMITS` in ``config``, by field.

    >>> run_limits(DEFAULTS)["max_tokens"] == DEFAULTS["JUDGE_MAX_TOKENS"]
    True
    """
    return {field: config[name] for field, name in RUN_LIMITS.items()}


class StructuredOutput:
    """Whether to ask a judge (URL + model) for structured output: yes until
    it refuses the parameter (a 400 naming it) or ignores it (a reply that is
    not JSON); then the text grammar alone, for the rest of the run."""

    def __init__(self, refused: bool = False):
        self.state = "text" if refused else "unknown"

    def wanted(self) -> bool:
        return self.state in ("unknown", "json_schema")

    def rejected(self) -> None:
        self.state = "text"

    def answered(self, honoured: bool) -> None:
        if self.state != "text":
            self.state = "json_schema" if honoured else "ignored"


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's ``response_format`` for a JSON schema, strict."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": True, "schema": schema},
    }


def prompt_chars(messages: Iterable[Mapping[str, Any]]) -> int:
    """Characters of a request's messages (what the prompt cap counts).

    >>> prompt_chars([{"role": "user", "content": "abc"}, {"content": "de"}])
    5
    """
    return sum(len(str(m.get("content") or "")) for m in messages)


def cache_key(config: JudgeConfig, item: JudgeItem, sample: int) -> str:
    canonical = json.dumps(
        [
            config.base_url,
            config.model,
            list(item.messages),
            config.temperature,
            config.max_tokens,
            sample,
            item.prompt_version,
        ],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
