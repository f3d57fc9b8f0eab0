"""The committed sample config is what the generator makes now."""

import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR_CONF = ROOT / 'etc/faultdriver/faultdriver-config-generator.conf'
SAMPLE = ROOT / 'etc/faultdriver/faultdriver.conf.sample'


class TestSampleConfig(unittest.TestCase):

    def test_sample_is_current(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / 'sample.conf'
            subprocess.run(
                [sys.executable, '-m', 'oslo_config.generator',
                 '--config-file', str(GENERATOR_CONF),
                 '--output-file', str(out)],
                check=True, cwd=ROOT, capture_output=True)
            self.assertEqual(
                SAMPLE.read_text(), out.read_text(),
                'etc/faultdriver/faultdriver.conf.sample is stale: run '
                'tox -e genconfig and commit the result')
