"""The agent's capabilities: each feature an agent's keywords turn on, in a folder of its own
(its options, its stage hooks, its events), plugged into the agent step through the one seam,
`network.run.capability.Capability`. A capability imports the kernel and the public types,
never another capability."""
