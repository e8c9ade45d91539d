"""The OpenAPI description covers every /api/v1 route and method, and its
references resolve."""

from __future__ import annotations

import json
import re


def test_every_api_route_is_described(client):
    reply = client.get("/api/v1/openapi.json")
    assert reply.status_code == 200
    document = reply.get_json()
    assert document["openapi"] == "3.1.0"
    routes = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in client.application.url_map.iter_rules()
        if rule.rule.startswith("/api/v1/")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    described = {
        (path, method)
        for path, operations in document["paths"].items()
        for method in operations
    }
    assert routes == described


def test_references_resolve(client):
    document = client.get("/api/v1/openapi.json").get_json()
    text = json.dumps(document)
    for name in set(re.findall(r'"#/components/schemas/(\w+)"', text)):
        assert name in document["components"]["schemas"], name
