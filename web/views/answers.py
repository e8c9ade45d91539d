"""The API's answers as marshmallow schemas, for the OpenAPI document
(``web/views/openapi.py`` registers them by these names): what each body
holds, each field that may be null said so. The views build their bodies
themselves (docs/api.md is the contract); Schemathesis holds every answer
to these shapes (tests/web/views/test_api_contract.py). An answer may gain
fields: unknown ones are allowed (``additionalProperties``)."""

from __future__ import annotations

from typing import Any

from marshmallow import INCLUDE, Schema, fields


def described(description: str) -> dict[str, Any]:
    return {"metadata": {"description": description}}


class Answer(Schema):
    class Meta:
        unknown = INCLUDE  # the document says: more fields may come


def strings(
    *names: str, nullable: tuple[str, ...] = ()
) -> dict[str, fields.Field[Any]]:
    return {name: fields.String(allow_none=name in nullable) for name in names}


class Problem(Answer):
    line = fields.Integer(allow_none=True)
    path = fields.String()
    code = fields.String(**described("core/problems.py"))
    message = fields.String(**described("in the language of ?lang="))
    params = fields.Dict()


class Errors(Answer):
    errors = fields.List(fields.Nested(Problem))
    retry_after = fields.Integer()


RunCreated = Answer.from_dict(
    strings("id", "token", "manage_token", "status_url", "dashboard_url", "manage_url"),
    name="RunCreated",
)


class Provisional(Answer):
    sessions = fields.Integer()
    of_sessions = fields.Integer()
    computed_at = fields.String()
    summary = fields.Dict()


RunLinks = Answer.from_dict(
    strings("status", "dashboard", "results", "rows", "export_csv", "export_json"),
    name="RunLinks",
)


class RunStatus(Answer):
    status = fields.String()
    progress = fields.Dict()
    counts = fields.Dict()
    summary = fields.Dict(allow_none=True)
    provisional = fields.Nested(Provisional, allow_none=True)
    batch = fields.Dict(
        allow_none=True,
        **described(
            "a batch-mode run's batch part (docs/judge.md): stage, note and"
            " reason (why it went online), failures and error (steps failed in"
            " a row), skipped (output lines by kind), missing (requests no line"
            " answered), notes; null for an online run"
        ),
    )
    links = fields.Nested(RunLinks)
    results = fields.Raw(
        allow_none=True,
        **described(
            "once final, personasteer.results/v1 without rows (with them under"
            " ?include=rows); else null"
        ),
    )


class RowsPage(Answer):
    rows = fields.List(fields.Dict())
    next_cursor = fields.String(allow_none=True)
    next = fields.String(allow_none=True)


class JudgeCalls(Answer):
    estimate = fields.Integer()
    limit = fields.Integer()


class Validation(Answer):
    valid = fields.Boolean()
    errors = fields.List(fields.Nested(Problem))
    errors_total = fields.Integer()
    warnings = fields.List(fields.Nested(Problem))
    sessions = fields.Integer()
    methods = fields.List(fields.String())
    suites = fields.List(fields.String())
    looks_like = fields.String(
        allow_none=True,
        **described("an invalid file's known layout (POST /api/v1/convert)"),
    )
    estimate = fields.Dict(**described("per suite, one sample"))
    judge_calls = fields.Nested(JudgeCalls)


class RunListed(Answer):
    class Meta(Answer.Meta):
        include = strings(
            "token",
            "name",
            "file_name",
            "judge_model",
            "status",
            "comment",
            "created_at",
            "finished_at",
            "dashboard_url",
            nullable=("name", "judge_model", "comment", "finished_at"),
        )

    sessions = fields.Integer()
    methods = fields.List(fields.String())
    suites = fields.List(fields.String())
    prompt_versions = fields.Dict(allow_none=True)
    tags = fields.List(fields.String())
    counts = fields.Dict()


WorkspaceCreated = Answer.from_dict(
    strings("token", "manage_token", "url", "manage_url"), name="WorkspaceCreated"
)


class Workspace(Answer):
    name = fields.String(allow_none=True)
    runs = fields.List(fields.Nested(RunListed))


ANSWERS: dict[str, type[Schema]] = {
    "Errors": Errors,
    "RunCreated": RunCreated,
    "RunStatus": RunStatus,
    "RowsPage": RowsPage,
    "Validation": Validation,
    "RunListed": RunListed,
    "WorkspaceCreated": WorkspaceCreated,
    "Workspace": Workspace,
}
