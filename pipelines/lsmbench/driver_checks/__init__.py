"""A campaign's points checked by the driver itself, before anything runs (`lsmbench validate`,
`plan` and `run`): each phase's engine options (``lsm-driver --check-options``: options.py)
and each phase's run.json (``--check-config``: config.py), every error mapped back to the spec
path that set it. Above the plan (they ask about each point), below the commands."""
