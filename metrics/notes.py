"""Why a row has no score (or what to know about it): a code and its
parameters, never only English text. The row stores the English text (for
the API, logs and exports) and the code with its parameters, so pages show
the reason in the reader's language. A note also knows the status it
implies when there is no value: a metric that cannot apply is
``not_applicable`` (excluded, counted apart, never a failure), a reply that
could not be scored is ``unscored``, a transport or internal failure is
``error``.

>>> found = note("missing_field", field="sample_dialogues")
>>> found.english, found.status
('session lacks sample_dialogues', 'not_applicable')
>>> note("http_error", status=503).english
'judge answered HTTP 503'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.i18n import LazyText, _l
from core.status import RowStatus

NA, UNSCORED, ERROR = RowStatus.NOT_APPLICABLE, RowStatus.UNSCORED, RowStatus.ERROR

NOTES: dict[str, tuple[LazyText, RowStatus | None]] = {
    # the metric cannot apply to this item
    "missing_field": (_l("session lacks %(field)s"), NA),
    "empty_field": (_l("%(field)s has no non-empty value"), NA),
    "prompt_has_no_words": (_l("the user message has no words"), NA),
    "components_not_applicable": (
        _l("needs all components; not applicable: %(components)s"),
        NA,
    ),
    "response_not_english": (
        _l("the response has no English words textstat can score"),
        NA,
    ),
    "dialogues_not_english": (
        _l("the sample dialogues have no English words textstat can score"),
        NA,
    ),
    "response_mostly_non_latin": (
        _l("the response is mostly non-Latin script (%(share)s Latin letters)"),
        NA,
    ),
    "dialogues_mostly_non_latin": (
        _l(
            "the sample dialogues are mostly non-Latin script (%(share)s Latin letters)"
        ),
        NA,
    ),
    "no_latency": (_l("no response of this method has latency_s"), NA),
    "no_predicted_slots": (_l("no predicted slots to judge"), NA),
    "no_messages": (_l("no non-exit guest messages (N = 0)"), NA),
    "too_few_messages": (_l("fewer than two guest messages"), NA),
    "no_tracking": (_l("no message reports tracking"), NA),
    "no_order": (_l("no message reports an order"), NA),
    "empty_target_order": (_l("the target order is empty"), NA),
    "baseline_not_a_method": (
        _l("the pairwise baseline %(method)s is not a method of the file"),
        NA,
    ),
    "protocol_lacks": (
        _l("the judge protocol %(protocol)s does not ask for %(part)s"),
        NA,
    ),
    "unknown_persona_type": (_l("no persona attributes and unknown type %(type)s"), NA),
    # the method has no reply in this round in the file (metrics/replies.py)
    "reply_missing": (_l("no reply in the file"), RowStatus.MISSING),
    # a reply or an item that could not be scored (an empty response is the
    # method's failure, so it is counted as one, not set apart)
    "empty_response": (_l("empty response"), UNSCORED),
    "unparseable": (_l("the judge reply could not be parsed (asked twice)"), UNSCORED),
    "no_verdict": (_l("the judge reply holds no verdict in a form we read"), UNSCORED),
    "ambiguous_verdict": (
        _l("the judge reply holds different verdicts: %(values)s"),
        UNSCORED,
    ),
    "verdict_out_of_scale": (
        _l("the judge's verdict is outside the scale %(low)s to %(high)s"),
        UNSCORED,
    ),
    "verdict_scale_unclear": (
        _l(
            "the judge's number is in a form the prompt did not ask for and does not "
            "say its scale (asked: %(low)s to %(high)s); it may be on another scale"
        ),
        UNSCORED,
    ),
    "truncated": (
        _l("the judge reply was cut off (max_tokens) before its verdict"),
        UNSCORED,
    ),
    # a derived label waited for checks without a verdict (metrics/suites/checks.py)
    "label_undecided": (
        _l("the label depends on checks without a verdict: %(checks)s"),
        UNSCORED,
    ),
    "samples_tied": (_l("the samples tied; use an odd number of samples"), UNSCORED),
    "dimension_missing": (_l("this dimension is missing from the reply"), UNSCORED),
    "components_missing": (
        _l("needs all components; unscored: %(components)s"),
        UNSCORED,
    ),
    "latency_missing": (
        _l("latency_s missing in %(missing)s of %(rounds)s rounds"),
        UNSCORED,
    ),
    "slots_not_matched": (
        _l("the judge did not score exactly the listed slots"),
        UNSCORED,
    ),
    "target_order_unusable": (
        _l("the target order has no items after normalization"),
        UNSCORED,
    ),
    "cmudict_missing": (
        _l("CMUdict is missing: run scripts/build_nltk_data.py"),
        UNSCORED,
    ),
    # transport or internal failures
    "http_error": (_l("judge answered HTTP %(status)s"), ERROR),
    "network_error": (_l("network error: %(kind)s"), ERROR),
    "malformed_reply": (
        _l("the judge's answer was not an OpenAI-compatible reply"),
        ERROR,
    ),
    "internal_error": (_l("internal error: %(kind)s"), ERROR),
    "reply_too_large": (
        _l("the judge's reply was longer than %(limit)s bytes: not read"),
        UNSCORED,
    ),
    "budget_exhausted": (
        _l("not asked: the run reached its judge call cap (MAX_JUDGE_CALLS_PER_RUN)"),
        ERROR,
    ),
    "workspace_budget_exhausted": (
        _l(
            "not asked: the workspace reached its judge calls for today (WORKSPACE_DAILY_JUDGE_CALLS)"
        ),
        ERROR,
    ),
    # a gathering pass of a batch-mode run: never stored on a row
    "batch_pending": (_l("waiting for the provider's batch"), ERROR),
    "prompt_too_large": (
        _l(
            "not asked: the prompt is longer than %(limit)s characters (MAX_PROMPT_CHARS_PER_CALL)"
        ),
        ERROR,
    ),
    "chunk_failed": (
        _l("evaluation failed after %(attempts)s attempt(s): %(reason)s"),
        ERROR,
    ),
    "non_finite": (_l("the computed value was not a finite number"), ERROR),
    # no judge
    "no_judge": (_l("no judge configured"), RowStatus.NOT_CONFIGURED),
    # said of a scored value
    "nal_undefined": (
        _l(
            "N-AL(k) is undefined: each method's AL(k) is the same at every round it has (max = min), or it has one round"
        ),
        None,
    ),
    "no_dimensions": (
        _l(
            "no dimension scores: the judge protocol does not ask for them, or no reply gave them"
        ),
        None,
    ),
    "panel_judge_missing": (
        _l("no panel value: the judge(s) %(judges)s scored none of these items"),
        None,
    ),
    "panel_no_common_items": (
        _l(
            "no panel value: no item was scored by every judge of the panel; %(judges)s scored none of them"
        ),
        None,
    ),
    "panel_common_items": (
        _l(
            "over the items every panel judge scored: %(items)s item(s) left out, which %(judges)s did not score"
        ),
        None,
    ),
    "bt_separation": (
        _l(
            "no finite Bradley–Terry strength: %(unbeaten)s won every comparison against the rest, and %(winless)s won none (separation)"
        ),
        None,
    ),
    "bt_too_few_methods": (
        _l(
            "no Bradley–Terry strength: it needs comparisons between two methods or more"
        ),
        None,
    ),
    "bt_not_compared": (
        _l(
            "no Bradley–Terry strengths on one scale: %(methods)s took part in no scored comparison"
        ),
        None,
    ),
    "bt_disconnected": (
        _l(
            "no Bradley–Terry strengths on one scale: these groups of methods were not compared with each other: %(groups)s"
        ),
        None,
    ),
    "ci_no_spread": (
        _l(
            "no interval: every resample of the sessions gives the same value (an interval of width 0 is not shown as one)"
        ),
        None,
    ),
    "ci_no_variation": (
        _l(
            "no interval: every value is the same, so a t interval has width 0 and says nothing (an interval of width 0 is not shown as one)"
        ),
        None,
    ),
    "ci_fisher_at_one": (
        _l(
            "no interval: the coefficient is ±1, where Fisher's z is infinite, so its interval has width 0 (an interval of width 0 is not shown as one)"
        ),
        None,
    ),
    # a rank group without a rank (metrics/rank_groups.py)
    "rank_no_value": (_l("no rank: the method has no value here"), None),
    "rank_no_interval": (
        _l(
            "no rank: the value has no confidence interval (fewer than two sessions, or none could be computed), so it cannot be placed against the others"
        ),
        None,
    ),
    "rank_ci_no_spread": (
        _l(
            "no rank: the value's interval has width 0 (every resample, or every value, is the same), so it cannot be placed against the others"
        ),
        None,
    ),
    "sum_mismatch": (_l("the five dimensions do not add up to the total"), None),
    "curve_one_round": (
        _l("undefined with one round: a line needs two rounds or more"),
        None,
    ),
    # a table value with no scored row behind it (metrics/nothing_scored.py)
    "none_scored_not_applicable": (
        _l(
            "no value: it applies to none of these items (every row is not applicable, e.g. the judge protocol does not ask for it; the rows' notes say why)"
        ),
        None,
    ),
    "none_scored_unscored": (
        _l(
            "no value: none of these items could be scored (every row is unscored; the rows' notes say why)"
        ),
        None,
    ),
    "none_scored_error": (
        _l(
            "no value: scoring failed for every item (every row is an error; the rows' notes say why)"
        ),
        None,
    ),
    "none_scored_missing": (
        _l("no value: the file has no reply for any of these items"),
        None,
    ),
    "none_scored": (
        _l(
            "no value: no item was scored (the rows are unscored, failed, not applicable or without a reply; the rows' notes say why)"
        ),
        None,
    ),
    "none_scored_no_rows": (_l("no value: no item was evaluated for it"), None),
    "session_slope_no_two_rounds": (
        _l(
            "undefined: no session has two scored rounds, and a session's slope needs two"
        ),
        None,
    ),
    "al_sparse_rounds": (
        _l(
            "rounds %(rounds)s rest on fewer than %(min)s sessions each: drawn on the curve (hollow), left out of this figure; the all-rounds figure keeps them"
        ),
        None,
    ),
    "bt_resamples_left_out": (
        _l(
            "%(left_out)s of %(resamples)s bootstrap resamples had a method win or lose every comparison (no finite strengths) and are left out of this interval"
        ),
        None,
    ),
    "bt_ci_too_separated": (
        _l(
            "no interval: %(left_out)s of %(resamples)s bootstrap resamples had a method win or lose every comparison, more than 5%%; the resamples left would describe the lucky draws, not the data"
        ),
        None,
    ),
    "judge_offset": (
        _l(
            "judge %(judge)s scores %(offset)s points from the panel's other judges on the items they share (95%% CI %(ci_low)s to %(ci_high)s): the panel mean pools this offset"
        ),
        None,
    ),
    "judge_offset_constant": (
        _l(
            "judge %(judge)s scores %(offset)s points from the panel's other judges on every item they share (the same difference each time, so no interval): the panel mean pools this offset"
        ),
        None,
    ),
    "judge_scale": (
        _l(
            "judge %(judge)s's scores spread %(ratio)s times as much as the other judges' on the same items: they may use different scales, and the panel mean pools them"
        ),
        None,
    ),
    "r2_two_rounds": (
        _l(
            "undefined with two rounds: a line always fits two points, so R² would be 1 whatever AL did"
        ),
        None,
    ),
    "lc_too_few_items": (
        _l(
            "no length-controlled value: the regression of AL on method and length needs more scored items than %(n)s"
        ),
        None,
    ),
    "lc_pairwise_no_lengths": (
        _l(
            "no length-controlled value: %(n)s comparisons were judged before the replies' lengths were recorded (re-run the pairwise suite)"
        ),
        None,
    ),
    "lc_pairwise_length_separates": (
        _l(
            "no length-controlled strength: the longer reply (or the shorter) won every comparison of replies of different lengths, and the comparisons of equal lengths do not rank the methods"
        ),
        None,
    ),
    "validity_no_length_fit": (
        _l(
            "no length-controlled fit: no scored comparison with both replies' lengths, replies that never differ in length, or no finite strengths (separation)"
        ),
        None,
    ),
    "lc_lengths_constant": (
        _l(
            "no length-controlled value: the response lengths do not vary within any method, so length's effect cannot be told apart from the method's"
        ),
        None,
    ),
    "r2_flat_curve": (
        _l(
            "undefined: AL(k) is the same at every round, so there is no variance for the line to explain"
        ),
        None,
    ),
    "no_slots_written": (
        _l("no response of this method carries slots: scored as empty"),
        None,
    ),
    "no_wordnet": (_l("synonym matching unavailable (WordNet data missing)"), None),
    # why a judge agreement statistic is missing (metrics/agreement.py)
    # why a judge_validity quantity is missing (metrics/validity.py)
    "validity_suite_missing": (_l("the %(suite)s suite did not run"), None),
    "validity_no_comparisons": (_l("no pairwise comparison was scored"), None),
    "validity_no_decisive": (_l("every single-order verdict was a tie"), None),
    "validity_no_variance": (
        _l("fewer than two scored items, or no variation to rank"),
        None,
    ),
    "validity_one_class": (_l("the binary verdicts were all the same"), None),
    "validity_run_cancelled": (
        _l("the run was cancelled before it was aggregated"),
        None,
    ),
    "validity_no_human": (_l("the file has no human labels (field human)"), None),
    "validity_one_judge": (_l("one judge model: pick several for a judge panel"), None),
    "validity_one_sample": (
        _l("one judge sample per item: run with samples ≥ 2"),
        None,
    ),
    "agreement_too_few": (_l("fewer than 2 shared items"), None),
    # why a report card criterion is not measured (metrics/report_card.py)
    "card_not_measured": (_l("not measured"), None),
    "card_no_pairwise": (_l("the pairwise suite did not run"), None),
    "card_no_alignment": (_l("the alignment suite did not run"), None),
    "card_not_computed": (_l("not computed by this release"), None),
    "card_no_families": (
        _l("no model families were named for the run's methods and judges"),
        None,
    ),
    "card_no_shared_family": (_l("no judge shares a model family with a method"), None),
    # why a self-preference estimate is missing (metrics/self_preference.py)
    "self_preference_no_other_family": (
        _l(
            "%(judge)s shares the family %(family)s with %(method)s, and no judge of another family scored it: self-preference cannot be measured (use a panel with judges of other families)"
        ),
        None,
    ),
    "self_preference_not_aggregated": (
        _l("the run was aggregated before this release measured self-preference"),
        None,
    ),
    "self_preference_no_other_method": (
        _l("no method of another family to compare with"),
        None,
    ),
    "self_preference_too_few": (
        _l(
            "fewer than 2 sessions scored by %(judge)s and by a judge of another family (%(n)s)"
        ),
        None,
    ),
    # why an agreement with human labels is missing (metrics/human_agreement.py)
    "agreement_one_annotator": (
        _l("needs two annotators: one person labelled these items"),
        None,
    ),
    "agreement_none_labelled_twice": (
        _l("no item was labelled by two annotators yet"),
        None,
    ),
    "agreement_labels_constant": (
        _l("every label is the same: there is no variation to agree on"),
        None,
    ),
    "agreement_majority_tied": (
        _l(
            "the annotators' votes tied on %(tied)s item(s), which have no majority; fewer than 2 items are left"
        ),
        None,
    ),
    "kappa_one_class": (
        _l("one side gave one class only (all yes or all no): κ is undefined"),
        None,
    ),
    "kappa_off_points": (
        _l(
            "a value lies between the scale's points (a mean of samples): weighted κ needs whole points"
        ),
        None,
    ),
    "kappa_scale_too_long": (
        _l(
            "the scale has more than 5 points: weighted κ is given on short ordinal scales only"
        ),
        None,
    ),
    "agreement_one_side_constant": (
        _l("one side gave the same value to every item: there is no order to compare"),
        None,
    ),
    "agreement_no_variance": (_l("a judge gave the same value to every item"), None),
    "agreement_no_same_responses": (
        _l("no shared item has the same response in both runs"),
        None,
    ),
}


@dataclass(frozen=True)
class Note:
    code: str
    params: dict[str, object] = field(default_factory=dict)

    @property
    def template(self) -> LazyText:
        return NOTES[self.code][0]

    @property
    def status(self) -> RowStatus | None:
        """The status a row without a value has because of this note."""
        return NOTES[self.code][1]

    @property
    def english(self) -> str:
        return self.template.msgid % self.params if self.params else self.template.msgid

    def translated(self) -> str:
        return str(self.template) % self.params if self.params else str(self.template)


def note(code: str, **params: object) -> Note:
    if code not in NOTES:
        raise KeyError(f"unknown note code {code!r}")
    return Note(code, params)


def translate(
    code: str | None, params: Mapping[str, object] | None, english: str | None
) -> str:
    """A stored note in the reader's language (its English text when the
    code is unknown, e.g. rows of an earlier release)."""
    if code in NOTES:
        return Note(code, dict(params or {})).translated()
    return english or ""
