"""Peers of the product's judge client in issue 49's pacing drill
(``bench/pacing_peers.py``): Inspect AI, promptfoo and a plain AsyncOpenAI
loop, each sending the same 1,000 requests at concurrency 64 to the same
rate-limited scripted judge as ``bench/pacing.py``.

The peers are not dependencies of the product, its tests or CI: they live in
an environment made on demand (``env.py``: ``.venv-peers/`` and
``bench/peers/node/``, both git-ignored). ``inspect_task.py`` and
``openai_loop.py`` run inside that environment and import nothing of ours.
"""
