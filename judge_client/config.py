"""What a judge call is made with: the judge's settings, whether it answers
structured output, and the keys and sizes of what is sent."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

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
    def from_settings(cls, config: dict, options: dict) -> JudgeConfig | None:
        """The judge a run uses: its own settings plus the key from this
        process's configuration; None when no judge is configured."""
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
            connect_timeout_s=config["JUDGE_CONNECT_TIMEOUT_S"],
            backoff_cap_s=config["JUDGE_BACKOFF_CAP_S"],
            timeout_s=config["JUDGE_TIMEOUT_S"],
            max_retries=config["JUDGE_MAX_RETRIES"],
            max_tokens=config["JUDGE_MAX_TOKENS"],
            max_tokens_retry=config["JUDGE_MAX_TOKENS_RETRY"],
            concurrency=config["JUDGE_CONCURRENCY"],
            samples=options.get("samples", 1),
            max_prompt_chars=config["MAX_PROMPT_CHARS_PER_CALL"],
            deadline_s=config["JUDGE_DEADLINE_S"],
            max_reply_bytes=config["JUDGE_MAX_REPLY_BYTES"],
            rpm=config.get("JUDGE_RPM"),
            tpm=config.get("JUDGE_TPM"),
        )

    def public(self) -> dict:
        """What results may show: never the API key."""
        return {
            "model": self.model,
            "temperature": self.temperature,
            "samples": self.samples,
        }


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


def response_format(name: str, schema: dict) -> dict:
    """OpenAI's ``response_format`` for a JSON schema, strict."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": True, "schema": schema},
    }


def prompt_chars(messages: list) -> int:
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
