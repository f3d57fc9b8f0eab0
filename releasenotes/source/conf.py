"""Sphinx configuration of faultdriver's release notes (reno).

Notes are YAML files in ``releasenotes/notes`` (``reno new SLUG``); reno
reads them from the git history, so a note shows once it is committed.
Build with ``tox -e releasenotes``.
"""

project = 'faultdriver release notes'
copyright = 'faultdriver developers'
extensions = ['reno.sphinxext']
root_doc = 'index'
smartquotes = False
html_theme = 'alabaster'
