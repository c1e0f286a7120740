"""What a turn may do, decided from Home Assistant's own structure, not the model's words.

* ``vocabulary``: what HA's sentence data says about a language's words (the
  words its sentences treat as optional, its device words), for every
  language HA speaks (pure);
* ``rules``: which expansion rules a set of sentence templates uses (pure);
* ``reading``: HA's strict reading of the sentence, a follow-up of the last
  command as a sentence HA reads, and what the sentence names;
* ``policy``: which changes the model may make (what the words name) and
  when the user hears "nothing was changed" (pure).
"""
