"""The wire under judge calls: one session of keep-alive connections per
judge host for the process, the proxy the environment names, failures named."""

from __future__ import annotations

import socket

import pytest

from judge_client import loop
from judge_client.config import JudgeConfig
from judge_client.http import JudgeClient, JudgeHTTPError
from judge_client.pool import JudgePool
from testing.judge_server import ScriptedJudge

MESSAGES = [{"role": "user", "content": "<<<RESPONSE\nfine [[al=70]]\nRESPONSE>>>"}]


@pytest.fixture
def judge():
    with ScriptedJudge() as server:
        yield server


def ask(config: JudgeConfig, messages=MESSAGES) -> dict:
    return loop.run(JudgeClient(config).complete(messages, 0), timeout=60)


def test_clients_of_every_chunk_share_the_hosts_connections(judge):
    """A worker builds a client per chunk; the connections outlive it."""
    config = JudgeConfig(base_url=judge.url, model="scripted", concurrency=4)
    pool = JudgePool(4)
    for _ in range(5):  # five chunks, eight calls each
        client = JudgeClient(config)
        calls = [pool.submit(client.complete, MESSAGES, n) for n in range(8)]
        assert all("70" in call.result(60)["text"] for call in calls)
    assert judge.state.calls == 40
    assert judge.state.connections <= 4  # 40 calls, at most one per slot


def test_the_environments_proxy_is_used_unless_no_proxy_names_the_host(
    judge, monkeypatch
):
    """The scripted judge stands in for the proxy: it answers whatever URL
    it is asked for, so a call to a host that does not exist succeeds only
    through it."""
    proxy = judge.url.removesuffix("/v1")
    monkeypatch.setenv("http_proxy", proxy)
    monkeypatch.setenv("no_proxy", "direct.invalid")
    through = JudgeConfig(
        base_url="http://judge.invalid:81/v1", model="m", max_retries=0
    )
    assert "70" in ask(through)["text"]
    assert judge.state.calls == 1
    direct = JudgeConfig(
        base_url="http://direct.invalid:82/v1", model="m", max_retries=0
    )
    with pytest.raises(JudgeHTTPError) as failed:
        ask(direct)
    assert failed.value.note.params == {"kind": "ConnectionError"}
    assert judge.state.calls == 1


def test_a_refused_connection_is_named_as_before():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = JudgeConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0
    )
    with pytest.raises(JudgeHTTPError) as failed:
        ask(config)
    assert failed.value.note.params == {"kind": "ConnectionError"}


def test_a_slow_reply_is_a_read_timeout(judge):
    judge.state.timeout_sleep = 1.0
    config = JudgeConfig(
        base_url=judge.url, model="scripted", timeout_s=0.2, max_retries=0
    )
    messages = [
        {"role": "user", "content": "<<<RESPONSE\n[[fault=timeout]]\nRESPONSE>>>"}
    ]
    with pytest.raises(JudgeHTTPError) as failed:
        ask(config, messages)
    assert failed.value.note.params == {"kind": "ReadTimeout"}
