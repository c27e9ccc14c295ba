"""The intake's lane timings: the quantiles ``/v1/health`` shows."""

from __future__ import annotations

from plait.intake import quantile_ms


def test_quantiles_are_read_off_the_sorted_values_in_milliseconds() -> None:
    seconds = [i / 1000 for i in range(1, 101)]  # 1 ms … 100 ms
    assert quantile_ms(seconds, 0.5) == 51.0
    assert quantile_ms(seconds, 0.99) == 100.0
    assert quantile_ms([0.25], 0.99) == 250.0  # one run: it is every quantile
