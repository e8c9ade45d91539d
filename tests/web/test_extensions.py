"""The app's services as a request handler reaches them (web/extensions.py)."""

from web import extensions


def test_the_helpers_hand_out_the_app_s_own_services(app):
    with app.test_request_context("/"):
        assert extensions.storage() is app.extensions["storage"]
        assert extensions.runs() is app.extensions["runs"]
        service = extensions.annotation_service()
        assert service.storage is app.extensions["storage"]


def endpoint_of(app, path):
    return next(rule.endpoint for rule in app.url_map.iter_rules() if rule.rule == path)


def test_a_link_is_absolute_on_public_url_and_never_on_the_host_header(app_factory):
    for public, expected in (
        (None, "/healthz"),
        ("https://bench.example", "https://bench.example/healthz"),
    ):
        app = app_factory(PUBLIC_URL=public)
        with app.test_request_context("/", headers={"Host": "evil.example"}):
            assert extensions.link(endpoint_of(app, "/healthz")) == expected
