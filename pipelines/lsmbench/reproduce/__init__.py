"""`lsmbench reproduce`: the papers' experiments on the bundled engine, and the results pages
(docs/results/luo-carey.md, mao.md, pramanik.md) regenerated from them.

Modules by role: ``suite`` (the experiments: a campaign spec each, full as the file says,
``--quick`` by ``--set`` overrides), ``runner`` (runs them into RESULTS/reproduce/),
``simtable`` (lsm-sim-validate: Mao's Table I, engine against simulator), ``evidence`` (a
campaign's groups and per-point figures, and the rule that judges a claim), ``claims`` (each
paper's claims), ``pages`` (the Markdown pages and their figures), ``cli``.
"""
