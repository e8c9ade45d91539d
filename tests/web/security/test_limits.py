"""Rate limits per client address (web/security/limits.py, docs/reliability.md's threat model)."""

from __future__ import annotations

import io
import uuid

import pytest
import redis

import config
from config import ConfigError
from tests import crafted, services
from tests.web.views.test_api import sample_bytes, upload
from tests.web.views.test_pages import csrf_token, finished_page, post_run

TINY = "2 per minute"
NOT_JSONL = b"not json\n"  # rejected with a 400: cheap, and it still counts


def validate(client, data: bytes = NOT_JSONL, **environ):
    body = {"file": (io.BytesIO(data), "logs.jsonl")}
    return client.post(
        "/api/v1/validate",
        data=body,
        content_type="multipart/form-data",
        environ_base=environ,
    )


def assert_retry_after(response) -> int:
    assert response.status_code == 429
    seconds = int(response.headers["Retry-After"])
    assert 1 <= seconds <= 60
    return seconds


def test_api_uploads_answer_429_with_retry_after_and_json(app_factory):
    client = app_factory(RATE_LIMIT_UPLOADS=TINY).test_client()
    assert [upload(client, NOT_JSONL).status_code for _ in range(2)] == [400, 400]
    refused = upload(client, NOT_JSONL)
    seconds = assert_retry_after(refused)
    body = refused.get_json()
    assert body["retry_after"] == seconds
    [error] = body["errors"]
    assert error["code"] == "rate_limited"
    assert error["params"]["seconds"] == seconds
    assert error["message"] == (
        f"Too many requests from your address. Try again in {seconds} seconds."
    )


def test_the_page_and_the_api_share_one_upload_budget(app_factory):
    client = app_factory(RATE_LIMIT_UPLOADS=TINY).test_client()
    assert post_run(client, NOT_JSONL).status_code == 400
    assert upload(client, NOT_JSONL).status_code == 400
    refused = client.post(
        "/runs?lang=zh",
        data={
            "file": (io.BytesIO(NOT_JSONL), "logs.jsonl"),
            "csrf_token": csrf_token(client),
        },
        content_type="multipart/form-data",
    )
    assert_retry_after(refused)
    assert refused.mimetype == "text/html"
    page = refused.get_data(as_text=True)
    assert "429" in page and "请求过于频繁" in page
    assert upload(client, NOT_JSONL).status_code == 429


def test_the_message_is_translated(app_factory):
    client = app_factory(RATE_LIMIT_VALIDATIONS="1 per minute").test_client()
    validate(client)
    for lang, words in (("zh", "请求过于频繁"), ("ko", "요청이 너무 많습니다")):
        body = client.post(
            f"/api/v1/validate?lang={lang}",
            data={"file": (io.BytesIO(NOT_JSONL), "logs.jsonl")},
            content_type="multipart/form-data",
        ).get_json()
        message = body["errors"][0]["message"]
        assert words in message and str(body["retry_after"]) in message


def test_limits_are_per_client_address(app_factory):
    client = app_factory(RATE_LIMIT_VALIDATIONS="1 per minute").test_client()
    assert validate(client, REMOTE_ADDR="192.0.2.1").status_code == 200
    assert validate(client, REMOTE_ADDR="192.0.2.1").status_code == 429
    assert validate(client, REMOTE_ADDR="192.0.2.2").status_code == 200


def test_forwarded_addresses_count_only_behind_trusted_proxies(app_factory):
    spoofed = {"HTTP_X_FORWARDED_FOR": "198.51.100.7", "REMOTE_ADDR": "192.0.2.1"}
    direct = app_factory(RATE_LIMIT_VALIDATIONS="1 per minute").test_client()
    assert validate(direct, **spoofed).status_code == 200
    spoofed["HTTP_X_FORWARDED_FOR"] = "198.51.100.8"  # a new "address" per request
    assert validate(direct, **spoofed).status_code == 429

    proxied = app_factory(
        RATE_LIMIT_VALIDATIONS="1 per minute", TRUSTED_PROXIES=1
    ).test_client()
    assert validate(proxied, **spoofed).status_code == 200
    spoofed["HTTP_X_FORWARDED_FOR"] = "198.51.100.9"
    assert validate(proxied, **spoofed).status_code == 200


