"""The answer-transfer reader: did a rewrite's commands carry a value the run could not have seen?

Two stages. The static reading (`reading.py`) reads every value the commands spell, in any form the shell or a
Python one-liner turns back into it (`values.py`, with the shell's own expansions in `shellrun.py`,
`shellnorm.py`, `programs.py`, `pyfold.py`, `decode.py`, `filters.py`), against what the run saw on its screen
(`seen.py`). The replay (`replay.py`) runs the commands again on the base image without the task's files and
reads what comes out of them. Evidence lines name their stage (`stages.py`). The Critic
(rsr_core/rewrite/transfer.py) runs both and a model check beside them.
"""
