"""End-to-end tests against a real local model server (llama.cpp + Qwen2.5-Coder-0.5B)."""
