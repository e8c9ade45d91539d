"""The OpenAPI 3.1 description of ``/api/v1``, served at
``/api/v1/openapi.json``. Written by hand, next to docs/api.md, which it
mirrors: the API is small, and a generator (apispec, flask-smorest)
would mean schema classes around every view for eleven operations. A test
walks the app's routes and fails when an ``/api/v1`` route is missing here.
"""

from __future__ import annotations

from flask import current_app

from dataset.importers import IMPORTERS
from reports.paper_methods import platform_version

TOKEN = {
    "name": "token",
    "in": "path",
    "required": True,
    "schema": {"type": "string"},
    "description": "A view token (share link) or a manage token.",
}
MANAGE = {**TOKEN, "description": "The manage token; a view token gets 403."}
INCLUDE = {
    "name": "include",
    "in": "query",
    "schema": {"enum": ["rows"]},
    "description": "rows: every row inline, streamed (as the first release).",
}
ROW_PAGE = [
    {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000},
    },
    {
        "name": "cursor",
        "in": "query",
        "schema": {"type": "string"},
        "description": "next_cursor of the previous page.",
    },
    *(
        {"name": name, "in": "query", "schema": {"type": "string"}}
        for name in ("metric", "method", "session_id", "status", "judge")
    ),
]


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict | str, description: str) -> dict:
    body = _ref(schema) if isinstance(schema, str) else schema
    return {
        "description": description,
        "content": {"application/json": {"schema": body}},
    }


def _errors(*codes: int) -> dict:
    said = {
        400: "Invalid input: every problem with its line, path and code.",
        403: "A view token where the manage token is needed.",
        404: "Unknown token (also after deletion).",
        409: "The run's state does not allow it.",
        413: "Upload larger than MAX_UPLOAD_MB.",
        429: "Rate limit spent; see Retry-After.",
        503: "The queue is unreachable, or (convert) every conversion slot is "
        "taken; nothing was started. See Retry-After when given.",
    }
    return {str(code): _json("Errors", said[code]) for code in codes}


UPLOAD = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "file": {
                        "type": "string",
                        "format": "binary",
                        "description": "required unless upload_ref is sent",
                    },
                    "upload_ref": {
                        "type": "string",
                        "description": "a file validate kept (keep=1), instead of file: "
                        "valid for an hour, once",
                    },
                    "keep": {
                        "type": "string",
                        "enum": ["1"],
                        "description": "validate: keep a valid file for the run and answer "
                        "its upload_ref",
                    },
                    "suites": {"type": "string", "description": "comma-separated"},
                    "judge_model": {"type": "string"},
                    "samples": {"type": "integer", "minimum": 1},
                    "batch": {
                        "type": "string",
                        "enum": ["1", "0"],
                        "description": "1: the judge's requests go through the "
                        "provider's Files and Batches endpoints (docs/judge.md)",
                    },
                    "workspace": {
                        "type": "string",
                        "description": "a workspace's manage token",
                    },
                    "name": {"type": "string", "maxLength": 255},
                    "families": {
                        "type": "string",
                        "description": 'JSON {"methods": {method: family}, '
                        '"judges": {model: family}}: the model families, for '
                        "the judge's self-preference check (docs/input-format.md)",
                    },
                    "method_families": {
                        "type": "string",
                        "description": "METHOD=FAMILY pairs, comma-separated",
                    },
                    "judge_families": {
                        "type": "string",
                        "description": "MODEL=FAMILY pairs, comma-separated",
                    },
                },
            }
        }
    },
}

