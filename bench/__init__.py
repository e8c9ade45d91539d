"""Benchmarks: each measures its own baseline in the same run and reports a
ratio, because absolute times on this shared 2-core machine are noisy."""
