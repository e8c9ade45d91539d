"""The wire under judge calls: one pool of keep-alive connections per judge
host for the process, the proxy the environment names, failures named."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.judge_server import ScriptedJudge
from judge_client import transport
from judge_client.config import JudgeConfig
from judge_client.http import JudgeClient, JudgeHTTPError

MESSAGES = [{"role": "user", "content": "<<<RESPONSE\nfine [[al=70]]\nRESPONSE>>>"}]


@pytest.fixture
def judge():
    with ScriptedJudge() as server:
        yield server


def test_clients_of_every_chunk_share_the_hosts_connections(judge):
    """A worker builds a client per chunk; the connections outlive it."""
    config = JudgeConfig(base_url=judge.url, model="scripted", concurrency=4)
    with ThreadPoolExecutor(4) as threads:
        for _ in range(5):  # five chunks, eight calls each
            client = JudgeClient(config)
            calls = [threads.submit(client.complete, MESSAGES, n) for n in range(8)]
            assert all("70" in call.result()["text"] for call in calls)
    manager = transport.manager_for(config.base_url, 4)
    pool = manager.connection_from_url(config.base_url)
    assert pool.num_connections <= 4  # 40 calls, at most one per thread
    assert judge.state.calls == 40


def test_a_larger_pool_replaces_a_smaller_one(judge):
    small = transport.manager_for(judge.url + "/chat", 2)
    assert transport.manager_for(judge.url + "/other", 2) is small  # per host
    larger = transport.manager_for(judge.url, 8)
    assert larger is not small and larger.connection_pool_kw["maxsize"] == 8
    assert transport.manager_for(judge.url, 4) is larger


def test_the_environments_proxy_is_used_unless_no_proxy_names_the_host(monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")
    monkeypatch.setenv("no_proxy", "judge.internal")
    proxied = transport.manager_for("http://judge.example:81/v1", 1)
    direct = transport.manager_for("http://judge.internal:82/v1", 1)
    assert type(proxied).__name__ == "ProxyManager"
    assert type(direct).__name__ == "PoolManager"


def test_a_refused_connection_is_named_as_before():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = JudgeConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m",
                         max_retries=0)  # fmt: skip
    with pytest.raises(JudgeHTTPError) as failed:
        JudgeClient(config).complete(MESSAGES, 0)
    assert failed.value.note.params == {"kind": "ConnectionError"}


def test_a_slow_reply_is_a_read_timeout(judge):
    judge.state.timeout_sleep = 1.0
    config = JudgeConfig(base_url=judge.url, model="scripted", timeout_s=0.2,
                         max_retries=0)  # fmt: skip
    messages = [
        {"role": "user", "content": "<<<RESPONSE\n[[fault=timeout]]\nRESPONSE>>>"}
    ]
    with pytest.raises(JudgeHTTPError) as failed:
        JudgeClient(config).complete(messages, 0)
    assert failed.value.note.params == {"kind": "ReadTimeout"}
