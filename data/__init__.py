"""The demo corpus and the scripted model's script; installed inside the package as `rsr_core.demo_data`."""
