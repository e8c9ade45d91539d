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
* ``[[fault=429]]`` first attempt 429 with ``Retry-After: 1``;
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
  position bias). ``[[fault=garbage]]`` in a reply: unparseable.
* A model named ``<name>+<N>`` (e.g. ``scripted+10``) adds N to every
  alignment total, capped at 100: two judges a known distance apart.
* The slot judge: every listed slot scores 1.0 when its predicted values
  equal its ground truth, else 0.5.
* A request of no declared mode is read as the default protocol's
  alignment, its directives anywhere in the prompt.

Rate limits (off unless given): ``ScriptedJudge(rpm=3000, tpm=...)`` enforces
requests and tokens per minute in sliding windows, 1/60 of each in any
second, with OpenAI's headers and 429s (``testing/judge_limits.py``).

Run standalone: ``python -m testing.judge_server --port 8089 --latency 0.05``
(``--rpm 3000 --tpm 2000000`` to limit it).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from testing import judge_wire
from testing.judge_decisions import DRIP, decide
from testing.judge_limits import RateLimits, request_tokens
from testing.judge_state import JudgeState


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Without TCP_NODELAY the body write waits for the client's delayed ACK of
    # the headers: ~40 ms added to every call.
    disable_nagle_algorithm = True
    state: JudgeState
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
        self.state.record(raw)  # (bench/floor.py replays them)
        body = json.loads(raw)
        # The first user message holds the request; later ones are re-asks.
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        system = next(
            (m["content"] for m in body["messages"] if m["role"] == "system"), ""
        )
        model = str(body.get("model"))
        if self._rate_limited(body):
            return
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
            status, text, headers = decide(self.state, prompt, model, system)
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


class ScriptedJudge:
    """``with ScriptedJudge(latency=0.05) as judge: judge.url`` (ends in /v1).
    ``rpm``/``tpm``: rate limits as OpenAI enforces them (``judge_limits``);
    ``count_rejected``: a 429 counts against the requests limit too."""

    def __init__(
        self, latency: float = 0.0, timeout_sleep: float = 3.0, port: int = 0,
        protocols: tuple[str, ...] = (), rpm: int | None = None,
        tpm: int | None = None, count_rejected: bool = False,
    ):  # fmt: skip
        self.state = JudgeState(latency, timeout_sleep, protocols)
        if rpm or tpm:
            self.state.limits = RateLimits(rpm, tpm, count_rejected)
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
    parser.add_argument("--rpm", type=int, default=None, help="requests per minute")
    parser.add_argument("--tpm", type=int, default=None, help="tokens per minute")
    parser.add_argument("--count-rejected", action="store_true",
                        help="a 429 counts against the requests limit")  # fmt: skip
    args = parser.parse_args()
    with ScriptedJudge(
        args.latency, port=args.port, rpm=args.rpm, tpm=args.tpm,
        count_rejected=args.count_rejected,
    ) as judge:  # fmt: skip
        print(judge.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
