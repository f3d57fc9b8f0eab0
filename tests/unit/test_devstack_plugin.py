"""devstack/plugin.sh writes a nova.conf that faultdriver validate accepts.

The plugin runs under bash with stand-ins for the devstack functions it
calls (tests/unit/data/devstack-functions.sh; set FAULTDRIVER_DEVSTACK_INI
to devstack's inc/ini-config to use devstack's own ini functions), against
a temporary nova.conf as devstack's configure_nova leaves it, and the
result is checked with the real ``faultdriver validate``.  A real devstack
run is not part of this test.
"""

import configparser
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

from oslo_config import cfg

import yaml

from faultdriver import conf as fd_conf
from faultdriver.process import config as process_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHIM = ROOT / 'tests/unit/data/devstack-functions.sh'
BIN_DIR = pathlib.Path(sys.executable).parent
FAULTDRIVER = BIN_DIR / 'faultdriver'

NOVA_CONF = """\
[DEFAULT]
debug = True
compute_driver = libvirt.LibvirtDriver

[libvirt]
virt_type = qemu
"""

# Separated by ';' and a newline; the third has a ';' and escaped quotes
# inside its quoted argument.
RULES = [
    'pre_live_migration@dest: crash',
    'live_migration.after: 1*delay(30)',
    r'check_can_live_migrate_source: raise(MigrationPreCheckError, '
    r'"no room; \"dest\" is full")',
]
RULES_SETTING = '%s ;%s\n  %s\n' % tuple(RULES)


