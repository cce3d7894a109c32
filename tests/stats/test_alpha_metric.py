"""The difference functions alpha uses for the levels fixed by the value domain."""

from __future__ import annotations

import numpy as np
import pytest

from sheetflow.stats.alpha import fixed_metric


def test_each_level_measures_the_distance_it_names():
    values = np.array([0, 1, 3])
    assert fixed_metric(values, "nominal").tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    assert fixed_metric(values, "interval")[1].tolist() == [1.0, 0.0, 4.0]
    # ratio: ((c - k) / (c + k))^2, two zeros agreeing
    assert fixed_metric(values, "ratio")[0].tolist() == [0.0, 1.0, 1.0]
    assert fixed_metric(values, "ratio")[1, 2] == pytest.approx(0.25)


def test_nominal_reads_only_how_many_values_there_are():
    labels = np.array(["Correct", "Partial", "Incorrect"], dtype=object)
    assert (fixed_metric(labels, "nominal") == fixed_metric(np.arange(3), "nominal")).all()


def test_ordinal_is_no_fixed_metric():
    """Ordinal distances come from the data's frequencies, not from the domain."""
    with pytest.raises(ValueError, match="ordinal"):
        fixed_metric(np.array([1, 2, 3]), "ordinal")


def test_ratio_refuses_values_below_zero():
    """((c - k)/(c + k))^2 measures from a true zero: it called -3 and 3 agreeing, and
    these opposite-sign ratings an alpha of 1 (0.058 at the interval level)."""
    from sheetflow import stats as st

    data = [[-3, -2, -1, 4], [3, 2, 1, 4]]
    for domain in (list(range(-5, 6)), None):
        with pytest.raises(ValueError, match="ratio level needs values of 0 or more"):
            st.krippendorff_alpha(data, level="ratio", value_domain=domain, n_boot=0)
    with pytest.raises(ValueError, match="interval"):
        fixed_metric(np.array([-1, 0, 1]), "ratio")
    interval = st.krippendorff_alpha(data, level="interval", value_domain=list(range(-5, 6)),
                                     n_boot=0)
    assert interval.loc[0, "alpha"] == pytest.approx(0.0576923, abs=1e-6)
