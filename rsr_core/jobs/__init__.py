"""Jobs: work units with a status in the store, run by a backend (threads on this machine, or Ray tasks on a
cluster) while one process, the driver, writes every result."""