class PluginRun(unittest.TestCase):
    """Runs devstack/plugin.sh phases against temporary files."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = pathlib.Path(tmp.name)
        self.nova_conf = self.tmp / 'nova.conf'
        self.nova_conf.write_text(NOVA_CONF)
        self.calls = self.tmp / 'calls'
        self.calls.touch()

    def run_plugin(self, *phase, services='n-cpu,placement-client',
                   bin_dir=BIN_DIR, cwd=None, **settings):
        env = {
            'PATH': os.environ['PATH'],
            'DEST': str(self.tmp),
            'DATA_DIR': str(self.tmp / 'data'),
            'NOVA_STATE_PATH': str(self.tmp / 'data/nova'),
            'NOVA_DIR': str(self.tmp / 'nova'),
            'NOVA_CONF': str(self.nova_conf),
            'NOVA_CPU_CONF': str(self.tmp / 'nova-cpu.conf'),
            'NOVA_BIN_DIR': str(bin_dir),
            'ENABLED_SERVICES': services,
            'VIRT_DRIVER': 'libvirt',
            'DEVSTACK_CALLS': str(self.calls),
            'FAULTDRIVER_DIR': str(ROOT),
            'PYTHON': sys.executable,
            'HOME': str(self.tmp / 'home'),
            'HOSTNAME': 'node',
            'HOST_IP': '10.199.0.11',
            'STACK_USER': 'stack',
            'NOVA_CONF_DIR': str(self.tmp),
        }
        for name in ('FAULTDRIVER_DEVSTACK_INI', 'PYTHONPATH'):
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(settings)
        script = ('set -o errexit -o nounset\n'
                  'source "$1"\n'
                  'source "$2/devstack/settings"\n'
                  'shift 2\n'
                  'source "$FAULTDRIVER_DIR/devstack/plugin.sh" "$@"\n')
        return subprocess.run(
            ['bash', '-c', script, 'bash', str(SHIM), str(ROOT), *phase],
            env=env, capture_output=True, text=True, timeout=120, cwd=cwd)

    def validate(self, *sources):
        done = subprocess.run(
            [str(FAULTDRIVER), 'validate', '-f', 'json', *sources],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, done.returncode, done.stderr)
        rows = json.loads(done.stdout)
        return [row['Rule (canonical form)'] for row in rows]

    def read_conf(self, path):
        config = cfg.ConfigOpts()
        fd_conf.register_opts(config)
        config.register_opt(cfg.StrOpt('compute_driver'))
        config([], default_config_files=[str(path)])
        return config

    def rule_lines(self, path):
        prefix = 'rules = '
        return [line[len(prefix):]
                for line in path.read_text().splitlines()
                if line.startswith(prefix)]

    def assert_ok(self, done):
        self.assertEqual(0, done.returncode,
                         'stdout:\n%s\nstderr:\n%s' % (done.stdout,
                                                      done.stderr))

    def read_ini_value(self, section, option):
        config = cfg.ConfigOpts()
        config.register_opt(cfg.StrOpt(option), group=section)
        config([], default_config_files=[str(self.nova_conf)])
        return config[section][option]


class TestDevstackPlugin(PluginRun):

    def test_post_config_writes_what_settings_say(self):
        settings = dict(
            FAULTDRIVER_ENABLED='true',
            FAULTDRIVER_RULES=RULES_SETTING,
            FAULTDRIVER_TRACKER_PATCHES='stale_migration_context',
            FAULTDRIVER_JOURNAL_PATH=str(self.tmp / 'j/journal.jsonl'),
            FAULTDRIVER_CONTROL_SOCKET=str(self.tmp / 's/fd.sock'))
        self.assert_ok(self.run_plugin('stack', 'post-config', **settings))

        # One line per rule, in order, exactly as given.
        self.assertEqual(RULES, self.rule_lines(self.nova_conf))
        self.assertEqual(self.validate(*RULES),
                         self.validate(str(self.nova_conf)))
        config = self.read_conf(self.nova_conf)
        self.assertEqual('faultdriver.FaultDriver', config.compute_driver)
        group = config.fault_injection
        self.assertIs(True, group.enabled)
        self.assertEqual('libvirt.LibvirtDriver', group.inner_driver)
        self.assertEqual(['stale_migration_context'], group.tracker_patches)
        self.assertEqual(settings['FAULTDRIVER_JOURNAL_PATH'],
                         group.journal_path)
        self.assertEqual(settings['FAULTDRIVER_CONTROL_SOCKET'],
                         group.control_socket)
        self.assertTrue((self.tmp / 'j').is_dir())
        self.assertTrue((self.tmp / 's').is_dir())
        self.assertEqual('qemu', self.read_ini_value('libvirt', 'virt_type'))

        # Again on the same file (a second post-config): same result.
        before = self.nova_conf.read_text()
        self.assert_ok(self.run_plugin('stack', 'post-config', **settings))
        self.assertEqual(before, self.nova_conf.read_text())

    def test_defaults_fire_nothing(self):
        self.assert_ok(self.run_plugin(
            'stack', 'post-config', FAULTDRIVER_INNER_DRIVER='fake_numa'))
        self.assertEqual([], self.validate(str(self.nova_conf)))
        group = self.read_conf(self.nova_conf).fault_injection
        self.assertIs(False, group.enabled)
        self.assertEqual('fake_numa', group.inner_driver)
        self.assertEqual([], self.rule_lines(self.nova_conf))
        self.assertEqual([], group.tracker_patches)
        self.assertEqual(
            str(self.tmp / 'data/nova/faultdriver-journal.jsonl'),
            group.journal_path)

    def test_bad_rule_fails_the_stack(self):
        done = self.run_plugin(
            'stack', 'post-config', FAULTDRIVER_ENABLED='True',
            FAULTDRIVER_RULES='pre_live_migration@dest: crash;'
                              'live_migration: 1*crsh')
        self.assertNotEqual(0, done.returncode, done.stdout)
        self.assertIn('[ERROR]', done.stderr)
        self.assertIn("'live_migration: 1*crsh'", done.stderr)
        self.assertIn("unknown action 'crsh'", done.stderr)

    def test_no_driver_to_wrap_fails(self):
        self.nova_conf.write_text('[DEFAULT]\ndebug = True\n')
        done = self.run_plugin('stack', 'post-config')
        self.assertNotEqual(0, done.returncode, done.stdout)
        self.assertIn('FAULTDRIVER_INNER_DRIVER is empty', done.stderr)

    def test_nothing_without_nova_compute(self):
        for phase in ('install', 'post-config', 'extra'):
            done = self.run_plugin('stack', phase, services='n-api,n-cond',
                                   FAULTDRIVER_RULES='live_migration: crsh')
            self.assert_ok(done)
        self.assertEqual(NOVA_CONF, self.nova_conf.read_text())
        self.assertEqual('', self.calls.read_text())

    def test_extra_checks_the_file_nova_compute_reads(self):
        # local.conf's [[post-config|$NOVA_CPU_CONF]] is merged after our
        # post-config, into the copy devstack makes when it starts n-cpu.
        self.assert_ok(self.run_plugin('stack', 'post-config'))
        cpu_conf = self.tmp / 'nova-cpu.conf'
        cpu_conf.write_text(self.nova_conf.read_text()
                            + 'rules = live_migration: crsh\n')
        done = self.run_plugin('stack', 'extra')
        self.assertNotEqual(0, done.returncode, done.stdout)
        self.assertIn("unknown action 'crsh'", done.stderr)

    def test_install_is_not_editable_and_links_into_nova_checkout(self):
        # Nova installed editable from a checkout, as devstack does: the
        # module pip puts in site-packages is not in that nova.virt.
        checkout = self.tmp / 'nova'
        (checkout / 'nova/virt').mkdir(parents=True)
        (checkout / 'nova/__init__.py').touch()
        (checkout / 'nova/virt/__init__.py').touch()
        subprocess.run(['git', 'init', '-q', str(checkout)], check=True)
        bin_dir = self.tmp / 'bin'
        bin_dir.mkdir()
        (bin_dir / 'nova-compute').write_text('#!%s\n' % sys.executable)
        (bin_dir / 'faultdriver').symlink_to(FAULTDRIVER)

        self.assert_ok(self.run_plugin('stack', 'install', bin_dir=bin_dir,
                                       PYTHONPATH=str(checkout)))
        self.assertEqual('setup_install %s libvirt\n' % ROOT,
                         self.calls.read_text())
        link = checkout / 'nova/virt/faultdriver'
        self.assertEqual(ROOT / 'nova/virt/faultdriver', link.readlink())
        status = subprocess.run(
            ['git', '-C', str(checkout), 'status', '--porcelain',
             '--untracked-files=all'],
            capture_output=True, text=True, check=True).stdout
        self.assertNotIn('faultdriver', status)

        self.assert_ok(self.run_plugin('clean', bin_dir=bin_dir))
        self.assertFalse(link.is_symlink())


class TestFakeComputesAndTimings(PluginRun):
    """Several fake computes on one node, the fault-test timings on every
    Nova node, and the cloud profile written at extra."""

    FAKE = dict(VIRT_DRIVER='fake', NUMBER_FAKE_NOVA_COMPUTE='2',
                FAULTDRIVER_INNER_DRIVER='fake_numa')

    def start_fake_computes(self):
        """What devstack's start_nova_compute does for VIRT_DRIVER=fake:
        nova-cpu.conf copied from nova.conf, then [DEFAULT] host and
        state_path added to nova-fake.conf-N."""
        cpu_conf = self.tmp / 'nova-cpu.conf'
        cpu_conf.write_text(self.nova_conf.read_text())
        for number in (1, 2):
            fake = self.tmp / ('nova-fake.conf-%d' % number)
            with open(fake, 'a') as out:
                out.write('\n[DEFAULT]\nhost = node%d\n' % number)
        return cpu_conf

    def compute_conf(self, cpu_conf, number):
        """The options fake compute ``number`` runs with."""
        config = cfg.ConfigOpts()
        fd_conf.register_opts(config)
        config.register_opt(cfg.StrOpt('host'))
        config([], default_config_files=[
            str(cpu_conf), str(self.tmp / ('nova-fake.conf-%d' % number))])
        return config

    def test_each_fake_compute_has_its_own_socket_and_journal(self):
        self.assert_ok(self.run_plugin('stack', 'post-config', **self.FAKE))
        cpu_conf = self.start_fake_computes()
        first, second = (self.compute_conf(cpu_conf, n) for n in (1, 2))
        state = self.tmp / 'data/nova'
        self.assertEqual(['node1', 'node2'], [first.host, second.host])
        self.assertEqual(str(state / 'faultdriver-node1.sock'),
                         first.fault_injection.control_socket)
        self.assertEqual(str(state / 'faultdriver-node2.sock'),
                         second.fault_injection.control_socket)
        self.assertEqual(str(state / 'faultdriver-journal-node2.jsonl'),
                         second.fault_injection.journal_path)
        self.assertEqual(str(state / 'faultdriver-start-rules-node1.json'),
                         first.fault_injection.start_rules_path)
        # Each reaches the other's socket for periodic(host=...).
        self.assertEqual({'node2': second.fault_injection.control_socket},
                         first.fault_injection.peer_control_sockets)
        self.assertEqual({'node1': first.fault_injection.control_socket},
                         second.fault_injection.peer_control_sockets)
        # A single-compute node keeps the one socket of nova.conf.
        self.assertEqual(str(state / 'faultdriver.sock'), self.read_conf(
            self.nova_conf).fault_injection.control_socket)

    def test_extra_writes_the_cloud_profile_of_the_fake_computes(self):
        profile = self.tmp / 'profile.yaml'
        settings = dict(self.FAKE, FAULTDRIVER_ENABLED='True',
                        FAULTDRIVER_CLOUD_PROFILE=str(profile))
        self.assert_ok(self.run_plugin('stack', 'post-config', **settings))
        cpu_conf = self.start_fake_computes()
        self.assert_ok(self.run_plugin('stack', 'extra', **settings))
        written = yaml.safe_load(profile.read_text())
        self.assertIs(True, written['fault_injection_allowed'])
        self.assertEqual('devstack-admin', written['cloud'])
        self.assertEqual(['dest', 'src'], sorted(written['hosts']))
        for alias, number in (('src', 1), ('dest', 2)):
            host = written['hosts'][alias]
            group = self.compute_conf(cpu_conf, number).fault_injection
            self.assertEqual('node%d' % number, host['host'])
            self.assertEqual('devstack@n-cpu-%d' % number, host['unit'])
            self.assertEqual({'journald': host['unit']}, host['log'])
            self.assertEqual('stack@10.199.0.11', host['ssh'])
            self.assertEqual(group.control_socket, host['socket'])
            self.assertEqual(group.journal_path, host['journal'])
            self.assertEqual(group.start_rules_path, host['start_rules'])
            # A fake compute has no libvirt to ask.
            self.assertNotIn('libvirt', host)

    def test_extra_gives_the_fake_computes_their_state_paths(self):
        # devstack makes them with sudo mkdir: root's, while each fake
        # compute runs as the stack user and fake_numa writes there.
        self.assert_ok(self.run_plugin('stack', 'post-config', **self.FAKE))
        self.start_fake_computes()
        for host in ('node1', 'node2'):
            (self.tmp / 'data/nova' / host).mkdir(parents=True)
        self.assert_ok(self.run_plugin('stack', 'extra', **self.FAKE))
        self.assertEqual(
            ['sudo chown stack %s' % (self.tmp / 'data/nova' / host)
             for host in ('node1', 'node2')],
            [line for line in self.calls.read_text().splitlines()
             if line.startswith('sudo chown')])

    def test_a_libvirt_compute_s_profile_names_its_libvirt(self):
        profile = self.tmp / 'profile.yaml'
        settings = dict(FAULTDRIVER_ENABLED='True',
                        FAULTDRIVER_CLOUD_PROFILE=str(profile))
        self.assert_ok(self.run_plugin('stack', 'post-config', **settings))
        cpu_conf = self.tmp / 'nova-cpu.conf'
        cpu_conf.write_text(self.nova_conf.read_text())
        self.assert_ok(self.run_plugin('stack', 'extra', **settings))
        # One compute on a node without nova-api: dest.
        [(alias, host)] = yaml.safe_load(profile.read_text())[
            'hosts'].items()
        self.assertEqual('dest', alias)
        self.assertEqual({'uri': 'qemu:///system'}, host['libvirt'])
        from faultdriver.cloud import profile as profile_module
        loaded = profile_module.load(path=str(profile))
        self.assertEqual(profile_module.Libvirt(),
                         loaded.hosts['dest'].libvirt)

    def test_profile_without_opt_in_does_not_allow_faults(self):
        profile = self.tmp / 'profile.yaml'
        settings = dict(self.FAKE, FAULTDRIVER_CLOUD_PROFILE=str(profile))
        self.assert_ok(self.run_plugin('stack', 'post-config', **settings))
        self.start_fake_computes()
        self.assert_ok(self.run_plugin('stack', 'extra', **settings))
        self.assertIs(False, yaml.safe_load(
            profile.read_text())['fault_injection_allowed'])

    def test_timings_go_to_every_nova_node(self):
        cell = self.tmp / 'nova_cell1.conf'
        cell.write_text('[DEFAULT]\nservice_down_time = 720\n')
        self.nova_conf.write_text(
            NOVA_CONF + '[filter_scheduler]\nenabled_filters = '
            'ComputeFilter,ImagePropertiesFilter\n')
        # A controller without nova-compute: timings, nothing else.
        self.assert_ok(self.run_plugin(
            'stack', 'post-config', services='n-api,n-sch,n-cond',
            FAULTDRIVER_TEST_TIMINGS='True'))
        for path in (self.nova_conf, cell):
            config = cfg.ConfigOpts()
            for key, value in process_config.TIMINGS.items():
                config.register_opt(cfg.IntOpt(key))
            config.register_opt(cfg.IntOpt('periodic_fuzzy_delay'))
            config([], default_config_files=[str(path)])
            for key, value in process_config.TIMINGS.items():
                self.assertEqual(value, config[key], '%s in %s' % (key, path))
            self.assertEqual(0, config.periodic_fuzzy_delay)
        self.assertEqual(
            'ComputeFilter,ImagePropertiesFilter,NUMATopologyFilter',
            self.read_ini_value('filter_scheduler', 'enabled_filters'))
        self.assertNotIn('fault_injection', self.nova_conf.read_text())
        # Off by default: nova.conf as devstack left it.
        self.nova_conf.write_text(NOVA_CONF)
        self.assert_ok(self.run_plugin(
            'stack', 'post-config', services='n-api,n-sch,n-cond'))
        self.assertEqual(NOVA_CONF, self.nova_conf.read_text())

    def test_timings_file_is_the_process_tiers(self):
        # One source: the plugin's file says what the process tier uses.
        parser = configparser.ConfigParser()
        parser.read(ROOT / 'devstack/test-timings.conf')
        expected = dict(process_config.TIMINGS, periodic_fuzzy_delay=0)
        self.assertEqual({key: str(value) for key, value in expected.items()},
                         dict(parser['DEFAULT']))
        self.assertEqual(','.join(process_config.FILTERS),
                         parser['filter_scheduler']['enabled_filters'])


FINDER = '''\
import importlib.util
import sys

CHECKOUT = %r


class EditableFinder:
    """As setuptools' editable finder: asked after sys.path's finder."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == 'nova':
            return importlib.util.spec_from_file_location(
                name, CHECKOUT + '/nova/__init__.py',
                submodule_search_locations=[CHECKOUT + '/nova'])
        return None


