"""The embedded Nova's pooled SQLite connections (harness/dbpool.py), on
oslo.db's own create_engine and a real SQLite file."""

import sqlalchemy
from sqlalchemy import pool

from oslo_db.sqlalchemy import engines

from faultdriver.harness import dbpool


def connections_opened(engine, transactions):
    """New DBAPI connections ``engine`` opens for ``transactions``
    transactions, one after another."""
    opened = []
    sqlalchemy.event.listen(engine, 'connect',
                            lambda *args: opened.append(1))
    for _ in range(transactions):
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text('SELECT 1'))
    return len(opened)


def test_oslo_db_opens_a_connection_per_transaction(tmp_path):
    # What the fixture is for: without it, every transaction connects
    # (and SQLite parses the schema again).
    engine = engines.create_engine('sqlite:///%s' % (tmp_path / 'a.db'))
    assert isinstance(engine.pool, pool.NullPool)
    assert connections_opened(engine, 20) == 20


def test_an_engine_made_under_the_fixture_reuses_its_connection(tmp_path):
    with dbpool.PooledSqliteConnections() as fixture:
        engine = engines.create_engine('sqlite:///%s' % (tmp_path / 'a.db'))
        assert isinstance(engine.pool, pool.QueuePool)
        # At most one (oslo.db's test connection may have opened it).
        assert connections_opened(engine, 20) <= 1
        assert engine.pool.checkedin() == 1
        # Its records go where SQLAlchemy's pools log, not faultdriver's.
        assert engine.pool.logger.name.startswith('sqlalchemy.pool.')
    # The pooled connection is closed with the fixture.
    assert fixture.pools == [engine.pool]
    assert engine.pool.checkedin() == 0


def test_no_thread_waits_for_a_connection(tmp_path):
    # A crashed thread keeps its connection: more than the pool keeps
    # must still be handed out at once.
    with dbpool.PooledSqliteConnections():
        engine = engines.create_engine('sqlite:///%s' % (tmp_path / 'a.db'))
        held = [engine.connect() for _ in range(dbpool.KEPT + 5)]
        assert len({id(c.connection.dbapi_connection) for c in held}) == \
            dbpool.KEPT + 5
        for each in held:
            each.close()


def test_in_memory_databases_keep_their_pool():
    # Eventlet mode: one shared in-memory connection, left alone.
    with dbpool.PooledSqliteConnections() as fixture:
        engine = engines.create_engine('sqlite://')
        assert isinstance(engine.pool, pool.StaticPool)
    assert fixture.pools == []


def test_the_patch_is_undone(tmp_path):
    with dbpool.PooledSqliteConnections():
        pass
    engine = engines.create_engine('sqlite:///%s' % (tmp_path / 'a.db'))
    assert isinstance(engine.pool, pool.NullPool)
