"""The network's capabilities: the features a network or a run declares
(`Network(predict_state=...)`, client tools an AG-UI client declares, ...), each in a folder of
its own (its options, its stage hooks, its events), plugged into every agent call through the
one seam, `network.run.capability.Capability`. A capability imports the kernel and the public
types, never another capability."""
