"""State (layer 2): the store (kv), schema, merge handlers, scopes, values, staged views,
provenance, `State` and its JSON form.

Imports only the leaves (errors, ids, events) and `network.history`.
"""
