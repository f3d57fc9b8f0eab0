"""MariaDB and RabbitMQ from the distribution's packages, on 127.0.0.1.

Both run as children of the runner with their data in the run's temp
directory; nothing is installed as a system service and no port listens
on anything but loopback (Erlang's port mapper and distribution port
included).  Where their programs are, and whether they are there at
all, is :mod:`faultdriver.scenario.prereqs`'s.

``stop`` is safe whatever ``start`` got to: it stops what was started.
"""

import os
import shutil
import typing

from faultdriver.process import procs
from faultdriver.scenario import prereqs

#: A row of a query's answer, column by column: values as the database
#: gives them (pymysql has no stubs; any column type).
Row = dict[str, typing.Any]


class MariaDB:
    """A throw-away MariaDB server; ``url(db)`` for SQLAlchemy."""

    def __init__(self, workdir: str,
                 env: typing.Optional[typing.Mapping[str, str]] = None
                 ) -> None:
        self.env = env or {}
        self.dir = os.path.join(workdir, 'mariadb')
        self.port = procs.free_port()
        self.init: typing.Optional[procs.Process] = None
        self.process: typing.Optional[procs.Process] = None

    def url(self, database: str) -> str:
        return 'mysql+pymysql://root@127.0.0.1:%d/%s?charset=utf8' % (
            self.port, database)

    @property
    def data(self) -> str:
        return os.path.join(self.dir, 'data')

    def start(self, timeout: float = 60,
              template: typing.Optional[str] = None) -> 'MariaDB':
        """Start on a new data directory, or on a copy of ``template``."""
        os.makedirs(self.dir, exist_ok=True)
        log = os.path.join(self.dir, 'mariadb.log')
        if template:
            shutil.copytree(template, self.data)
        elif not os.path.isdir(self.data):
            self.init = procs.Process('mariadb-install-db', [
                prereqs.program('mariadb-install-db'), '--no-defaults',
                '--datadir=' + self.data, '--user=root',
                '--auth-root-authentication-method=normal',
                '--skip-test-db'], log, env=self.env).start()
            code = self.init.wait(timeout)
            if code != 0:
                raise RuntimeError('mariadb-install-db failed (exit %s); '
                                   'log: %s' % (code, log))
        # No grant tables: the server only listens on loopback and lives
        # for one run; every client is root without a password.
        self.process = procs.Process('mariadbd', [
            prereqs.program('mariadbd'), '--no-defaults',
            '--datadir=' + self.data, '--user=root',
            '--bind-address=127.0.0.1', '--port=%d' % self.port,
            '--socket=' + os.path.join(self.dir, 'mysql.sock'),
            '--pid-file=' + os.path.join(self.dir, 'mysql.pid'),
            '--skip-grant-tables', '--skip-name-resolve',
            '--innodb-buffer-pool-size=128M', '--innodb-log-file-size=16M',
            '--innodb-flush-log-at-trx-commit=2', '--sync-binlog=0',
            '--max-connections=1000', '--character-set-server=utf8mb4',
        ], log, env=self.env).start()
        procs.wait_until(lambda: procs.port_open(self.port), timeout,
                         'MariaDB on port %d' % self.port,
                         process=self.process)
        return self

    def snapshot(self, dest: str) -> None:
        """Copy the data directory (stopped cleanly, then restarted)."""
        assert self.process is not None, 'snapshot() follows start()'
        self.process.stop(grace=60)
        shutil.copytree(self.data, dest)
        self.start()

    def create_databases(self, *names: str) -> None:
        import pymysql
        conn = pymysql.connect(host='127.0.0.1', port=self.port, user='root')
        try:
            with conn.cursor() as cur:
                for name in names:
                    cur.execute('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                                % name)
        finally:
            conn.close()

    def query(self, database: str, sql: str,
              *args: object) -> typing.Sequence[Row]:
        import pymysql
        conn = pymysql.connect(host='127.0.0.1', port=self.port, user='root',
                               database=database,
                               cursorclass=pymysql.cursors.DictCursor)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                rows: typing.Sequence[Row] = cur.fetchall()
            conn.commit()
            return rows
        finally:
            conn.close()

    def stop(self, grace: float = 5.0) -> None:
        for process in (self.process, self.init):
            if process:
                process.stop(grace)


class RabbitMQ:
    """A throw-away RabbitMQ broker (user guest, loopback only)."""

    def __init__(self, workdir: str,
                 env: typing.Optional[typing.Mapping[str, str]] = None
                 ) -> None:
        self.base_env = env or {}
        self.dir = os.path.join(workdir, 'rabbitmq')
        self.port = procs.free_port()
        self.epmd_port = procs.free_port()
        self.dist_port = procs.free_port()
        self.node = 'faultdriver%d@localhost' % self.port
        self.process: typing.Optional[procs.Process] = None
        self.epmd: typing.Optional[procs.Process] = None

    @property
    def url(self) -> str:
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def ctl_env(self) -> dict[str, str]:
        """Environment for the broker and its CLI (rabbitmqctl)."""
        plugins = os.path.join(self.dir, 'enabled_plugins')
        return dict(self.base_env, **{
            'HOME': self.dir,           # .erlang.cookie
            'ERL_EPMD_ADDRESS': '127.0.0.1',
            'ERL_EPMD_PORT': str(self.epmd_port),
            'RABBITMQ_NODENAME': self.node,
            'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'RABBITMQ_MNESIA_BASE': os.path.join(self.dir, 'mnesia'),
            'RABBITMQ_LOG_BASE': os.path.join(self.dir, 'log'),
            'RABBITMQ_ENABLED_PLUGINS_FILE': plugins,
            'RABBITMQ_CONFIG_FILE': os.path.join(self.dir, 'rabbitmq'),
            # Our own port mapper (a child we can stop), and the Erlang
            # distribution on loopback only.
            'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS':
                '-start_epmd false -kernel inet_dist_use_interface '
                '{127,0,0,1}',
        })

    def start(self, timeout: float = 90) -> 'RabbitMQ':
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> 'RabbitMQ':
        """Start epmd and the broker, without waiting for the broker."""
        os.makedirs(os.path.join(self.dir, 'mnesia'))
        os.makedirs(os.path.join(self.dir, 'log'))
        plugins = os.path.join(self.dir, 'enabled_plugins')
        with open(plugins, 'w') as out:
            out.write('[].\n')
        log = os.path.join(self.dir, 'rabbitmq.log')
        env = self.ctl_env()
        self.epmd = procs.Process('epmd', [
            prereqs.program('epmd'), '-address', '127.0.0.1', '-port',
            str(self.epmd_port)],
            os.path.join(self.dir, 'epmd.log'), env=env).start()
        procs.wait_until(lambda: procs.port_open(self.epmd_port), 10,
                         'epmd', process=self.epmd)
        # The packaged wrapper in /usr/sbin switches to the rabbitmq user;
        # the real script runs the broker as us, with our directories.
        self.process = procs.Process('rabbitmq-server', [
            prereqs.program('rabbitmq-server')], log,
            env=env, cwd=self.dir).start()
        return self

    def stop_broker(self, grace: float = 10.0) -> None:
        """Stop the broker (SIGTERM: its own orderly shutdown), its port
        mapper left running for :meth:`relaunch`.  Its queues that are
        not durable (every RPC queue Nova's transport declares) go with
        it, as in a broker restart in a cloud."""
        if self.process:
            self.process.stop(grace)

    def relaunch(self) -> 'RabbitMQ':
        """Start the broker again after :meth:`stop_broker`, on its port,
        directories and port mapper; returns without waiting."""
        if self.process is None or self.process.alive():
            raise RuntimeError('RabbitMQ on port %d is not stopped'
                               % self.port)
        self.process = procs.Process(
            'rabbitmq-server', self.process.argv, self.process.log,
            env=self.ctl_env(), cwd=self.dir).start()
        return self

    def wait_ready(self, timeout: float = 90) -> 'RabbitMQ':
        """Wait until the broker listens (it exited: an error)."""
        procs.wait_until(lambda: procs.port_open(self.port), timeout,
                         'RabbitMQ on port %d' % self.port,
                         process=self.process)
        return self

    def stop(self, grace: float = 5.0) -> None:
        for process in (self.process, self.epmd):
            if process:
                process.stop(grace)
