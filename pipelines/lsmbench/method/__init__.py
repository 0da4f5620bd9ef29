"""The two-phase method as pure functions: each figure of a phase defined once (metrics), the
testing maximum and the running verdict (verdict), adaptive phases and repetitions (adaptive),
what the engine's flushes and merges say (cycles), the search for the maximum sustainable rate
(search), repetitions judged as one group (groups) and their statistics (stats).

Nothing here runs a campaign or reads a file: the inputs are parsed driver outputs and stored
records, so the tests feed recorded ones. What to add where: README.md beside this file."""
