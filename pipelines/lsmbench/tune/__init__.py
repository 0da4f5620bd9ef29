"""`lsmbench tune` (docs/tuning.md): an Optuna study whose trials are points of the campaign
machinery. Modules by role: ``study`` (ask, run the point, tell; pruning, resume,
confirmation), ``metrics`` (a stored point's objective and constraint values), ``console`` (the
result on the terminal).

Elsewhere, in their layers: the ``tune:`` section's model, checks and domains
(lsmbench.spec.tune, spec.tune_checks, spec.tune_domains), tune.json's model
(lsmbench.results.tuning) and the report's Tuning section (lsmbench.report.tuning).
"""
