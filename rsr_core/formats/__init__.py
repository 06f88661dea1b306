"""The field's formats themselves, at the bottom of the package: ATIF read and write, the RSR provenance
convention inside ATIF, the Terminus 2 protocol, harness-control recognition, command extraction and
normalisation, reward-value rules, and strict reading with errors that say where. Depends on the models only;
ingest, export, the store and the harnesses all build on it."""
