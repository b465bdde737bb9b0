"""What an agent's request holds: its instructions and how much of the thread fits.

Public: `policy` (`ContextPolicy`, bounding a request by messages and tokens). Internal: the
instruction template filled from state (`_template`) and counting a request's tokens
(`_tokens`).

Import the public names from `agents`.
"""
