"""Scenarios: YAML files of steps and expectations, run on an embedded
Nova once per variant, reported side by side.

``model`` loads and validates a file, ``runner`` runs
one variant in a process of its own, ``launch`` starts those processes,
``report`` renders what they found.
"""
