"""The run engine (layer 3): the run context, the loop, the run lifecycle, interrupts,
predictive state, the event emitter, streaming and logs.

Imports only the leaves, `network.history` and `network.state`.
"""
