"""lsmbench tune: an Optuna study over engine options (docs/tuning.md)."""
