"""The API's request schemas (web/views/schemas.py)."""

from __future__ import annotations

import pytest

from core.problems import Rejected
from web.views import schemas


def test_a_json_integer_may_be_written_with_a_zero_fraction():
    """JSON Schema's integer is 176 or 176.0 (found by Schemathesis: the
    document allowed 176.0, the server refused it); never "176" or 1.5."""
    assert schemas.load(schemas.NewQueue, {"size": 176.0})["size"] == 176
    assert isinstance(schemas.load(schemas.NewQueue, {"size": 176.0})["size"], int)
    for wrong in ("176", 1.5):
        with pytest.raises(Rejected) as refused:
            schemas.load(schemas.NewQueue, {"size": wrong})
        assert [e["code"] for e in refused.value.errors] == ["wrong_type"]
