"""The model server: the client, whether the server is reachable, and who goes first.

``client`` creates the OpenAI-compatible client on HA's shared HTTP client,
lists models and words errors for the user; ``health`` logs one line when
the server goes and one when it is back, and raises a repair issue when it
stays unreachable; ``scheduler`` puts replies first and gives background
calls (warm-ups, local fact extraction, re-warms) one turn each, because a
local server answers one request at a time; ``warmth`` keeps the next turn's
prompt in the server's cache.

Modules that import nothing from Home Assistant say so in their docstring
("Pure module: ..."); tests/test_layout.py keeps that true.
"""
