"""Pooled connections to the embedded Nova's file-backed SQLite databases.

In threading mode Nova's test fixtures put every database in a SQLite
file (WAL), and oslo.db gives file-backed SQLite a ``NullPool``: every
transaction opens a new connection, and SQLite parses Nova's whole
schema again at a new connection's first statement.  That parse was
~14% of a sweep case's CPU (py-spy over five served cases, 2026-12-01;
benchmarks/RESULTS.rst).  Deployed Nova keeps its (MySQL) connections in
a ``QueuePool``, and so does SQLAlchemy for file SQLite: this fixture
gives the embedded Nova's engines a ``QueuePool`` too, with no limit on
connections (as with ``NullPool``, a thread never waits for one, so a
crashed thread that keeps its connection cannot stall the others), and
closes the pooled connections when the embedded Nova ends.

In eventlet mode the databases are in memory on one shared connection
(``StaticPool``) and nothing changes.
"""

import typing

import fixtures
from sqlalchemy import pool

from faultdriver import novacompat
from faultdriver.novacompat import patchfixtures

#: Where oslo.db picks an engine's pool class (create_engine calls it).
CHOOSER = 'oslo_db.sqlalchemy.engines._init_connection_args'
#: Connections a pool keeps open between transactions (more are opened
#: as needed and closed when given back).
KEPT = 10


class PooledSqliteConnections(fixtures.Fixture):
    """Engines created while this fixture is up pool their connections
    where oslo.db would open one per transaction."""

    def _setUp(self) -> None:
        self.pools: typing.List[pool.QueuePool] = []
        self.addCleanup(self._close_pools)
        self.useFixture(patchfixtures.Patch(
            CHOOSER, self._choose(novacompat.resolve(CHOOSER))))

    def _choose(self, original: typing.Callable[..., None]
                ) -> typing.Callable[..., None]:
        fixture = self

        class CasePool(pool.QueuePool):
            # SQLAlchemy names a pool's logger after its class's module:
            # keep its records where a plain QueuePool's go, out of the
            # faultdriver logs scenario reports capture.
            __module__ = pool.QueuePool.__module__

            def __init__(self, *args: typing.Any,
                         **kwargs: typing.Any) -> None:
                super().__init__(*args, **kwargs)
                fixture.pools.append(self)

        def choose(url: typing.Any, engine_args: typing.Dict[str, typing.Any],
                   kw: typing.Any) -> None:
            original(url, engine_args, kw)
            if engine_args.get('poolclass') is pool.NullPool and \
                    url.get_backend_name() == 'sqlite' and \
                    url.get_dialect().get_pool_class(url) is pool.QueuePool:
                # A file's connection does not go stale: no ping.
                engine_args.update(poolclass=CasePool, pool_size=KEPT,
                                   max_overflow=-1, pool_pre_ping=False)
        return choose

    def _close_pools(self) -> None:
        for each in self.pools:
            each.dispose()
