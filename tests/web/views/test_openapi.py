"""The OpenAPI description covers every /api/v1 route and method, and its
references resolve."""

from __future__ import annotations

import io
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


def test_the_request_schemas_are_the_ones_the_server_validates_with(app_factory):
    """Issue 60: the document was written by hand beside the form checks
    (``from`` no enum, ``file`` not required); now both are the marshmallow
    schemas of web/views/schemas.py, with the bounds the configuration sets."""
    from dataset.importers import IMPORTERS

    app = app_factory(MAX_SAMPLES=7, MAX_COMPARED_RUNS=5)
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    shapes = document["components"]["schemas"]
    assert shapes["ConvertForm"]["properties"]["from"]["enum"] == sorted(IMPORTERS)
    assert set(shapes["ConvertForm"]["required"]) == {"file", "from"}
    assert shapes["ValidateForm"]["required"] == ["file"]
    assert shapes["RunForm"]["anyOf"] == [
        {"required": ["file"]},
        {"required": ["upload_ref"], "properties": {"upload_ref": {"minLength": 1}}},
    ]
    assert shapes["RunForm"]["properties"]["samples"]["maximum"] == 7
    runs, holm = document["paths"]["/api/v1/compare"]["get"]["parameters"]
    assert holm["schema"]["enum"] == ["metric", "table"]
    assert (runs["schema"]["minItems"], runs["schema"]["maxItems"]) == (2, 5)
    # the server refuses what the document refuses, naming field and code
    client = app.test_client()
    answer = client.post(
        "/api/v1/convert",
        data={"file": (io.BytesIO(b"{}"), "a.json"), "from": "nope"},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 400
    [error] = answer.get_json()["errors"]
    assert (error["path"], error["code"]) == ("from", "unknown_layout")


def test_a_created_run_or_workspace_links_to_the_operations_on_its_token(client):
    document = client.get("/api/v1/openapi.json").get_json()
    ids = {
        operation["operationId"]
        for operations in document["paths"].values()
        for operation in operations.values()
    }
    run = document["paths"]["/api/v1/runs"]["post"]["responses"]["202"]["links"]
    space = document["paths"]["/api/v1/workspaces"]["post"]["responses"]["201"]
    for links in (run, space["links"]):
        assert links and all(link["operationId"] in ids for link in links.values())
        for link in links.values():
            assert link["parameters"] == {"token": "$response.body#/manage_token"}
    on_tokens = {
        operation["operationId"]
        for path, operations in document["paths"].items()
        if path.startswith(("/api/v1/runs/{token}", "/api/v1/workspaces/{token}"))
        for operation in operations.values()
    }
    linked = {link["operationId"] for link in [*run.values(), *space["links"].values()]}
    assert linked == on_tokens


def test_every_operation_names_the_statuses_it_can_answer(client):
    document = client.get("/api/v1/openapi.json").get_json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            said = set(operation["responses"])
            assert "503" in said, (method, path)
            if operation.get("parameters"):
                assert "400" in said, (method, path)
            if "requestBody" in operation:
                assert "413" in said, (method, path)


def test_the_document_is_built_once_an_app_as_every_language_builds_it(client):
    """``openapi.served`` keeps the document of an app's first request: a
    build in each language's request gives the same document (its prose
    is English under every ``?lang=``), and the settings are the app's."""
    from web.views import openapi

    app = client.application
    served = client.get("/api/v1/openapi.json?lang=zh").get_json()
    assert app.extensions["openapi"] is not None
    for lang in ("en", "zh", "ko"):
        with app.test_request_context(f"/api/v1/openapi.json?lang={lang}"):
            assert json.loads(app.json.dumps(openapi.document())) == served, lang
        again = client.get(f"/api/v1/openapi.json?lang={lang}")
        assert again.get_json() == served, lang


def test_an_annotator_name_the_document_allows_is_one_the_service_takes(client):
    """Schemathesis's stateful phase sent ``{"name": ""}``, which the document
    allowed and the service refused (it strips the name first): the pattern
    now asks for a character besides white space, as ``str.strip`` knows it."""
    from core.problems import Rejected
    from pipeline.service.annotations import annotator_name

    document = client.get("/api/v1/openapi.json").get_json()
    operation = document["paths"]["/api/v1/runs/{token}/annotators"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = document["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    allowed = re.compile(body["properties"]["name"]["pattern"])
    blanks = [chr(code) for code in range(0x110000) if chr(code).isspace()]
    for name in ["ann", " a ", "", *blanks, "".join(blanks), "x\x1c", "\u200b"]:
        try:
            annotator_name(name)
            taken = True
        except Rejected:
            taken = False
        assert bool(allowed.search(name)) == taken, repr(name)
