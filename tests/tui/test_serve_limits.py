"""The served study's limits as numbers (tui/web/limits.py): sizes parsed and bounded, the
input rate's buckets and the sign-in throttle, on a clock the test sets."""

from __future__ import annotations

from convtui.tui.web.limits import (
    MAX_COLUMNS,
    MAX_ROWS,
    SIGN_IN_FAILURES,
    SIGN_IN_WINDOW_S,
    Bucket,
    InputRate,
    SignInThrottle,
    terminal_size,
)


def test_sizes_are_numbers_within_bounds_or_nothing() -> None:
    assert terminal_size("120", "40") == (120, 40)
    assert terminal_size(120, 40) == (120, 40)
    assert terminal_size("1000000", 10**6) == (MAX_COLUMNS, MAX_ROWS)
    assert terminal_size("1", "1") == (20, 5)
    for bad in ("²", "٣", "-4", "4.5", "", " 80", "1" * 12, True, 2.5, None, [80], {"a": 1}):
        assert terminal_size(bad, "24") is None, bad
    assert terminal_size("80", 0) is None


def test_the_input_rate_lets_a_burst_through_then_a_steady_rate() -> None:
    bucket = Bucket(rate=10.0, at=0.0)
    assert sum(bucket.take(1, now=0.0) for _ in range(50)) == 20  # a burst of two seconds
    assert not bucket.take(1, now=0.05)
    assert bucket.take(1, now=0.1)  # refilled at 10 a second
    rate = InputRate(Bucket(100.0, at=0.0), Bucket(1000.0, at=0.0))
    assert rate.allows(1500, now=0.0) and not rate.allows(1000, now=0.0)


def test_sign_in_throttle_counts_failures_per_address_within_the_window() -> None:
    throttle = SignInThrottle()
    for n in range(SIGN_IN_FAILURES - 1):
        throttle.failed("10.0.0.1", now=float(n))
    assert throttle.wait_s("10.0.0.1", now=5.0) == 0
    throttle.failed("10.0.0.1", now=5.0)
    assert throttle.wait_s("10.0.0.1", now=5.0) == SIGN_IN_WINDOW_S - 5.0  # the oldest leaves
    assert throttle.wait_s("10.0.0.2", now=5.0) == 0  # another address is not held
    # Once the oldest failure leaves the window, one more try is allowed.
    assert throttle.wait_s("10.0.0.1", now=SIGN_IN_WINDOW_S + 0.5) == 0
    assert throttle.wait_s("10.0.0.1", now=10 * SIGN_IN_WINDOW_S) == 0
    assert "10.0.0.1" not in throttle.failures  # forgotten, not kept forever


def test_addresses_that_failed_long_ago_are_forgotten_once_there_are_many() -> None:
    throttle = SignInThrottle()
    for n in range(1000):
        throttle.failed(f"10.1.{n // 256}.{n % 256}", now=0.0)
    throttle.failed("10.9.9.9", now=SIGN_IN_WINDOW_S + 1)
    assert list(throttle.failures) == ["10.9.9.9"]