PATHS = {
    "/api/v1/validate": {
        "post": {
            "summary": "Dry-run validation of an upload; with the run's fields, the"
            " judge calls it would make and the limit. Nothing is stored"
            " unless keep=1: a valid file is then kept for an hour and"
            " the reply's upload_ref starts a run of it without sending"
            " it again. Over the kept files' budget (KEPT_UPLOADS_MB,"
            " KEPT_UPLOADS_PER_CLIENT) the report comes with 429, errors"
            " [keep_refused] and upload_ref null: send the file with the"
            " run.",
            "requestBody": UPLOAD,
            "responses": {
                "200": _json("Validation", "The validation report."),
                **_errors(400, 413, 429),
            },
        }
    },
    "/api/v1/convert": {
        "post": {
            "summary": "Another tool's layout (form field `from`: "
            f"{', '.join(sorted(IMPORTERS))}) converted to our "
            "JSONL, as a download (docs/importers.md); nothing is stored. "
            "Options as the CLI's: `profile`, `personality`, `method`, "
            "`language` (characterbench: zh or en; its dimension is "
            "the file's name). "
            "At most CONVERT_SLOTS run at once on a server: one more is "
            "a 503 convert_busy with Retry-After.",
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file", "from"],
                            "properties": {
                                "file": {"type": "string", "format": "binary"},
                                "from": {"type": "string"},
                            },
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "The converted JSONL; counts in "
                    "X-Sessions-Converted and X-Records-Skipped, "
                    "the session ids made (records without one, or "
                    "whose id an earlier record took) in X-Ids-Made "
                    "and X-Ids-Renamed.",
                    "content": {"application/jsonl": {}},
                },
                **_errors(400, 413, 429, 503),
            },
        }
    },
    "/api/v1/runs": {
        "post": {
            "summary": "Start a run.",
            "requestBody": UPLOAD,
            "responses": {
                "202": _json(
                    "RunCreated", "Accepted; the manage token is given only here."
                ),
                **_errors(400, 403, 404, 413, 429, 503),
            },
        }
    },
    "/api/v1/runs/{token}": {
        "get": {
            "summary": "Status, progress, counts, summary and links; no rows (cheap to poll).",
            "parameters": [TOKEN, INCLUDE],
            "responses": {"200": _json("RunStatus", "The run."), **_errors(404)},
        },
        "patch": {
            "summary": "Rename, tag or comment a run.",
            "parameters": [MANAGE],
            "requestBody": {
                "content": {"application/json": {"schema": _ref("RunFields")}}
            },
            "responses": {
                "200": _json("RunListed", "The run as a workspace lists it."),
                **_errors(400, 403, 404),
            },
        },
        "delete": {
            "summary": "Delete the run, its rows, cache entries only it used and its upload.",
            "parameters": [MANAGE],
            "responses": {"204": {"description": "Deleted."}, **_errors(403, 404)},
        },
    },
    "/api/v1/runs/{token}/results": {
        "get": {
            "summary": "The whole results document, rows streamed (rows so far while running).",
            "parameters": [
                TOKEN,
                {
                    "name": "min_effect",
                    "in": "query",
                    "schema": {"type": "number", "exclusiveMinimum": 0},
                    "description": "A standardized effect dz: each comparison also gives "
                    "sessions_for_min_effect (80% power, alpha 0.05).",
                },
                {
                    "name": "holm",
                    "in": "query",
                    "schema": {"type": "string", "enum": ["metric", "table"]},
                    "description": "Holm family of delta_p_holm: within each metric "
                    "(default) or across every compared metric of a suite's table; "
                    "stated as holm_family.",
                },
            ],
            "responses": {
                "200": _json(
                    {"description": "personasteer.results/v1"}, "The document."
                ),
                **_errors(400, 404),
            },
        }
    },
    "/api/v1/runs/{token}/rows": {
        "get": {
            "summary": "One page of tidy rows; follow next until it is null.",
            "parameters": [TOKEN, *ROW_PAGE],
            "responses": {
                "200": _json("RowsPage", "A page of rows."),
                **_errors(400, 404),
            },
        }
    },
    "/api/v1/runs/{token}/cancel": {
        "post": {
            "summary": "Cancel a queued or running run.",
            "parameters": [MANAGE],
            "responses": {
                "202": _json({"type": "object"}, "Cancelled."),
                **_errors(403, 404, 409),
            },
        }
    },
    "/api/v1/runs/{token}/retry": {
        "post": {
            "summary": "Re-run the failed rows as a new run of the same upload and settings.",
            "parameters": [MANAGE],
            "responses": {
                "202": _json("RunCreated", "The retry's links."),
                **_errors(403, 404, 409, 429, 503),
            },
        }
    },
    "/api/v1/runs/{token}/annotations": {
        "post": {
            "summary": "Start an annotation queue: a stratified random sample of the "
            "run's replies (seed recorded) that people label blind through "
            "the returned annotator link; an earlier queue is closed.",
            "parameters": [MANAGE],
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {
                                    "type": "integer",
                                    "minimum": 10,
                                    "maximum": 1000,
                                },
                                "per_item": {
                                    "type": "integer",
                                    "minimum": 1,
                                    "maximum": 10,
                                },
                                "dimensions": {"type": "boolean"},
                            },
                        }
                    }
                }
            },
            "responses": {
                "201": _json(
                    {
                        "type": "object",
                        "properties": {
                            "annotator_url": {"type": "string"},
                            "token": {"type": "string"},
                            "items": {"type": "integer"},
                            "seed": {"type": "integer"},
                            "per_item": {"type": "integer"},
                        },
                    },
                    "The queue and its annotator link.",
                ),
                **_errors(400, 403, 404, 409),
            },
        }
    },
    "/api/v1/runs/{token}/annotators": {
        "post": {
            "summary": "Make an annotator's own link to the run's annotation queue: the "
            "name is fixed in its token, so its holder labels as that name "
            "only (asked again for the same name: the same link).",
            "parameters": [MANAGE],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string", "maxLength": 80}},
                        }
                    }
                },
            },
            "responses": {
                "201": _json(
                    {
                        "type": "object",
                        "properties": {
                            k: {"type": "string"}
                            for k in ("name", "token", "annotator_url")
                        },
                    },
                    "The annotator's link.",
                ),
                **_errors(400, 403, 404),
            },
        }
    },
    "/api/v1/runs/{token}/labels": {
        "post": {
            "summary": "Import a labels.jsonl exported from another run of the same "
            "replies (matched by the SHA-256 of the reply text) into a new "
            "annotation queue of this run.",
            "parameters": [MANAGE],
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": ["file"],
                            "properties": {
                                "file": {"type": "string", "format": "binary"}
                            },
                        }
                    }
                },
            },
            "responses": {
                "200": _json(
                    {
                        "type": "object",
                        "properties": {
                            "imported": {"type": "integer"},
                            "unmatched": {"type": "integer"},
                        },
                    },
                    "How many labels were imported and how many matched no reply.",
                ),
                **_errors(400, 403, 404, 409),
            },
        }
    },
    "/api/v1/workspaces": {
        "post": {
            "summary": "Create a workspace: no body, a JSON object or a form "
            "(name optional); any other body is a 400.",
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                        }
                    }
                }
            },
            "responses": {
                "201": _json("WorkspaceCreated", "Created."),
                **_errors(400, 429),
            },
        }
    },
    "/api/v1/workspaces/{token}": {
        "get": {
            "summary": "The workspace's runs, newest first (view links only).",
            "parameters": [TOKEN],
            "responses": {"200": _json("Workspace", "The workspace."), **_errors(404)},
        },
        "patch": {
            "summary": 'Rename the workspace: {"name": "..."}.',
            "parameters": [MANAGE],
            "responses": {
                "200": _json(
                    {"type": "object", "properties": {"name": {"type": "string"}}},
                    "The new name.",
                ),
                **_errors(400, 403, 404),
            },
        },
        "delete": {
            "summary": "Delete the workspace and every run in it.",
            "parameters": [MANAGE],
            "responses": {"204": {"description": "Deleted."}, **_errors(403, 404)},
        },
    },
    "/api/v1/compare": {
        "get": {
            "summary": "Compare finished runs over their shared sessions.",
            "parameters": [
                {
                    "name": "runs",
                    "in": "query",
                    "required": True,
                    "schema": {"type": "string"},
                    "description": "Comma-separated run tokens (2 to MAX_COMPARED_RUNS).",
                }
            ],
            "responses": {
                "200": _json("Comparison", "The comparison."),
                "202": _json(
                    {
                        "type": "object",
                        "properties": {
                            "state": {"const": "computing"},
                            "retry_after_s": {"type": "integer"},
                        },
                    },
                    "A worker is computing it; ask again after Retry-After seconds.",
                ),
                **_errors(400, 404, 409, 429),
            },
        }
    },
    "/api/v1/openapi.json": {
        "get": {
            "summary": "This description.",
            "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1.")},
        }
    },
}

