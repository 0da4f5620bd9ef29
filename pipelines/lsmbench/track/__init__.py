"""Nightly performance tracking (docs/tracking.md): a history of campaign runs, change points
found in each series by a maintained library, a report with exit codes, and a nightly job.

Modules by role:

* ``history``  -- the SQLite history store: ``track record``;
* ``detect``   -- change-point detection on one series: ``track detect`` and the history's
  detector;
* ``paired``   -- a build measured against a reference build in the same night: their ratio
  with its interval, and whether it is worse (issue 33);
* ``changes``  -- the history's series, their segments and change points with their statuses;
* ``ack``      -- ``track ack``: a change point marked as expected;
* ``report``   -- ``history.html`` (``figures``, ``render``) + ``regressions.json`` +
  ``history.csv`` + ``history-paired.csv``: ``track report`` (exit 4 with an open
  regression);
* ``nightly``  -- fetch, build, testbed up, run, record, report, publish: ``track nightly``.
"""
