"""The UI flows besides the server's own config flow (``config_flow.py``, one level up).

``agent`` holds the agent subentry flows (conversation and AI task, on one
shared base); ``options`` the entry's options flow (memory settings, the
hosted extractor, satellites, and managing facts); ``server_check`` the
check every flow runs against a server URL and key.
"""
