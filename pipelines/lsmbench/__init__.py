"""lsmbench: benchmarking orchestration for LSM-tree storage engines."""

__version__ = "0.1.0"