STRING, INTEGER, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "number"}
NULLABLE_NUMBER = {"type": ["number", "null"]}
SCHEMAS = {
    "Errors": {
        "type": "object",
        "properties": {
            "errors": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "line": {"type": ["integer", "null"]},
                        "path": STRING,
                        "code": STRING,
                        "message": STRING,
                        "params": {"type": "object"},
                    },
                },
            },
            "retry_after": INTEGER,
        },
    },
    "RunCreated": {
        "type": "object",
        "properties": {
            k: STRING
            for k in (
                "id",
                "token",
                "manage_token",
                "status_url",
                "dashboard_url",
                "manage_url",
            )
        },
    },
    "RunStatus": {
        "type": "object",
        "properties": {
            "status": STRING,
            "progress": {"type": "object"},
            "counts": {"type": "object"},
            "summary": {"type": ["object", "null"]},
            "provisional": {
                "type": ["object", "null"],
                "properties": {
                    "sessions": {"type": "integer"},
                    "of_sessions": {"type": "integer"},
                    "computed_at": STRING,
                    "summary": {"type": "object"},
                },
            },
            "batch": {
                "type": ["object", "null"],
                "description": "a batch-mode run's batch part (docs/judge.md): stage,"
                " note and reason (why it went online), failures and"
                " error (steps failed in a row), skipped (output lines"
                " by kind), missing (requests no line answered), notes;"
                " null for an online run",
            },
            "links": {
                "type": "object",
                "properties": {
                    k: STRING
                    for k in (
                        "status",
                        "dashboard",
                        "results",
                        "rows",
                        "export_csv",
                        "export_json",
                    )
                },
            },
            "results": {
                "description": "once final, personasteer.results/v1"
                " without rows (with them under"
                " ?include=rows); else null"
            },
        },
    },
    "RowsPage": {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "object"}},
            "next_cursor": {"type": ["string", "null"]},
            "next": {"type": ["string", "null"]},
        },
    },
    "Validation": {
        "type": "object",
        "properties": {
            "valid": {"type": "boolean"},
            "errors": {"type": "array"},
            "errors_total": INTEGER,
            "warnings": {"type": "array"},
            "sessions": INTEGER,
            "methods": {"type": "array", "items": STRING},
            "suites": {"type": "array", "items": STRING},
            "looks_like": {
                "type": "string",
                "nullable": True,
                "description": "an invalid file's known layout (POST /api/v1/convert)",
            },
            "estimate": {"type": "object", "description": "per suite, one sample"},
            "judge_calls": {
                "type": "object",
                "properties": {"estimate": INTEGER, "limit": INTEGER},
            },
        },
    },
    "RunFields": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 255},
            "tags": {"type": "array", "items": STRING, "maxItems": 20},
            "comment": {"type": "string", "maxLength": 5000},
        },
    },
    "RunListed": {
        "type": "object",
        "properties": {
            **{
                k: STRING
                for k in (
                    "token",
                    "name",
                    "file_name",
                    "judge_model",
                    "status",
                    "comment",
                    "created_at",
                    "finished_at",
                    "dashboard_url",
                )
            },
            "sessions": INTEGER,
            "methods": {"type": "array", "items": STRING},
            "suites": {"type": "array", "items": STRING},
            "prompt_versions": {"type": ["object", "null"]},
            "tags": {"type": "array", "items": STRING},
            "counts": {"type": "object"},
        },
    },
    "WorkspaceCreated": {
        "type": "object",
        "properties": {
            k: STRING for k in ("token", "manage_token", "url", "manage_url")
        },
    },
    "Workspace": {
        "type": "object",
        "properties": {
            "name": STRING,
            "runs": {"type": "array", "items": _ref("RunListed")},
        },
    },
    "Comparison": {
        "type": "object",
        "required": ["runs", "columns", "summary", "comparisons", "agreement"],
        "properties": {
            "schema": {"const": "personasteer.comparison/v1"},
            "runs": {"type": "array", "items": {"type": "object"}},
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"label": STRING, "run": STRING, "method": STRING},
                },
            },
            "shared": {
                "type": "object",
                "properties": {
                    "sessions": INTEGER,
                    "rounds": {"type": ["integer", "null"]},
                },
            },
            "summary": {
                "type": "object",
                "description": "column -> metric -> value, with <metric>_n",
            },
            "curves": {"type": "object"},
            "comparisons": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "metric": STRING,
                        "a": STRING,
                        "b": STRING,
                        "diff": NULLABLE_NUMBER,
                        "ci_low": NULLABLE_NUMBER,
                        "ci_high": NULLABLE_NUMBER,
                        "p_value": NULLABLE_NUMBER,
                        "p_holm": NULLABLE_NUMBER,
                        "n": INTEGER,
                    },
                },
            },
            "agreement": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "metric": STRING,
                        "method": STRING,
                        "a": STRING,
                        "b": STRING,
                        "scale": {"enum": ["interval", "nominal"]},
                        "n": INTEGER,
                        "spearman": NULLABLE_NUMBER,
                        "krippendorff_alpha": NULLABLE_NUMBER,
                        "cohen_kappa": NULLABLE_NUMBER,
                        "percent_agreement": NULLABLE_NUMBER,
                        "reason": {"type": ["string", "null"]},
                    },
                },
            },
        },
    },
}


def document() -> dict:
    servers = (
        [{"url": current_app.config["PUBLIC_URL"]}]
        if current_app.config.get("PUBLIC_URL")
        else []
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "PersonaSteer Benchmark API",
            "version": platform_version(),
            "description": "See docs/api.md. Errors follow "
            "?lang=en|zh|ko like the pages.",
        },
        **({"servers": servers} if servers else {}),
        "paths": PATHS,
        "components": {"schemas": SCHEMAS},
    }
