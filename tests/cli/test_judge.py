"""``--protocol`` and the pre-run estimate (cli/judge.py), shared by
``judge-check`` and ``evaluate``."""

import click
import pytest

from cli.judge import print_estimate, protocol_fields


def test_a_protocol_is_a_readable_file_or_a_built_in_name(tmp_path):
    protocol = tmp_path / "mine.toml"
    protocol.write_text('name = "mine"\n')
    assert protocol_fields(str(protocol)) == {"protocol_text": 'name = "mine"\n'}
    assert protocol_fields("mtbench") == {"protocol": "mtbench"}
    assert protocol_fields(None) == {} == protocol_fields("")


@pytest.mark.parametrize(
    ("cost", "said"), [(0.12345, "at most US$0.1235"), (None, "no price set")]
)
def test_the_estimate_names_calls_tokens_and_cost_per_model(capsys, cost, said):
    spend = {
        "judges": {
            "gpt-x": {
                "calls": 1200,
                "prompt_tokens": 345678,
                "completion_tokens_max": 9000,
                "cost_usd_max": cost,
            }
        }
    }
    with click.Context(click.Command("evaluate")):
        print_estimate(spend)
    err = capsys.readouterr().err
    assert err.startswith(
        "estimate gpt-x: 1,200 judge calls, about 345,678 prompt tokens"
    )
    assert "at most 9,000 completion tokens" in err
    assert said in err
