"""The RSR pipeline: the Planner, the Critic (with the answer-transfer filter), the Executor, and the work
units a rewrite job runs."""
