"""Tests of custom_components/local_assistant/llm/."""
