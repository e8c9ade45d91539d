"""Response hardening: a per-request CSP nonce and security headers.

Scripts load only from our own origin or carry the request's nonce; figure
data travels in ``<script type="application/json">`` blocks, which browsers
never execute. Plotly needs inline styles (``style-src 'unsafe-inline'``),
not ``unsafe-eval``. Share links carry secrets in their path, so no page sends
a Referer. HTTPS-only behaviour (HSTS, Secure cookies) follows FORCE_HTTPS so
plain-HTTP development and tests keep working. Behind ``TRUSTED_PROXIES``
reverse proxies the client address is read from X-Forwarded-For, that many
hops back, and nothing else of the forwarded headers is believed.
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, g
from werkzeug.middleware.proxy_fix import ProxyFix


def csp_nonce() -> str:
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    nonce: str = g.csp_nonce
    return nonce


def content_security_policy(nonce: str) -> str:
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' 'nonce-{nonce}'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def init_app(app: Flask) -> None:
    https = app.config["FORCE_HTTPS"]
    app.config.update(
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=https,
        PREFERRED_URL_SCHEME="https" if https else "http",
    )
    app.jinja_env.globals["csp_nonce"] = csp_nonce
    if app.config["TRUSTED_PROXIES"]:
        # Only the client address: links are built from PUBLIC_URL, never
        # from forwarded host or scheme headers.
        # Flask's documented way to add WSGI middleware replaces the method
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=app.config["TRUSTED_PROXIES"], x_proto=0, x_host=0
        )

    @app.after_request
    def add_security_headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = content_security_policy(
            csp_nonce()
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        if https:
            response.headers["Strict-Transport-Security"] = "max-age=31536000"
        if "Cache-Control" not in response.headers:  # assets set their own
            # Pages, exports and API answers carry tokens (a run's, a
            # workspace's, an annotator's) or what they open: no shared or
            # browser cache keeps them. The one exception sets its own: a
            # finished run's view-link pages, which the reader's browser
            # keeps and revalidates by ETag (web/views/final_pages.py)
            response.headers["Cache-Control"] = "no-store"
        return response
