"""Memory for the Local Assistant: short-term session buffers and long-term facts.

Small local models get worse, not better, when raw transcripts are replayed
to them. Memory is therefore split in two: a RAM-only, idle-reset, capped
buffer of the current conversation per speaker (``session``), and a short,
distilled list of stable facts per speaker (``facts``) maintained by a
background extractor (``extraction_prompt``). ``speaker`` decides whose
memory a request belongs to. These modules are pure (standard library only);
the Home Assistant glue lives elsewhere in this package.
"""
