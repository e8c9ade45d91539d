"""The API's requests as marshmallow schemas: each view loads its form, JSON
body or query through one of them, and the OpenAPI document
(``web/views/openapi.py``) is generated from the same classes by apispec,
so what the document allows and what the server takes cannot drift apart.

A refusal keeps the API's one error shape: every problem names its field
(``path``) and its code from ``core/problems.py``, with the code's
parameters. The fields' own messages are replaced by codes
(``CODED_MESSAGES``) and the validators below raise coded errors; apispec
reads the validators' bounds (``Length``, ``Range``, ``OneOf``,
``Regexp``) into the document, so they are subclasses of marshmallow's.
Bounds that come from the configuration are read when the schema is
built (``for_config``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, TypedDict

from marshmallow import (
    EXCLUDE,
    Schema,
    ValidationError,
    fields,
    validate,
    validates_schema,
)
from werkzeug.datastructures import FileStorage, MultiDict

from core.problems import MESSAGES, Problem, Rejected
from dataset.characterbench import LANGUAGES
from dataset.fields import type_name
from dataset.importers import IMPORTERS, reading
from metrics import basis, registry
from pipeline.service.annotations import MAX_ANNOTATOR_CHARS, PER_ITEM_RANGE, SIZE_RANGE
from pipeline.service.run_request import MAX_RUN_NAME_CHARS

MAX_TAGS, MAX_TAG_CHARS, MAX_COMMENT_CHARS = 20, 64, 5000
MAX_ROWS_PAGE, ROWS_PAGE = 10_000, 1000
TRUE_WORDS, FALSE_WORDS = ("1", "on", "true", "yes"), ("0", "off", "false", "no")


def coded(code: str, **params: Any) -> ValidationError:
    """A field's problem as its code and parameters (``core/problems.py``)."""
    return ValidationError([{"code": code, **params}])


# marshmallow's own messages, as the problem codes they stand for
CODED_MESSAGES = {"required": "missing_field", "null": "wrong_type"}
EXPECTED = {
    fields.String: "string",
    fields.Integer: "integer",
    fields.Float: "number",
    fields.Boolean: "boolean",
    fields.List: "array",
}


class Storable(validate.Regexp):
    """Text both databases store: no NUL (the document's pattern) and no
    lone surrogate (not UTF-8, which no pattern can say)."""

    def __init__(self) -> None:
        super().__init__(r"^[^\x00]*$")

    def __call__(self, value: Any) -> Any:
        if "\x00" in value:
            raise coded("bad_characters")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise coded("bad_characters") from None
        return value


# what str.strip() removes, which pipeline/service/annotations.annotator_name
# does before it refuses an empty name; as \\uXXXX, read alike by Python and
# by the document's (ECMA) patterns
_SPACE = "".join(f"\\u{code:04x}" for code in range(0x110000) if chr(code).isspace())


class Named(Storable):
    """Storable text with a character besides white space: a name. The
    document's pattern says so, or a blank name it allowed was refused."""

    def __init__(self) -> None:
        validate.Regexp.__init__(self, rf"^[^\x00]*[^\x00{_SPACE}][^\x00]*$")

    def __call__(self, value: Any) -> Any:
        super().__call__(value)
        if not value.strip():
            raise coded("missing_field")
        return value


class Matches(validate.Regexp):
    """A pattern, refused with ``code``."""

    def __init__(self, pattern: str, code: str) -> None:
        super().__init__(pattern)
        self.code = code

    def __call__(self, value: Any) -> Any:
        if self.regex.match(value) is None:
            raise coded(self.code, value=str(value)[:20])
        return value


class Longest(validate.Length):
    """At most ``limit`` characters (or items: ``code="too_many_tags"``)."""

    def __init__(self, limit: int, minimum: int | None = None, code: str = "") -> None:
        super().__init__(min=minimum, max=limit)
        self.code = code

    def __call__(self, value: Any) -> Any:
        if self.min is not None and len(value) < self.min:
            raise coded("missing_field")
        if self.max is not None and len(value) > self.max:
            if self.code:
                raise coded(self.code, count=len(value), limit=self.max)
            raise coded("too_long", length=len(value), limit=self.max)
        return value


