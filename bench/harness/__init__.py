"""Shared pieces of the benchmarks: result files, statistics, the clients compared, ground truth.

The scripts in ``bench/`` put ``bench/`` on ``sys.path`` (Python does, for the script's own
folder), so this package imports as ``harness``.
"""
