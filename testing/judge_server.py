"""A scripted OpenAI-compatible judge on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` over real HTTP. Which mode a request
is comes from the modes the product declares, never from phrases of a
prompt: the request's system and user messages fill one mode's templates
(``testing/judge_forms.py``: every suite's own modes and every protocol's,
built in or given with ``ScriptedJudge(protocols=...)``). The reply is in
that mode's form: a native writer for the modes real judges answer in their
own way (``judge_styles``, ``judge_natives``), else the mode's declared
``schema`` or ``format``, filled in.

The verdict is decided by directives written into the text under evaluation
(the template's ``response``, ``scene`` or ``slots`` field; ``response_a`` and
``response_b`` of a pair), so a crafted file scripts exact scores and faults
independent of call order or concurrency:

* ``[[al=80]]`` the alignment total (split over the five dimensions);
  ``[[binary=1]]`` the binary verdict. Without them the scores derive from a
  hash of the text (deterministic).
* ``[[fault=429]]`` first attempt 429 with ``Retry-After: 1``
  (``[[fault=429_always]]``: every attempt); ``[[limits=inf]]`` the reply
  states that value as both rate limits (``x-ratelimit-limit-*``);
  ``[[fault=500x2]]`` two 500s then success; ``[[fault=garbage]]`` always an
  unparseable reply; ``[[fault=garbage_once]]`` unparseable, then fine;
  ``[[fault=timeout]]`` sleeps past the client's timeout; ``[[fault=401]]``;
  ``[[fault=mismatch]]`` dimensions that do not add up to the total;
  ``[[fault=huge]]`` a 300 KB reply; ``[[fault=drip]]`` the body one byte
  every ``drip_s`` seconds (a server that holds a connection open).
* Roleplay modes: directives anywhere in the scene apply (faults included).
  JERA: a fenced JSON questionnaire, every answer ``N`` with ``[[jera=N]]``,
  else hash-derived. ALMP extraction / inference: a JSON list of the
  ``[[attr=...]]`` / ``[[implied=...]]`` values, in order.
* Pairs: each reply's strength is ``[[strength=N]]`` (else 0..9 from its
  hash); the stronger wins with probability 1/(1 + e^−|Δ|), drawn from a hash
  of the two texts in sorted order, so both orders of a pair get the same
  verdict; equal strengths tie. A model whose name holds ``position-a``
  answers A whenever the strengths are at most 1 apart (a judge with
  position bias); one whose name holds ``judge-prefers-longer`` answers the
  longer reply, a tie when both are equally long (a judge with length
  bias). ``[[fault=garbage]]`` in a reply: unparseable.
* A model named ``<name>+<N>`` (e.g. ``scripted+10``) adds N to every
  alignment total, capped at 100: two judges a known distance apart.
* The slot judge: every listed slot scores 1.0 when its predicted values
  equal its ground truth, else 0.5.
* A request of no declared mode is read as the default protocol's
  alignment, its directives anywhere in the prompt.

Rate limits (off unless given): ``ScriptedJudge(rpm=3000, tpm=...)`` enforces
requests and tokens per minute in sliding windows, 1/60 of each in any
second, with OpenAI's headers and 429s (``testing/judge_limits.py``).

Batch mode (``testing/judge_batches.py``, ``judge_files.py``): OpenAI's
Files and Batches endpoints (``POST /v1/files`` with ``purpose=batch``,
``POST /v1/batches``, ``GET /v1/batches[/{id}]``,
``POST /v1/batches/{id}/cancel``, ``GET /v1/files/{id}[/content]``), in
memory. A batch goes validating -> in_progress -> finalizing -> completed
over ``ScriptedJudge(batch_seconds=2.0)``, its lines answered progressively
by the online endpoint's ``answer``: same verdicts; a fault is the line's
status in the error file (no retry; timeout and drip a 500, never slept on);
no rate limits. ``[[batch=expired]]`` / ``[[batch=failed]]`` in a line: that
line ``batch_expired`` / a 500; ``[[batch=invalid]]`` or
``batch_fail_all=True``: the batch fails validation; ``batch_expire_after_s``:
it expires, unfinished lines ``batch_expired``; ``[[batch=line:KIND]]``:
that line's output record comes back malformed (not JSON, an array, no
``custom_id``, not UTF-8, another request's id: ``judge_batches.MALFORMED``)
and ``batches.look_fault = (status, body)`` answers every look at a batch
with it. ``state.batch_lines`` and
``state.online_requests`` count what was asked each way (``calls`` counts
the answers of both).

Run standalone: ``python -m testing.judge_server --port 8089 --latency 0.05``
(``--rpm 3000 --tpm 2000000`` to limit it; ``--batch-seconds 2`` for batches).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from testing import judge_batches, judge_wire
from testing.judge_decisions import DRIP, decide
from testing.judge_limits import RateLimits, request_tokens
from testing.judge_state import JudgeState

# Faults that hold a connection open: a batch line has none to hold.
_SLOW_FAULTS = ("[[fault=timeout]]", "[[fault=drip]]")


def answer(
    state: JudgeState, body: dict, batch: bool = False
) -> tuple[int, dict, dict]:
    """(HTTP status, JSON payload, extra headers) for one chat-completion
    request: the online endpoint and a batch line (``batch=True``) share it, so
    both get the same verdict and faults for the same body. A batch line
    neither sleeps (latency, timeout, drip: a 500 instead) nor counts as in
    flight; its Retry-After is dropped by the batch (it does not retry)."""
    # The first user message holds the request; later ones are re-asks.
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    model = str(body.get("model"))
    refusal = judge_wire.structured_refusal(body)
    if refusal is not None:
        state.reported.usage(body, "")  # a request served, no tokens
        return 400, refusal, {}
    if judge_wire.honours_structured(body):
        model = "style-structured " + model  # (a suffix would hide "+N")
    elif body.get("response_format"):
        model = "text-only " + model  # ignored: the prompt's text format
    if batch and any(fault in prompt for fault in _SLOW_FAULTS):
        state.count(hashlib.sha256(prompt.encode()).hexdigest())  # served, as 500
        return 500, {"error": {"message": "boom"}}, {}
    if batch:
        status, text, headers = decide(state, prompt, model, system)
    else:
        state.enter(str(body.get("model")), prompt)
        try:
            if state.latency:
                time.sleep(state.latency)
            status, text, headers = decide(state, prompt, model, system)
        finally:
            state.leave(str(body.get("model")))
    if status != 200:
        return status, {"error": {"message": text}}, headers
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
        "usage": state.reported.usage(body, text),
    }
    return status, payload, headers


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Without TCP_NODELAY the body write waits for the client's delayed ACK of
    # the headers: ~40 ms added to every call.
    disable_nagle_algorithm = True
    state: judge_batches.BatchState
    batches: judge_batches.BatchStore
    rate_headers: dict[str, str]  # this request's, on whatever it is answered

    def log_message(self, *args) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.rate_headers = {}
        with self.state.lock:
            self.state.connections += 1

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.startswith(judge_batches.PATHS):
            return self._serve_batches("POST", raw)
        self.state.count_online()
        self.state.record(raw)  # (bench/floor.py replays them)
        body = json.loads(raw)
        if self._rate_limited(body):
            return
        self._send(*answer(self.state, body))

    def do_GET(self) -> None:
        self._serve_batches("GET", b"")

    def _serve_batches(self, method: str, raw: bytes) -> None:
        """The Files and Batches endpoints (``judge_batches``): no rate
        limits, as OpenAI keeps a batch queue apart from online requests."""
        self.rate_headers = {}
        status, data, kind = self.batches.route(method, self.path, self.headers, raw)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _rate_limited(self, body: dict) -> bool:
        """Take the request against the rate limits (if any), keeping the
        headers its reply carries; True when it was answered 429. Checked
        first: a provider's gateway limits before it reads the request."""
        self.rate_headers = {}  # (one handler serves a keep-alive connection)
        if self.state.limits is None:
            return False
        verdict = self.state.limits.admit(request_tokens(body))
        self.rate_headers = verdict.headers
        if verdict.error is None:
            return False
        self._send(429, verdict.error, {})
        return True

    def _send(self, status: int, payload: dict, headers: dict) -> None:
        data = json.dumps(payload).encode()
        headers = {**self.rate_headers, **headers}
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

    def handle_error(self, request, client_address) -> None:
        """A client that hung up before its reply (a cancelled run, a deadline
        met) is the judge's everyday life, not an error: printing its
        traceback also parsed the line's source with ``ast`` on this thread,
        which CPython 3.11 does not allow beside another thread's ``ast.parse``
        (gh-106905: "AST constructor recursion depth mismatch" raised in a
        test building its app meanwhile)."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class ScriptedJudge:
    """``with ScriptedJudge(latency=0.05) as judge: judge.url`` (ends in /v1).
    ``rpm``/``tpm``: rate limits as OpenAI enforces them (``judge_limits``);
    ``count_rejected``: a 429 counts against the requests limit too.
    ``batch_*``: the Files and Batches endpoints (``judge_batches.BatchStore``)."""

    def __init__(
        self,
        latency: float = 0.0,
        timeout_sleep: float = 3.0,
        port: int = 0,
        protocols: tuple[str, ...] = (),
        rpm: int | None = None,
        tpm: int | None = None,
        count_rejected: bool = False,
        batch_seconds: float = 2.0,
        batch_fail_all: bool = False,
        batch_expire_after_s: float | None = None,
        batch_max_lines: int = judge_batches.MAX_LINES,
        batch_max_bytes: int = judge_batches.MAX_BYTES,
    ):
        self.state = judge_batches.BatchState(latency, timeout_sleep, protocols)
        if rpm or tpm:
            self.state.limits = RateLimits(rpm, tpm, count_rejected)
        self.batches = judge_batches.BatchStore(
            self.state,
            answer,
            seconds=batch_seconds,
            fail_all=batch_fail_all,
            expire_after_s=batch_expire_after_s,
            max_lines=batch_max_lines,
            max_bytes=batch_max_bytes,
        )
        handler = type(
            "Handler", (_Handler,), {"state": self.state, "batches": self.batches}
        )
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
    parser.add_argument("--rpm", type=int, default=None, help="requests per minute")
    parser.add_argument("--tpm", type=int, default=None, help="tokens per minute")
    parser.add_argument(
        "--count-rejected",
        action="store_true",
        help="a 429 counts against the requests limit",
    )
    parser.add_argument(
        "--batch-seconds",
        type=float,
        default=2.0,
        help="a batch's time from create to completed",
    )
    args = parser.parse_args()
    with ScriptedJudge(
        args.latency,
        port=args.port,
        rpm=args.rpm,
        tpm=args.tpm,
        count_rejected=args.count_rejected,
        batch_seconds=args.batch_seconds,
    ) as judge:
        print(judge.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
