"""The public surface of Nova's ComputeDriver: the single source of truth.

Delegation and the points catalogue are both generated from it, so a method
that a later Nova adds to ``ComputeDriver`` is wrapped and becomes a point
without anyone writing it down.
"""

import inspect
import typing

from nova.virt import driver as nova_driver

BASE = nova_driver.ComputeDriver

#: Public class attributes that are data, not calls: read through.
DATA_ATTRIBUTES = ('capabilities', 'rebalances_nodes')


def public_methods(base: type = BASE) -> typing.Dict[str, object]:
    """Map each public callable of ``base`` to its raw class attribute."""
    methods: typing.Dict[str, object] = {}
    for klass in reversed(base.__mro__):
        for name, value in vars(klass).items():
            if name.startswith('_') or name in DATA_ATTRIBUTES:
                continue
            if callable(value) or isinstance(value, (classmethod,
                                                     staticmethod)):
                methods[name] = value
    return dict(sorted(methods.items()))


def has_default_body(name: str, base: type = BASE) -> bool:
    """True if ``ComputeDriver`` implements the method (no NIE)."""
    func = getattr(base, name)
    source = inspect.getsource(func)
    return 'raise NotImplementedError' not in source
