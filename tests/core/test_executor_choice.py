"""``--executor`` values: what each form means, and the one error for the rest."""

from __future__ import annotations

import pytest

from convtui.core.errors import ConvtuiError
from convtui.core.execution.choice import ExecutorChoice, host_port, parse_executor


@pytest.mark.parametrize(
    ("text", "choice"),
    [
        ("local", ExecutorChoice("local")),
        ("ray", ExecutorChoice("ray")),
        ("ray:", ExecutorChoice("ray")),
        ("ray:auto", ExecutorChoice("ray", "auto")),
        ("ray:10.0.0.5:6379", ExecutorChoice("ray", "10.0.0.5:6379")),
        ("ray:head.cluster:6379", ExecutorChoice("ray", "head.cluster:6379")),
        ("ray:ray://head:10001", ExecutorChoice("ray", "ray://head:10001")),
    ],
)
def test_each_executor_form_names_its_backend_and_address(text, choice):
    assert parse_executor(text) == choice
    assert parse_executor(choice.label) == choice  # the label reads back as itself


@pytest.mark.parametrize("text", ["", "Local", "dask", "ray:head", "ray:head:0", "ray:h:99999"])
def test_anything_else_is_refused_naming_the_forms(text):
    with pytest.raises(ConvtuiError, match="ray:HOST:PORT"):
        parse_executor(text)


def test_host_port_reads_plain_client_and_ipv6_addresses():
    assert host_port("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert host_port("ray://head:10001") == ("head", 10001)
    assert host_port("[::1]:6379") == ("::1", 6379)
    assert host_port("auto") is None
