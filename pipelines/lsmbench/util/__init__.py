"""Leaf helpers that import nothing of lsmbench: numbers read from JSON (values), sizes and
durations (units), what people read (wording, terminal), hashes (digest), the closed sets of
names the spec validates (names), where the project's files are (paths), exit codes (exits),
the one-process lock (filelock)."""