class Within(validate.Range):
    """A number from ``low`` to ``high``; ``code`` and its parameters say
    so when it is not (``out_of_range`` unless told)."""

    def __init__(
        self,
        low: float,
        high: float | None,
        code: str = "out_of_range",
        above: bool = False,
        **params: object,
    ) -> None:
        super().__init__(min=low, max=high, min_inclusive=not above)
        self.code, self.params = code, params or {"low": low, "high": high}

    def __call__(self, value: Any) -> Any:
        low = self.min is not None and (
            value < self.min or (not self.min_inclusive and value == self.min)
        )
        if low or (self.max is not None and value > self.max):
            raise coded(self.code, value=str(value)[:20], **self.params)
        return value


class Choice(validate.OneOf):
    """One of ``choices``; else ``code`` with ``params``."""

    def __init__(self, choices: Iterable[object], code: str, **params: object) -> None:
        super().__init__(list(choices))
        self.code, self.params = code, params

    def __call__(self, value: Any) -> Any:
        if value not in self.choices:
            raise coded(self.code, **self.params)
        return value


class UploadField(fields.Raw):
    """A file part of a multipart form (its ``contentMediaType``:
    ``openapi.file_part``)."""

    def __init__(self, code: str = "missing_file", **kwargs: Any) -> None:
        super().__init__(
            metadata=kwargs.pop("metadata", {}),
            error_messages={"required": [{"code": code}]},
            **kwargs,
        )

    def _deserialize(
        self,
        value: Any,
        attr: str | None,
        data: Mapping[str, Any] | None,
        **kwargs: Any,
    ) -> Any:
        if not getattr(value, "filename", None):
            raise coded("missing_file")
        return value


class Whole(fields.Integer):
    """A JSON integer, as JSON Schema counts them: 3 or 3.0, never "3"."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return super()._validated(value)


def text(limit: int | None = None, **kwargs: Any) -> fields.String:
    """A text field databases can store, of at most ``limit`` characters."""
    validators = [Storable()] + ([Longest(limit)] if limit is not None else [])
    return fields.String(validate=validators, **kwargs)


class Described(TypedDict):
    """A field's OpenAPI words, passed on as its ``metadata`` argument."""

    metadata: dict[str, Any]


def described(description: str, **metadata: Any) -> Described:
    return {"metadata": {"description": description, **metadata}}


class RequestSchema(Schema):
    """Unknown fields are ignored (as the forms always did: the document
    allows them); each marshmallow message becomes a problem code."""

    class Meta:
        unknown = EXCLUDE

    def on_bind_field(self, field_name: str, field_obj: fields.Field[Any]) -> None:
        for key, message in list(field_obj.error_messages.items()):
            if isinstance(message, str):
                field_obj.error_messages[key] = [
                    {"code": CODED_MESSAGES.get(key, "wrong_type")}
                ]
        if isinstance(field_obj, fields.List):
            self.on_bind_field(field_name, field_obj.inner)


# -- forms -------------------------------------------------------------------
def _run_form_fields(config: Mapping[str, Any]) -> dict[str, fields.Field[Any]]:
    """The run's fields, as the upload form and ``POST /api/v1/runs`` take
    them (``web/views/forms.py`` reads them into a ``RunRequest``)."""
    maximum = config["MAX_SAMPLES"]
    found: dict[str, fields.Field[Any]] = {
        "file": UploadField(**described("the JSONL file (docs/input-format.md)")),
        "suites": text(**described("suite names, comma-separated or repeated")),
        "judge_model": text(
            **described("judge model(s), comma-separated or repeated: a panel")
        ),
        "samples": fields.Integer(
            strict=False,
            error_messages={
                key: [{"code": "samples_out_of_range", "maximum": maximum}]
                for key in ("invalid", "too_large")
            },
            validate=Within(1, maximum, "samples_out_of_range", maximum=maximum),
        ),
        "batch": fields.String(
            validate=Choice(TRUE_WORDS + FALSE_WORDS, "wrong_type", expected="0 or 1"),
            **described(
                "1: the judge's requests go through the provider's Files and"
                " Batches endpoints (docs/judge.md)"
            ),
        ),
        "workspace": text(**described("a workspace's manage token")),
        "name": text(
            **described(f"the run's name, cut to {MAX_RUN_NAME_CHARS} characters")
        ),
        "families": text(
            **described(
                'JSON {"methods": {method: family}, "judges": {model: family}}:'
                " the model families, for the judge's self-preference check"
                " (docs/input-format.md)"
            )
        ),
        "method_families": text(**described("METHOD=FAMILY pairs, comma-separated")),
        "judge_families": text(**described("MODEL=FAMILY pairs, comma-separated")),
        "protocol": text(
            **described("a built-in judge protocol's name, or a protocol's TOML text")
        ),
        "protocol_file": UploadField(
            required=False, **described("a judge protocol file (TOML)")
        ),
    }
    for suite in registry.suites():  # each suite's options, as JSON text
        for option in suite.options:
            found.setdefault(option.name, text(**described(f"{suite.name}: JSON")))
    return found


