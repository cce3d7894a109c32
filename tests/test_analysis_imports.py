"""The analysis never loads scipy.stats or scipy.optimize.

Importing scipy.stats (which loads scipy.optimize) costs about 45 MB of memory over
pandas and the parts of scipy the statistics use; a 500-rater analysis has to stay
well under 300 MB. Each check runs in a fresh interpreter, so that nothing imported by
another test hides an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("scipy.stats", "scipy.optimize")

_IMPORTS = """
import sys
import sheetflow.analysis, sheetflow.report, sheetflow.stats
print([m for m in {heavy!r} if m in sys.modules])
"""

_DEMO = """
import json, sys
from sheetflow.demo.run import run_demo
tables = run_demo(sys.argv[1]).analysis.tables
ran = {{"wilcoxon": float(tables["wilcoxon_totals"]["p"].iloc[0]),
        "spearman": float(tables["spearman_internal"]["p"].iloc[0]),
        "binomial": float(tables["position_bias"]["p"].iloc[0])}}
print(json.dumps({{"loaded": [m for m in {heavy!r} if m in sys.modules], "ran": ran}}))
"""


def _last_line(code: str, *args: str) -> str:
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_importing_analysis_report_and_stats_loads_neither() -> None:
    assert _last_line(_IMPORTS.format(heavy=HEAVY)) == "[]"


def test_a_paired_rubric_analysis_loads_neither(tmp_path: Path) -> None:
    """The demo: the paired-rubric sample study, filled by simulated raters, collected
    and analysed (Wilcoxon, Spearman, the binomial test of position bias, ...)."""
    out = json.loads(_last_line(_DEMO.format(heavy=HEAVY), str(tmp_path / "demo")))
    assert out["loaded"] == []
    assert all(0 <= p <= 1 for p in out["ran"].values()), out["ran"]
