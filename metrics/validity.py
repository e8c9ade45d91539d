"""The results' ``judge_validity`` object: how far the judge can be trusted.

Suites measure what they can (``SuiteSummary["validity"]``; the pairwise
suite measures position bias); this module names every quantity once and
says, for each that is ``null``, why. A missing quantity is never a number.

>>> found = judge_validity({"position_consistency": 0.75, "first_position_rate": None,
...                         "pairwise_comparisons": 8}, ["pairwise"])
>>> found["position_consistency"], found["first_position_rate"]
(0.75, None)
>>> found["reasons"]["first_position_rate"]
'every single-order verdict was a tie'
>>> judge_validity({}, ["quality"])["reasons"]["position_consistency"]
'the pairwise suite did not run'
"""

from __future__ import annotations

from metrics.notes import note

# quantity -> the suite that measures it
QUANTITIES = {
    "position_consistency": "pairwise",
    "first_position_rate": "pairwise",
}
# why a quantity of a suite that ran is still missing
MISSING = {
    "position_consistency": "validity_no_comparisons",
    "first_position_rate": "validity_no_decisive",
}


def judge_validity(measured: dict, suites: list[str]) -> dict:
    found: dict = {name: measured.get(name) for name in QUANTITIES}
    found["pairwise_comparisons"] = measured.get("pairwise_comparisons")
    reasons, codes = {}, {}
    for name, suite in QUANTITIES.items():
        if found[name] is not None:
            continue
        code = MISSING[name] if suite in suites else "validity_suite_missing"
        reasons[name] = note(code, suite=suite).english
        codes[name] = code
    return {**found, "reasons": reasons, "reason_codes": codes}
