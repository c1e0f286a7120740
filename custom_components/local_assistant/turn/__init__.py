"""What a turn is and what it may do, decided before and during the model's answer.

Small models pick tools badly: a question switches a light on, a command is
confirmed without being carried out. These modules use Home Assistant's own
structure, not the model's words, to keep a turn honest:

* ``understand``: HA's intent recognition of the user's sentence and the
  exposed names it mentions: is this a command, a question, or neither?
* ``guard``: which tool calls a turn may run (a question never changes a
  device), whether the answer has the action or data it needs, and what the
  user hears when it does not (pure).
* ``fast_path``: the live questions the product exists for ("can I go
  kitesurfing?"), matched with HA's sentence templates and answered from the
  tools with no model call.
"""
