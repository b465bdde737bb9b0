"""The workers' queues: one per network, so a worker takes only the runs it can run.

A queued run waits on the queue of its network, `agent-network:<network name>`
(`network_queue`). A worker claims from the queues of the networks it serves, all in one
claim statement (`network.durable.queue_table`), under its one concurrency limit; the
database announces a queued run with its queue's name, so a worker hears, and claims for,
only the runs it can take. A run of a network no live worker serves stays ENQUEUED on its
network's queue until a worker that serves it starts; nothing fails it.

Earlier versions put every queued run on one shared queue, `agent-network` (`SHARED_QUEUE`),
whatever its network. A run still there (enqueued by an older client, or put back by an
older worker) is moved to its network's queue by a worker of this version
(`network.durable.legacy_queue`), so a database used by the previous version is served.

The prefix sorts below the processes' own queues (`agent-network@<executor id>`, see
`network.durable.takeover`), which a takeover's look reads by range: `:` comes before `@`.
"""

from __future__ import annotations

SHARED_QUEUE = "agent-network"
"""The one queue of earlier versions (every network's runs); read only to move its runs."""
NETWORK_PREFIX = "agent-network:"
"""A network's queue is this prefix and the network's name."""


def network_queue(network: str) -> str:
    """The queue the runs of the network named `network` wait on for a worker."""
    return NETWORK_PREFIX + network


def is_workers_queue(queue: str | None) -> bool:
    """Whether `queue` is a queue workers claim from (a network's, or the earlier shared
    one), as opposed to a process's own queue or none."""
    return queue is not None and (queue == SHARED_QUEUE or queue.startswith(NETWORK_PREFIX))
