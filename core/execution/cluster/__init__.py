"""Executions on a Ray cluster (``--executor ray[:ADDRESS]``): the local executor's zygote
pool in an actor per CPU slot of every node, driven from the one process that runs the turn
loops and owns the store. Ray is imported only here, and only when this executor is chosen."""
