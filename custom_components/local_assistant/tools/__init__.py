"""Our tools: the LLM API that merges HA's tools with our live-data tools.

``api`` builds what the agent hands to HA's chat log (HA's selected APIs
plus our tools); ``base`` is what every live-data tool shares (argument
checking, units, errors the model can correct); ``weather`` and ``sea`` are
the tools; ``kite`` is the pure kitesurf verdict and compass arithmetic.

Modules that import nothing from Home Assistant say so in their docstring
("Pure module: ..."); tests/test_layout.py keeps that true.
"""