class _RunsForm(RequestSchema):
    @validates_schema
    def file_or_kept(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "file" not in data and not data.get("upload_ref"):
            raise ValidationError([{"code": "missing_file"}], "file")


@lru_cache(maxsize=8)
def _forms(max_samples: int, max_text: int) -> dict[str, type[Schema]]:
    config = {"MAX_SAMPLES": max_samples}
    run = _run_form_fields(config)
    settings = {k: v for k, v in _run_form_fields(config).items() if k != "file"}
    runs = {
        **run,
        "file": UploadField(required=False, **described("required unless upload_ref")),
        "upload_ref": fields.String(  # the page sends it empty with a file
            validate=Longest(200),
            **described(
                "a file validate kept (keep=1), instead of file: valid for an"
                " hour, once"
            ),
        ),
    }
    checked = {
        **run,
        "file": UploadField(required=True, **described("the JSONL file")),
        "keep": fields.String(
            validate=Choice(("0", "1"), "wrong_type", expected="0 or 1"),
            **described("1: keep a valid file for the run and answer its upload_ref"),
        ),
    }
    convert = {
        "file": UploadField(required=True),
        "from": fields.String(
            required=True,
            validate=Choice(
                sorted(IMPORTERS), "unknown_layout", layouts=sorted(IMPORTERS)
            ),
            **described("the other tool's layout (docs/importers.md)"),
        ),
        "profile": text(max_text, load_default=""),
        "personality": text(max_text, load_default=""),
        "method": text(max_text, load_default=""),
        "language": fields.String(
            load_default="zh",
            validate=Choice(LANGUAGES, "unknown_language", languages=LANGUAGES),
            **described("the file's language, for " + ", ".join(reading("language"))),
        ),
    }
    return {
        "RunSettings": RequestSchema.from_dict(settings, name="RunSettings"),
        "RunForm": _RunsForm.from_dict(runs, name="RunForm"),
        "ValidateForm": RequestSchema.from_dict(checked, name="ValidateForm"),
        "ConvertForm": RequestSchema.from_dict(convert, name="ConvertForm"),
    }


def forms_for(config: Mapping[str, Any]) -> dict[str, type[Schema]]:
    return _forms(config["MAX_SAMPLES"], config["MAX_TEXT_CHARS"])


class LabelsForm(RequestSchema):
    file = UploadField(required=True, **described("a labels.jsonl of another run"))


# -- JSON bodies ---------------------------------------------------------------
class NewWorkspace(RequestSchema):
    name = text(allow_none=True, **described("cut to 255 characters"))


class WorkspaceName(RequestSchema):
    name = text(required=True, **described("cut to 255 characters"))


class RunFields(RequestSchema):
    name = text(MAX_RUN_NAME_CHARS, allow_none=True)
    tags = fields.List(
        text(MAX_TAG_CHARS), validate=Longest(MAX_TAGS, code="too_many_tags")
    )
    comment = text(MAX_COMMENT_CHARS, allow_none=True)


class NewQueue(RequestSchema):
    size = Whole(required=True, validate=Within(*SIZE_RANGE))
    per_item = Whole(load_default=1, validate=Within(*PER_ITEM_RANGE))
    dimensions = fields.Boolean(load_default=False, truthy={True}, falsy={False})


class NewAnnotator(RequestSchema):
    name = fields.String(
        validate=[Named(), Longest(MAX_ANNOTATOR_CHARS)], required=True
    )


# -- queries -------------------------------------------------------------------
class StatusQuery(RequestSchema):
    include = fields.String(
        validate=Choice(("rows",), "wrong_type", expected="rows"),
        **described("rows: every row inline, streamed (as the first release)"),
    )


class HolmQuery(RequestSchema):
    holm = fields.String(
        load_default="metric",
        validate=Choice(basis.HOLM_FAMILIES, "bad_holm"),
        **described(
            "Holm family of delta_p_holm: within each metric (default) or"
            " across every compared metric of a suite's table; stated as"
            " holm_family."
        ),
    )


class ResultsQuery(HolmQuery):
    min_effect = fields.Float(
        allow_nan=False,
        error_messages={
            "invalid": [{"code": "bad_min_effect"}],
            "special": [{"code": "bad_min_effect"}],
            "too_large": [{"code": "bad_min_effect"}],
        },
        validate=Within(0, None, "bad_min_effect", above=True),
        metadata={
            "exclusiveMinimum": 0,
            "description": "A standardized effect dz: each comparison also"
            " gives sessions_for_min_effect (80% power, alpha 0.05).",
        },
    )


class RowsQuery(RequestSchema):
    limit = fields.Integer(
        strict=False,
        error_messages={
            "invalid": [{"code": "bad_limit", "limit": MAX_ROWS_PAGE}],
            "too_large": [{"code": "bad_limit", "limit": MAX_ROWS_PAGE}],
        },
        load_default=ROWS_PAGE,
        validate=Within(1, MAX_ROWS_PAGE, "bad_limit", limit=MAX_ROWS_PAGE),
    )
    cursor = fields.String(
        load_default="0",
        validate=Matches(r"^[0-9]{1,18}$", "bad_cursor"),
        **described("next_cursor of the previous page"),
    )
    metric = text()
    method = text()
    session_id = text()
    status = text()
    judge = text()


# -- loading -------------------------------------------------------------------
def load(schema: type[Schema], data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as ``schema`` reads it, or Rejected (400) naming each
    field and its problem code."""
    try:
        loaded: dict[str, Any] = schema().load(data)
        return loaded
    except ValidationError as error:
        said = (
            error.messages if isinstance(error.messages, dict) else {"": error.messages}
        )
        raise Rejected(list(problems(said, schema, data))) from None


def form_data(
    schema: type[Schema],
    form: Mapping[str, str],
    files: Mapping[str, FileStorage],
    blank_is_absent: bool = False,
) -> dict[str, Any]:
    """A multipart or urlencoded form (or a query: ``blank_is_absent``, a
    parameter left empty is one not given, as the document's
    ``allowEmptyValue`` says, and one given twice is refused as the array
    it is) as ``schema`` reads it. A file part without a file name is no
    file (a browser's unused file input)."""
    data: dict[str, Any] = {}
    for name, field in schema().fields.items():
        if isinstance(field, UploadField):
            if getattr(files.get(name), "filename", None):  # a file was chosen
                data[name] = files.get(name)
        elif name not in form or (blank_is_absent and form[name] == ""):
            continue
        elif blank_is_absent and len(given := _every(form, name)) > 1:
            data[name] = given
        else:
            data[name] = form.get(name)
    return data


def _every(form: Mapping[str, str], name: str) -> list[str]:
    """Every value given for ``name`` (a query's MultiDict has several)."""
    if isinstance(form, MultiDict):
        return list(form.getlist(name))
    return [form[name]]


def _problem_items(said: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path suffix, coded item) of one field's messages: a list's items
    come as ``{index: [...]}``."""
    if isinstance(said, dict):
        for index, inner in said.items():
            for suffix, item in _problem_items(inner):
                yield f"[{index}]{suffix}", item
        return
    for item in said:
        if isinstance(item, dict) and "code" in item:
            yield "", item
        else:  # a message no field was taught to code
            yield "", {"code": "wrong_type"}


def problems(
    messages: dict[str, Any], schema: type[Schema], data: Mapping[str, Any]
) -> Iterator[Problem]:
    shape = schema().fields
    for name, said in messages.items():
        for suffix, item in _problem_items(said):
            params = {k: v for k, v in item.items() if k != "code"}
            if item["code"] == "wrong_type" and "expected" not in params:
                field = shape.get(name)
                params["expected"] = next(
                    (
                        word
                        for kind, word in EXPECTED.items()
                        if isinstance(field, kind)
                    ),
                    "string",
                )
                params["found"] = type_name(data.get(name))
            if "%(value)s" in str(MESSAGES.get(item["code"], "")):
                params.setdefault("value", str(data.get(name))[:20])
            yield Problem.make(None, f"{name}{suffix}", item["code"], **params)
