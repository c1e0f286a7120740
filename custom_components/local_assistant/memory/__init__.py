"""Memory for the Local Assistant: short-term session buffers and long-term facts.

Small local models get worse, not better, when raw transcripts are replayed
to them. Memory is therefore split in two: a RAM-only, idle-reset, capped
buffer of the current conversation per speaker (``session``), and a short,
distilled list of stable facts per speaker (``facts``), kept in HA's
``Store`` by ``store`` and updated after each exchange by a background
extractor (``extraction``; its prompt and the strict parsing of its answer
are ``extraction_prompt``). ``speaker`` decides whose memory a request
belongs to, and ``manager`` wires all of it to one config entry.

``session``, ``facts``, ``speaker`` and ``extraction_prompt`` are pure
(standard library only, no Home Assistant imports) and say so in their
docstrings; ``manager``, ``store`` and ``extraction`` are the Home Assistant
glue. tests/test_layout.py checks the marks.
"""
