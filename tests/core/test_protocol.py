"""The --protocol switch: what each protocol chooses, and that explicit options win."""

from __future__ import annotations

import pytest

from convtui.core.errors import ConvtuiError
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import CCW_STOP, build_config, protocol_name, simulator_for

OMEGA = FeedbackConfig("full", "novice")


def test_convcodeworld_sets_the_reference_defaults_and_counts_turns_after_turn_0():
    config = build_config("convcodeworld", model="m", feedback=OMEGA, simulator="m", turns=10)
    assert config.protocol == "convcodeworld"
    assert config.max_turns == 11  # turn 0 plus 10 feedback turns, as the published tables
    assert (config.extract, config.partial_rule, config.context) == ("ccw", "ccw", "markov")
    assert config.params.max_tokens == config.simulator_params.max_tokens == 2048
    assert config.params.stop == config.simulator_params.stop == (CCW_STOP,)
    assert config.ef_source_lines is False


def test_convtui_sets_our_own_defaults():
    config = build_config("convtui", model="m", feedback=OMEGA, simulator="m", turns=3)
    assert config.max_turns == 4
    assert (config.extract, config.partial_rule, config.context) == (
        "robust",
        "first-tests",
        "full",
    )
    assert (config.params.max_tokens, config.simulator_params.max_tokens) == (1024, 512)
    assert config.params.stop == ()
    assert config.ef_source_lines is True


def test_named_options_win_over_the_protocol_and_change_the_hash():
    default = build_config("convcodeworld", model="m", feedback=OMEGA, simulator="m", turns=10)
    chosen = build_config(
        "convcodeworld",
        model="m",
        feedback=OMEGA,
        simulator="m",
        turns=10,
        context="full",
        partial_rule="first-tests",
        extract="robust",
        max_tokens=300,
    )
    assert (chosen.context, chosen.partial_rule, chosen.extract) == (
        "full",
        "first-tests",
        "robust",
    )
    assert chosen.params.max_tokens == 300
    assert chosen.config_hash != default.config_hash
    other = build_config("convtui", model="m", feedback=OMEGA, simulator="m", turns=10)
    assert other.config_hash != default.config_hash


def test_zero_feedback_turns_is_turn_0_alone_and_fewer_is_an_error():
    config = build_config("convtui", model="m", feedback=OMEGA, simulator=None, turns=0)
    assert config.max_turns == 1
    with pytest.raises(ConvtuiError, match="--turns"):
        build_config("convtui", model="m", feedback=OMEGA, simulator=None, turns=-1)


def test_protocol_names_are_checked_in_one_line():
    assert protocol_name("convtui") == "convtui"
    with pytest.raises(ConvtuiError, match="convcodeworld, convtui"):
        protocol_name("ccw")


def test_a_simulator_only_where_some_configuration_has_verbal_feedback():
    none, novice = FeedbackConfig("full"), FeedbackConfig("full", "novice")
    assert simulator_for("m", "s", (none,)) is None
    assert simulator_for("m", None, (none, novice)) == "m"
    assert simulator_for("m", "s", (novice,)) == "s"
