"""Reproducible performance runs. Each prints ratios against a baseline measured in the same run;
none of them is a timed assertion."""
