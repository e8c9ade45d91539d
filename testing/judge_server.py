"""A scripted OpenAI-compatible judge on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` over real HTTP. The reply is decided
by directives written into the response under evaluation (the text between
``<<<RESPONSE`` and ``RESPONSE>>>`` in the prompt), so a crafted file scripts
exact scores and faults independent of call order or concurrency:

* ``[[al=80]]`` the alignment total (split over the five dimensions);
  ``[[binary=1]]`` the binary verdict. Without them the scores derive from a
  hash of the text (deterministic).
* ``[[fault=429]]`` first attempt 429 with ``Retry-After: 1``;
  ``[[fault=500x2]]`` two 500s then success; ``[[fault=garbage]]`` always an
  unparseable reply; ``[[fault=garbage_once]]`` unparseable, then fine;
  ``[[fault=timeout]]`` sleeps past the client's timeout; ``[[fault=401]]``;
  ``[[fault=mismatch]]`` dimensions that do not add up to the total;
  ``[[fault=huge]]`` a 300 KB reply; ``[[fault=drip]]`` the body one byte
  every ``drip_s`` seconds (a server that holds a connection open).
* Roleplay prompts carry the method's whole scene between ``<<<SCENE`` and
  ``SCENE>>>``; directives anywhere in it apply (faults included). JERA
  (``JERA roleplay questionnaire``): a fenced JSON questionnaire, every answer
  ``N`` with ``[[jera=N]]``, else hash-derived. ALMP extraction / inference:
  a JSON list of the ``[[attr=...]]`` / ``[[implied=...]]`` values, in order.
* Pairwise prompts carry two replies between ``<<<A``/``A>>>`` and
  ``<<<B``/``B>>>``. Each reply's strength is ``[[strength=N]]`` (else 0..9
  from its hash); the stronger wins with probability 1/(1 + e^−|Δ|), drawn
  from a hash of the two texts in sorted order, so both orders of a pair get
  the same verdict; equal strengths tie. A model whose name holds
  ``position-a`` answers A whenever the strengths are at most 1 apart (a
  judge with position bias). ``[[fault=garbage]]`` in a reply: unparseable.
* A model named ``<name>+<N>`` (e.g. ``scripted+10``) adds N to every
  alignment total, capped at 100: two judges a known distance apart.
* Slot judge prompts (``Slot extraction judging task``) list one JSON slot per
  line between ``<<<SLOTS`` and ``SLOTS>>>``; directives anywhere in it apply.
  Every slot scores 1.0 when its predicted values equal its ground truth,
  else 0.5.

Run standalone: ``python -m testing.judge_server --port 8089 --latency 0.05``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from testing import judge_natives, judge_styles, judge_wire

_RESPONSE = re.compile(r"<<<RESPONSE\n(.*?)\nRESPONSE>>>", re.S)
_DIRECTIVE = re.compile(r"\[\[(\w+)=([\w.]+)\]\]")
_SCENE = re.compile(r"<<<SCENE\n(.*?)\nSCENE>>>", re.S)
_SLOTS = re.compile(r"<<<SLOTS\n(.*?)\nSLOTS>>>", re.S)
DIMENSIONS = ("Style", "Content", "Naturalness", "Personalization", "Conversation")


def split_total(total: int) -> list[int]:
    base, extra = divmod(total, 5)
    return [base + (1 if index < extra else 0) for index in range(5)]


def alignment_reply(total: int, mismatch: bool = False, style: str = "ours") -> str:
    parts = split_total(total)
    if mismatch:
        parts[0] = max(parts[0] - 3, 0)
    return judge_styles.alignment_text(total, parts, style)


class JudgeState:
    """Shared, thread-safe counters and knobs of one server."""

    def __init__(self, latency: float = 0.0, timeout_sleep: float = 3.0):
        self.latency = latency
        self.timeout_sleep = timeout_sleep
        self.drip_s = 0.2  # seconds between bytes of a [[fault=drip]] reply
        self.outage_status: int | None = None  # e.g. 503 for every request
        self.calls = 0
        self.attempts: Counter[str] = Counter()
        self.lock = threading.Lock()
        # What tests check about the load and the prompts the server saw.
        self.in_flight = 0
        self.max_in_flight = 0
        self.in_flight_of: Counter[str] = Counter()  # per model, now and at most
        self.max_in_flight_of: Counter[str] = Counter()
        self.connections = 0  # opened by clients, over the server's life
        self.max_prompt_chars = 0
        self.models: Counter[str] = Counter()
        # time.time() when the first call came and the latest one was
        # answered (bench/handoff.py: compared with the run's timestamps)
        self.first_call_at: float | None = None
        self.last_call_at: float | None = None
        self.reported = judge_wire.Reported()  # usage sent, per model
        self.record_to = None  # a binary file: every request body, one a line

    def record(self, body: bytes) -> None:
        if self.record_to is not None:
            with self.lock:
                self.record_to.write(body + b"\n")

    def enter(self, model: str, prompt: str) -> None:
        now = time.time()
        with self.lock:
            self.first_call_at = self.first_call_at or now
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.in_flight_of[model] += 1
            self.max_in_flight_of[model] = max(
                self.max_in_flight_of[model], self.in_flight_of[model]
            )
            self.max_prompt_chars = max(self.max_prompt_chars, len(prompt))
            self.models[model] += 1

    def leave(self, model: str = "") -> None:
        now = time.time()
        with self.lock:
            self.last_call_at = now  # its reply is on its way
            self.in_flight -= 1
            self.in_flight_of[model] -= 1

    def count(self, key: str) -> int:
        with self.lock:
            self.calls += 1
            self.attempts[key] += 1
            return self.attempts[key]


_OFFSET = re.compile(r"\+(\d+)$")
DRIP = "x-scripted-drip"  # an internal marker: send this body slowly
_PAIR = re.compile(r"<<<A\n(.*?)\nA>>>.*?<<<B\n(.*?)\nB>>>", re.S)


def strength(reply: str) -> float:
    found = dict(_DIRECTIVE.findall(reply)).get("strength")
    if found is not None:
        return float(found)
    return float(int(hashlib.md5(reply.encode()).hexdigest(), 16) % 10)


def pairwise_verdict(first: str, second: str, model: str) -> str:
    """A, B or tie for replies A (``first``) and B (``second``)."""
    gap = strength(first) - strength(second)
    if "position-a" in model and abs(gap) <= 1:
        return "A"
    if gap == 0:
        return "tie"
    pair = "\n".join(sorted((first, second))).encode()
    draw = int(hashlib.sha256(pair).hexdigest(), 16) % 10_000 / 10_000
    stronger_wins = draw < 1 / (1 + math.exp(-abs(gap)))
    return "A" if (gap > 0) == stronger_wins else "B"


def pairwise_reply(first: str, second: str, model: str, style: str = "ours") -> str:
    """A verdict on replies A (``first``) and B (``second``)."""
    if "[[fault=garbage]]" in first + second:
        return "Both are fine, I suppose."
    return judge_styles.pairwise_text(pairwise_verdict(first, second, model), style)


def decide(state: JudgeState, prompt: str, model: str = "") -> tuple[int, str, dict]:
    """(HTTP status, reply text or error body, extra headers) for one prompt."""
    mt_pair = judge_natives.MT_PAIR.search(prompt)
    if mt_pair and not state.outage_status:  # MT-Bench's pairwise prompt
        state.count(hashlib.sha256(prompt.encode()).hexdigest())
        verdict = pairwise_verdict(mt_pair.group(1), mt_pair.group(2), model)
        return 200, judge_natives.mt_pair(verdict, model), {}
    pair = _PAIR.search(prompt)
    if pair and not state.outage_status:
        state.count(hashlib.sha256(prompt.encode()).hexdigest())  # calls served
        style = judge_styles.pick(judge_styles.PAIRWISE_STYLES, model, prompt)
        return 200, pairwise_reply(pair.group(1), pair.group(2), model, style), {}
    match = (_RESPONSE.search(prompt) or _SCENE.search(prompt) or _SLOTS.search(prompt)
             or judge_natives.MT_SINGLE.search(prompt))  # fmt: skip
    response = match.group(1) if match else prompt
    directives = dict(_DIRECTIVE.findall(response))
    attempt = state.count(hashlib.sha256(prompt.encode()).hexdigest())
    fault = directives.get("fault", "")
    if state.outage_status:
        return state.outage_status, "outage", {"Retry-After": "1"}
    if fault == "429" and attempt == 1:
        return 429, "slow down", {"Retry-After": "1"}
    if fault.startswith("500x") and attempt <= int(fault[4:]):
        return 500, "boom", {}
    if fault == "401":
        return 401, "bad key", {}
    if fault == "timeout":
        time.sleep(state.timeout_sleep)
    if fault == "garbage" or (fault == "garbage_once" and attempt == 1):
        return 200, "I think this reply is quite good overall!", {}
    if fault == "huge":  # a reply far over any sensible size (300 KB)
        return 200, "Total: \\boxed{50}\n" + "blah " * 60_000, {}
    if fault == "drip":  # a slow server: the body one byte at a time
        return 200, alignment_reply(50), {DRIP: "1"}
    digest = int(hashlib.md5(response.encode()).hexdigest(), 16)
    if "JERA roleplay questionnaire" in prompt:
        return 200, judge_natives.jera_reply(directives.get("jera"), digest), {}
    if "ALMP extraction task" in prompt:
        return 200, judge_natives.almp_reply(response, "attr"), {}
    if "ALMP inference task" in prompt:
        return 200, judge_natives.almp_reply(response, "implied"), {}
    if "Slot extraction judging task" in prompt:
        return 200, judge_natives.slot_judge_reply(response), {}
    if "continue chatting" in prompt or "继续聊天" in prompt:
        answer = int(directives.get("binary", digest % 2))
        style = judge_styles.pick(judge_styles.BINARY_STYLES, model, prompt)
        return 200, judge_styles.binary_text(answer, style), {}
    total = int(directives.get("al", 40 + digest % 61))
    offset = _OFFSET.search(model)
    total = min(100, total + int(offset.group(1))) if offset else total
    if judge_natives.MT_SINGLE.search(prompt):
        return 200, judge_natives.mt_single(total, model), {}
    if judge_natives.ALOE in prompt:
        return 200, judge_natives.aloe(total, model), {}
    style = judge_styles.pick(judge_styles.ALIGNMENT_STYLES, model, prompt)
    return 200, alignment_reply(total, fault == "mismatch", style), {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Without TCP_NODELAY the body write waits for the client's delayed ACK of
    # the headers: ~40 ms added to every call.
    disable_nagle_algorithm = True
    state: JudgeState

    def log_message(self, *args) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.state.lock:
            self.state.connections += 1

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.state.record(raw)  # (bench/floor.py replays them)
        body = json.loads(raw)
        # The first user message holds the request; later ones are re-asks.
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        model = str(body.get("model"))
        refusal = judge_wire.structured_refusal(body)
        if refusal is not None:
            self.state.reported.usage(body, "")  # a request served, no tokens
            return self._send(400, refusal, {})
        if judge_wire.honours_structured(body):
            model = "style-structured " + model  # (a suffix would hide "+N")
        elif body.get("response_format"):
            model = "text-only " + model  # ignored: the prompt's text format
        self.state.enter(str(body.get("model")), prompt)
        try:
            if self.state.latency:
                time.sleep(self.state.latency)
            status, text, headers = decide(self.state, prompt, model)
        finally:
            self.state.leave(str(body.get("model")))
        if status != 200:
            return self._send(status, {"error": {"message": text}}, headers)
        text, finish = judge_wire.cut(text, body, "[[fault=truncate]]" in prompt)
        payload = {
            "id": "scripted",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
            "usage": self.state.reported.usage(body, text),
        }
        self._send(status, payload, headers)

    def _send(self, status: int, payload: dict, headers: dict) -> None:
        data = json.dumps(payload).encode()
        drip = headers.pop(DRIP, None)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not drip:
            self.wfile.write(data)
            return
        try:  # until the client gives up (its deadline closes the socket)
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                time.sleep(self.state.drip_s)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A class attribute: the constructor listens, so setting it on the
    # instance afterwards leaves the backlog at 5 (connections then wait
    # 1-15 s for SYN retries at 64 concurrent clients).
    request_queue_size = 256


class ScriptedJudge:
    """``with ScriptedJudge(latency=0.05) as judge: judge.url`` (ends in /v1)."""

    def __init__(self, latency: float = 0.0, timeout_sleep: float = 3.0, port: int = 0):
        self.state = JudgeState(latency, timeout_sleep)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.server = _Server(("127.0.0.1", port), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedJudge:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    with ScriptedJudge(args.latency, port=args.port) as judge:
        print(judge.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
