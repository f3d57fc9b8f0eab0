"""Sphinx configuration of faultdriver's documentation.

The reference pages (actions, points, fixes, scenario keys, Nova
assumptions) are generated at build time by the extension in ``_ext``
from the installed faultdriver: build with ``tox -e docs``.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_ext'))

project = 'faultdriver'
copyright = 'faultdriver developers'
extensions = ['faultdriver_docs']

root_doc = 'index'
exclude_patterns = ['_ext']
# Plain quotes: commands and rules are copied from the pages.
smartquotes = False
# Inline code in prose, as in the docstrings and README: ``text``.
default_role = None
nitpicky = True

# Sphinx's default theme: openstackdocstheme installs, but brands every
# page as docs.openstack.org (OpenStack logo and menus, its search, an
# analytics tag), which faultdriver is not.
html_theme = 'alabaster'
html_theme_options = {'description': "Fault injection for OpenStack Nova's "
                                     'compute service',
                      'fixed_sidebar': True}
html_static_path = []
