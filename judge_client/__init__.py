"""The judge client, in parts; ``evaluator.py`` is its front (``Judge``,
``JudgePanel``) and the one module the rest of the product imports."""
