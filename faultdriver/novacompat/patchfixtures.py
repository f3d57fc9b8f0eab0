"""Fixtures that patch Nova for a test, through the checked helper.

Like ``fixtures.MonkeyPatch``, restored on cleanup, but a target must be
declared in :mod:`faultdriver.novacompat.declared` and pass its check
(:func:`faultdriver.novacompat.patching.checked`), so a renamed Nova
symbol fails the test's setUp instead of being created and ignored.
"""

import fixtures
import typing

from faultdriver import exception
from faultdriver import novacompat
from faultdriver.novacompat.patching import checked


class Patch(fixtures.Fixture):
    """``fixtures.MonkeyPatch(symbol, new)`` for a declared, checked Nova
    symbol; restored on cleanup."""

    def __init__(self, symbol: str, new: object) -> None:
        super().__init__()
        self.symbol = symbol
        self.new = new

    def _setUp(self) -> None:
        checked(self.symbol)
        self.useFixture(fixtures.MonkeyPatch(self.symbol, self.new))


class PatchMethods(fixtures.Fixture):
    """Wrap methods ``names`` of the declared class ``symbol`` with
    ``wrap(original) -> replacement``; each must be the class's own."""

    def __init__(self, symbol: str, names: typing.Iterable[str],
                 wrap: typing.Callable[[typing.Any], typing.Any]) -> None:
        super().__init__()
        self.symbol = symbol
        self.names = tuple(names)
        self.wrap = wrap

    def _setUp(self) -> None:
        checked(self.symbol)
        cls = novacompat.resolve(self.symbol)
        missing = [n for n in self.names if n not in vars(cls)]
        if missing or not self.names:
            raise exception.ConfigError(
                'faultdriver wraps %s.%s, which %s does not define (%s)'
                % (self.symbol, ', '.join(missing) or '(no method)',
                   cls.__name__, novacompat.nova_version_text()))
        for name in self.names:
            self.useFixture(fixtures.MonkeyPatch(
                '%s.%s' % (self.symbol, name), self.wrap(vars(cls)[name])))
