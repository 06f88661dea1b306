"""The field's formats themselves, at the bottom of the package: ATIF read and write, the RSR provenance
convention inside ATIF, the Terminus 2 protocol, harness-control recognition, command extraction and
normalisation, reward-value rules, and strict reading with errors that say where. Built only on the layers
below it (the models, the prompt templates, the shared vocabulary); ingest, export, the store and the
harnesses all build on it."""
