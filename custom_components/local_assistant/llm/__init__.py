"""The streamed-completion path: what we send the model, and what we make of its answer.

Building the request: ``prompt`` (what we add to HA's system prompt: facts,
the tool-bias override) and ``messages`` (HA chat log content to messages a
local server accepts). Reading the answer: ``stream`` turns one streamed
completion into chat log deltas, through ``think`` (reasoning out),
``spoken`` (speakable text) and ``tool_calls`` (calls assembled from
fragments); ``tool_repair`` drops the slots small models guess in HA's
intent tools; ``json_answer`` finds the JSON in a structured AI task answer.
The loop that drives it lives in ``entity.py`` (one level up).

Modules that import nothing from Home Assistant say so in their docstring
("Pure module: ..."); tests/test_layout.py keeps that true.
"""