def test_retries_are_limited_on_the_page_and_the_api(app_factory, tmp_path):
    client = app_factory(RATE_LIMIT_RETRIES=TINY).test_client()
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    location = post_run(client, path.read_bytes()).headers["Location"]
    finished_page(client, location)
    token = location.rsplit("/", 1)[1]
    # Both retries are refused (nothing failed: 409; or the share link may
    # only view: 403), and refused requests count all the same.
    assert client.post(f"/api/v1/runs/{token}/retry").status_code in (403, 409)
    page_retry = client.post(
        f"{location}/retry", data={"csrf_token": csrf_token(client)}
    )
    assert page_retry.status_code in (403, 409)
    refused = client.post(f"/api/v1/runs/{token}/retry")
    assert_retry_after(refused)
    assert refused.get_json()["errors"][0]["code"] == "rate_limited"
    # Reading is never limited: the dashboard, status polls, exports.
    for _ in range(5):
        assert client.get(location).status_code == 200
        assert client.get(f"/api/v1/runs/{token}").status_code == 200
        assert client.get(f"{location}/export.json").status_code == 200


def test_get_requests_are_never_limited(app_factory):
    client = app_factory(
        RATE_LIMIT_UPLOADS="1 per minute", RATE_LIMIT_VALIDATIONS="1 per minute"
    ).test_client()
    for _ in range(5):
        assert client.get("/").status_code == 200
        assert client.get("/api/v1/runs/not-a-token").status_code == 404
        assert client.get("/api/v1/runs").status_code == 405  # POST only


def test_workspace_creation_and_comparisons_are_limited(app_factory):
    client = app_factory(
        RATE_LIMIT_WORKSPACES=TINY, RATE_LIMIT_COMPARISONS=TINY
    ).test_client()
    made = [client.post("/api/v1/workspaces").status_code for _ in range(2)]
    assert made == [201, 201]
    assert_retry_after(client.post("/api/v1/workspaces"))
    # the API, the page and the exports share the comparisons' budget
    assert client.get("/api/v1/compare?runs=a,b").status_code == 404
    assert client.get("/compare?runs=a,b").status_code == 404
    assert_retry_after(client.get("/compare/export.csv?runs=a,b"))
    assert client.get("/api/v1/workspaces/nope").status_code == 404  # reads: never


def test_rate_limits_enabled_false_turns_them_off(app_factory):
    client = app_factory(
        RATE_LIMITS_ENABLED=False, RATE_LIMIT_UPLOADS="1 per minute"
    ).test_client()
    assert {upload(client, NOT_JSONL).status_code for _ in range(4)} == {400}


@pytest.mark.redis
def test_team_mode_counts_in_redis_shared_by_web_processes(app_factory):
    """Two web processes (apps) on one Redis spend one budget per address."""
    services.require("Redis", "127.0.0.1", 6379)
    secret = f"rate-limits-{uuid.uuid4().hex}"  # keys no other test can share
    settings = {
        "REDIS_URL": services.REDIS_URL,
        "SECRET_KEY": secret,
        "RATE_LIMIT_VALIDATIONS": TINY,
    }
    first = app_factory(**settings)
    second = app_factory(**settings)
    with first.test_request_context(environ_base={"REMOTE_ADDR": "127.0.0.1"}):
        from web.security.access import client_id

        client_key = client_id()
    with redis.Redis.from_url(services.REDIS_URL) as store:
        try:
            assert validate(first.test_client()).status_code == 200
            assert validate(second.test_client()).status_code == 200
            keys = store.keys(f"*{client_key}*")
            assert keys, "the counters are in Redis"
            assert all(b"personasteer" in key for key in keys)
            assert_retry_after(validate(first.test_client()))
            assert_retry_after(validate(second.test_client()))
        finally:
            for key in store.scan_iter(f"*{client_key}*"):
                store.delete(key)


def test_an_unreachable_redis_does_not_turn_uploads_into_500s(app_factory):
    client = app_factory(
        REDIS_URL="redis://127.0.0.1:1/0", RATE_LIMIT_UPLOADS=TINY
    ).test_client()
    for _ in range(3):  # the limiter fails open; the queue answers 503
        assert upload(client, sample_bytes()).status_code == 503


@pytest.mark.parametrize("rate", ["lots", "0 per hour", "30 per fortnight", ""])
def test_a_malformed_rate_stops_start_up_naming_the_setting(app_factory, rate):
    with pytest.raises(ConfigError, match="RATE_LIMIT_RETRIES"):
        app_factory(RATE_LIMIT_RETRIES=rate)
    with pytest.raises(ConfigError, match="RATE_LIMIT_UPLOADS"):
        config.from_environ({"RATE_LIMIT_UPLOADS": rate or "per hour"})


def test_rates_from_the_environment():
    parsed = config.from_environ(
        {"RATE_LIMIT_UPLOADS": "5 per minute; 30 per hour", "RATE_LIMITS_ENABLED": "0"}
    )
    assert parsed == {
        "RATE_LIMIT_UPLOADS": "5 per minute; 30 per hour",
        "RATE_LIMITS_ENABLED": False,
    }
