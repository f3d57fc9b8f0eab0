"""Files the cloud tier puts on a host (faultdriver/cloud/computes.py).

The command put_file sends over SSH runs here in a local shell (the
transport's only part that matters: the remote side is a POSIX shell).
"""

import os
import pathlib
import subprocess
import tempfile
import unittest

from faultdriver.cloud import computes


class LocalTransport:
    """What Transport.run does, without SSH: argv run on this machine."""

    def run(self, argv, input=None, timeout=120):
        return subprocess.run(argv, input=input, capture_output=True,
                              timeout=timeout)


class Reached:
    """A Computes whose one host is this machine."""

    put_file = computes.Computes.put_file

    def transport(self, alias):
        return LocalTransport()


@unittest.skipUnless(os.geteuid() == 0, 'an SSH user who is root')
class TestPutFile(unittest.TestCase):

    def test_root_writes_a_file_the_directory_owner_reads(self):
        # As on devstack: the SSH user is root, nova-compute's user owns
        # the state directory and must read its start-rules file.
        with tempfile.TemporaryDirectory() as tmp:
            state = pathlib.Path(tmp) / 'state'
            state.mkdir()
            os.chown(state, 54321, 54322)
            path = state / 'start-rules.json'
            Reached().put_file('src', str(path), b'{"run_id": "r1"}')
            info = path.stat()
            self.assertEqual((54321, 54322), (info.st_uid, info.st_gid))
            self.assertEqual(0o600, info.st_mode & 0o777)
            self.assertEqual(b'{"run_id": "r1"}', path.read_bytes())
            self.assertEqual(['start-rules.json'], os.listdir(state))