def install():
    sys.meta_path.append(EditableFinder)
'''


class TestEditableNova(PluginRun):
    """Nova installed editable through a finder, as pip does for devstack's
    checkout: the wheel's nova/ directory must not shadow it."""

    def test_install_removes_the_wheel_tree_that_shadows_nova(self):
        checkout = self.tmp / 'nova'
        (checkout / 'nova/virt').mkdir(parents=True)
        (checkout / 'nova/__init__.py').touch()
        (checkout / 'nova/virt/__init__.py').touch()
        (checkout / 'nova/virt/arch.py').write_text('X86_64 = "x86_64"\n')
        venv = self.tmp / 'venv'
        subprocess.run([sys.executable, '-m', 'venv', '--without-pip',
                        str(venv)], check=True)
        python = venv / 'bin/python'
        site = pathlib.Path(subprocess.run(
            [str(python), '-c', 'import sysconfig; '
             'print(sysconfig.get_paths()["purelib"])'],
            capture_output=True, text=True, check=True).stdout.strip())
        (site / '_fd_nova_finder.py').write_text(FINDER % str(checkout))
        (site / '_fd_nova.pth').write_text(
            'import _fd_nova_finder; _fd_nova_finder.install()\n')
        # What the faultdriver wheel leaves in site-packages.
        (site / 'nova/virt/faultdriver').mkdir(parents=True)
        (site / 'nova/virt/faultdriver/__init__.py').touch()
        imports = [str(python), '-c', 'from nova.virt import arch']
        # Not from a directory holding a nova/ (this repository's, the
        # checkout's parent): that would shadow Nova as well.
        elsewhere = self.tmp / 'elsewhere'
        elsewhere.mkdir()
        shadowed = subprocess.run(imports, capture_output=True, text=True,
                                  cwd=elsewhere)
        self.assertNotEqual(0, shadowed.returncode)
        self.assertIn("cannot import name 'arch'", shadowed.stderr)

        bin_dir = self.tmp / 'bin'
        bin_dir.mkdir()
        (bin_dir / 'nova-compute').write_text('#!%s\n' % python)
        (bin_dir / 'faultdriver').symlink_to(FAULTDRIVER)
        self.assert_ok(self.run_plugin('stack', 'install', bin_dir=bin_dir,
                                       cwd=elsewhere))
        self.assertFalse((site / 'nova').exists())
        subprocess.run(imports, check=True, cwd=elsewhere)
        link = checkout / 'nova/virt/faultdriver'
        self.assertEqual(ROOT / 'nova/virt/faultdriver', link.readlink())


def test_devstack_reads_one_project_name_from_setup_cfg():
    """devstack's inc/python takes a project's name from setup.cfg with
    ``awk '/^name.*=/ {print $3}'`` (then removes it from the upper
    constraints): it must read one word.  A real stack.sh once read
    'faultdriver False' (mypy's namespace_packages, now in mypy.ini)."""
    done = subprocess.run(['awk', '/^name.*=/ {print $3}',
                           str(ROOT / 'setup.cfg')],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == ['faultdriver']
