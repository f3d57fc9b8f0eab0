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
import inspect
import typing

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


def replace_on(obj: object, name: str, new: object,
               symbol: str) -> typing.Callable[[], None]:
    """Set ``obj.name`` (an instance of the class ``symbol`` names the
    attribute of) to ``new``; the attribute must exist and ``symbol`` be
    declared and hold.  Returns a callable that puts back what the
    instance had (its class's attribute shows through again)."""
    checked(symbol)
    if not hasattr(obj, name):
        raise exception.ConfigError(
            'faultdriver sets %s on a %s, which has no such attribute (%s)'
            % (name, type(obj).__name__, novacompat.nova_version_text()))
    own = vars(obj)
    had = name in own
    original = own.get(name)
    setattr(obj, name, new)

    def undo() -> None:
        if had:
            setattr(obj, name, original)
        else:
            delattr(obj, name)
    return undo


class Layer:
    """One owner's wrapper of a Nova method, in a stack of them: what it
    wraps (``below``, a class attribute: a function or a classmethod) is
    read at each call, so removing a layer under it only re-links."""

    def __init__(self, below, inherited):
        self.below = below
        self.inherited = inherited   # below comes from a base class
        self.attribute = None

    def call_below(self, obj, cls, *args, **kwargs):
        """Call what this layer wraps, bound as ``obj.<name>`` (or
        ``cls.<name>`` for a classmethod) would be."""
        return self.below.__get__(obj, cls)(*args, **kwargs)


def _layer_of(attribute):
    function = getattr(attribute, '__func__', attribute)
    return getattr(function, '__faultdriver_layer__', None)


def wrap(symbol, make):
    """Put ``make(layer)`` (a function or classmethod calling
    ``layer.call_below``) in place of a declared, checked Nova method;
    returns the undo, which removes exactly this wrapper.

    Several owners wrap the same method (every compute service of one
    process hooks its own tracker) and stop in any order: each undo
    re-links the wrapper above it, so none restores an attribute another
    still needs and none keeps count of the others.
    """
    checked(symbol)
    owner, name = _owner(symbol)
    inherited = name not in vars(owner)
    layer = Layer(inspect.getattr_static(owner, name), inherited)
    layer.attribute = make(layer)
    function = getattr(layer.attribute, '__func__', layer.attribute)
    function.__faultdriver_layer__ = layer
    setattr(owner, name, layer.attribute)

    def undo():
        above = None
        current = vars(owner).get(name)
        while current is not layer.attribute:
            found = _layer_of(current)
            if found is None:
                raise RuntimeError(
                    'faultdriver cannot take its wrapper off %s: %r replaced '
                    'it without wrapping it' % (symbol, current))
            above, current = found, found.below
        if above is not None:
            above.below, above.inherited = layer.below, layer.inherited
        elif layer.inherited:
            delattr(owner, name)
        else:
            setattr(owner, name, layer.below)
    return undo
