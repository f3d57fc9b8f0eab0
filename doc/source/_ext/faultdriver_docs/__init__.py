"""Sphinx extension of faultdriver's documentation.

The reference pages (actions, points, fixes, scenario keys, Nova
assumptions, what each tier provides) hold their generated parts as
text, so that they read whole in the repository;
:mod:`faultdriver_docs.generate` writes them from faultdriver's single
sources of truth (``tools/generate-reference.py``) and a unit test
keeps them current.  What is left for Sphinx: files included from
outside ``doc/source`` get one allowance (``includes``).
"""

from faultdriver_docs import includes


def setup(app):
    app.connect('include-read', includes.lengthen_underlines)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
