"""Agreement statistics and tests for sheetflow studies.

Every function takes a tidy table (one row per rating, column names as arguments) or a
raters x units array and returns a :class:`pandas.DataFrame` with snake_case columns.
Undefined results are NaN with the reason in a ``reason`` column; invalid arguments
raise :class:`ValueError`. Nothing here prints or exits.
"""

from sheetflow.stats.agreement import direction_agreement, percent_agreement, spearman
from sheetflow.stats.alpha import LEVELS, alpha_complete_batch, krippendorff_alpha
from sheetflow.stats.chance import (
    brennan_prediger,
    conger_kappa,
    light_kappa,
    randolph_kappa,
    scott_pi,
)
from sheetflow.stats.clustered import clustered_permutation_best_of
from sheetflow.stats.effects import paired_mean_difference
from sheetflow.stats.gwet import gwet_ac
from sheetflow.stats.hypothesis_tests import (
    cochran_armitage,
    fisher_exact_test,
    monte_carlo_se,
    permutation_test_best_of,
    permutation_test_proportions,
    wilcoxon_signed_rank,
)
from sheetflow.stats.icc import icc, icc_expected_width
from sheetflow.stats.intervals import newcombe_difference, wilson_interval
from sheetflow.stats.kappa import (
    cohen_kappa,
    cohen_kappa_table,
    fleiss_category_kappa,
    fleiss_kappa,
    intra_rater_kappa,
)
from sheetflow.stats.kappa_batch import cohen_kappa_batch, fleiss_kappa_complete_batch
from sheetflow.stats.kappa_variance import max_kappa_sd
from sheetflow.stats.scores import mean_spearman, tolerance_agreement

__all__ = [
    "LEVELS",
    "alpha_complete_batch",
    "brennan_prediger",
    "clustered_permutation_best_of",
    "cochran_armitage",
    "cohen_kappa",
    "cohen_kappa_batch",
    "cohen_kappa_table",
    "conger_kappa",
    "direction_agreement",
    "fisher_exact_test",
    "fleiss_category_kappa",
    "fleiss_kappa",
    "fleiss_kappa_complete_batch",
    "gwet_ac",
    "icc",
    "icc_expected_width",
    "intra_rater_kappa",
    "krippendorff_alpha",
    "light_kappa",
    "max_kappa_sd",
    "mean_spearman",
    "monte_carlo_se",
    "newcombe_difference",
    "paired_mean_difference",
    "percent_agreement",
    "permutation_test_best_of",
    "permutation_test_proportions",
    "randolph_kappa",
    "scott_pi",
    "spearman",
    "tolerance_agreement",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
