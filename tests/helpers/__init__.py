"""What many tests share: the fake server, real-HA helpers, memory helpers.

``fake_openai`` is a Swama-like OpenAI-compatible server (no Home Assistant
imports: benchmarks and plain scripts use it too); ``ha`` sets up entries,
runs Assist turns and exposes lights in a real HA; ``memory`` reads what the
memory stored and what the extractor was asked. Fixtures are in
tests/conftest.py.
"""
