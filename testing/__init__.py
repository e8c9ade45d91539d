"""What the tests and the benchmarks share, and the product never imports:
the scripted judge (``judge_server``), the data generator, the frozen
baselines and the drill harnesses. ``bench/`` holds benchmarks only."""
