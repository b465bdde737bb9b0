"""History (layer 1): the record base, messages, `InferenceResult` and the history view.

Imports only the leaves (errors, ids, events).
"""
