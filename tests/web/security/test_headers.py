"""Response hardening (web/security/headers.py): one CSP nonce per request,
used by the page's own scripts, and the headers on every answer."""

import re

from web.security.headers import content_security_policy


def test_every_answer_carries_the_headers_and_a_fresh_nonce(client):
    first, second = client.get("/"), client.get("/healthz")
    for response in (first, second):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert "Strict-Transport-Security" not in response.headers  # FORCE_HTTPS off
    nonces = [
        re.search(r"'nonce-([^']+)'", r.headers["Content-Security-Policy"]).group(1)
        for r in (first, second)
    ]
    assert nonces[0] != nonces[1]
    page = first.get_data(as_text=True)
    scripts = re.findall(r"<script(?![^>]*application/json)([^>]*)>", page)
    assert scripts and all(f'nonce="{nonces[0]}"' in s or "src=" in s for s in scripts)


def test_the_policy_allows_no_inline_script_without_the_nonce():
    policy = content_security_policy("abc")
    assert "script-src 'self' 'nonce-abc'" in policy
    assert "unsafe-eval" not in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy


def test_https_turns_on_hsts_and_secure_cookies(app_factory):
    app = app_factory(FORCE_HTTPS=True)
    response = app.test_client().get("/healthz", base_url="https://localhost")
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000"
    assert app.config["SESSION_COOKIE_SECURE"] is True
