"""Database schemas of a stack, built once with the real tools, then cached.

The first stack runs ``placement-manage db sync`` and Nova's
``nova-manage api_db sync``, ``cell_v2 map_cell0``/``create_cell`` and
``db sync`` (half a minute to a minute on two cores).  The MariaDB data
directory is then copied under ``~/.cache/faultdriver``, keyed by the
Nova and placement versions; later stacks start from a copy of it and
only rewrite the cell mappings' database and broker addresses (and, with
Keystone, whose users and catalog are cached too, the endpoints' URLs and
the users' passwords).  Delete that directory to rebuild.
"""

from importlib import metadata
import json
import os
import shutil
import typing

from faultdriver.process import backing
from faultdriver.scenario import prereqs

DATABASES = ('nova_api', 'nova_cell0', 'nova_cell1', 'placement')
#: A stack with Keystone (:mod:`faultdriver.process.keystone`) also has
#: Keystone's, synced with ``keystone-manage db_sync`` and cached in a
#: template of its own (the ordinary stack's stays as small as it was).
KEYSTONE_DATABASE = 'keystone'


class Stack(typing.Protocol):
    """What the cache reads of a stack (:class:`stack.Stack`, which
    imports this module)."""

    @property
    def db(self) -> backing.MariaDB: ...

    @property
    def rabbit(self) -> backing.RabbitMQ: ...

    @property
    def keystone(self) -> bool: ...

    @property
    def password(self) -> typing.Optional[str]: ...

    def keystone_endpoints(self) -> dict[str, tuple[str, str]]: ...


def databases(keystone: bool = False) -> tuple[str, ...]:
    return DATABASES + ((KEYSTONE_DATABASE,) if keystone else ())


def cache_dir() -> str:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache')
    return os.path.join(base, 'faultdriver')


def template_path(keystone: bool = False) -> str:
    """Keyed by Nova's and placement's versions (the schema), by
    Keystone's where the stack has it, and by the MariaDB server binary
    (the data directory's format)."""
    server = os.stat(prereqs.program('mariadbd'))
    return os.path.join(cache_dir(), 'mariadb-%d-nova-%s-placement-%s%s' % (
        server.st_mtime, metadata.version('nova'),
        metadata.version('openstack-placement'),
        '-keystone-%s-catalog' % metadata.version('keystone') if keystone
        else ''))


def cached(keystone: bool = False) -> typing.Optional[str]:
    """The cached data directory, or None."""
    path = template_path(keystone)
    return path if os.path.exists(os.path.join(path, 'faultdriver.json')) \
        else None


def adopt(stack: Stack, keystone: typing.Optional[bool] = None) -> None:
    """Point the copied cell mappings at this stack's database and
    broker; with ``keystone`` (default: the stack's), Keystone's catalog
    and passwords too (from the template with Keystone)."""
    keystone = stack.keystone if keystone is None else keystone
    template = cached(keystone)
    assert template is not None, 'adopt() follows a cached template'
    with open(os.path.join(template, 'faultdriver.json')) as f:
        old: dict[str, int] = json.load(f)
    for column, before, after in (
            ('database_connection', old['db_port'], stack.db.port),
            ('transport_url', old['rabbit_port'], stack.rabbit.port)):
        stack.db.query('nova_api', 'UPDATE cell_mappings SET {0} = '
                       'REPLACE({0}, %s, %s)'.format(column),
                       '127.0.0.1:%d/' % before, '127.0.0.1:%d/' % after)
    if keystone:
        from faultdriver.process import keystone as keystone_module
        assert stack.password is not None   # a stack with Keystone's
        keystone_module.adopt(stack.db.query, stack.password,
                              stack.keystone_endpoints())


def save(stack: Stack) -> None:
    """Keep a copy of the freshly built data directory for later stacks."""
    path = template_path(stack.keystone)
    if cached(stack.keystone):
        return
    tmp = path + '.%d.tmp' % os.getpid()
    stack.db.snapshot(tmp)
    with open(os.path.join(tmp, 'faultdriver.json'), 'w') as f:
        json.dump({'db_port': stack.db.port,
                   'rabbit_port': stack.rabbit.port}, f)
    try:
        os.rename(tmp, path)
    except OSError:             # another run saved it first
        shutil.rmtree(tmp, ignore_errors=True)
