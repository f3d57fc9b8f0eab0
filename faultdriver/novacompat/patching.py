"""Patching Nova without ever creating what is not there.

``fixtures.MonkeyPatch`` and ``setattr`` create a missing attribute: if
Nova renames ``INITIAL_REPORTING_DELAY`` or ``migrateToURI3``, the patch
lands on a name nobody reads and the feature behind it silently stops.
Here every patch target must be declared in
:mod:`faultdriver.novacompat.declared` and pass its check (it exists, it
takes the arguments the replacement expects) first; otherwise a
:class:`~faultdriver.exception.ConfigError` names the symbol, the
feature and the Nova version.  The fixtures for tests (which need the
``fixtures`` library, not a Nova runtime dependency) are in
:mod:`faultdriver.novacompat.patchfixtures`.
"""

import importlib

from faultdriver import exception
from faultdriver import novacompat


def checked(symbol):
    """Check every declared assumption about ``symbol``; ConfigError if
    one is broken or none is declared."""
    declared = [a for a in novacompat.assumptions() if a.symbol == symbol]
    if not declared:
        raise exception.ConfigError(
            'faultdriver patches %s, which faultdriver.novacompat.declared '
            'does not declare: declare it (feature, shape) first' % symbol)
    novacompat.verify(declared=declared)


def _owner(symbol):
    module_name, _, name = symbol.rpartition('.')
    parts = module_name.split('.')
    for cut in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module('.'.join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            owner = getattr(owner, part)
        return owner, name
    raise ImportError(symbol)


def replace(symbol, new):
    """Set a declared, checked Nova symbol to ``new`` outside a fixture
    (process-wide hooks with their own lifetime); returns a callable that
    puts the original back."""
    checked(symbol)
    owner, name = _owner(symbol)
    inherited = name not in vars(owner)
    original = vars(owner).get(name)
    setattr(owner, name, new)

    def undo():
        if inherited:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    return undo


def replace_on(obj, name, new, symbol):
    """Set ``obj.name`` (an instance of the class ``symbol`` names the
    attribute of) to ``new``; the attribute must exist and ``symbol`` be
    declared and hold."""
    checked(symbol)
    if not hasattr(obj, name):
        raise exception.ConfigError(
            'faultdriver sets %s on a %s, which has no such attribute (%s)'
            % (name, type(obj).__name__, novacompat.nova_version_text()))
    setattr(obj, name, new)
