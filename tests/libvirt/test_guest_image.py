"""The image the process tiers' guests boot (faultdriver.process.guest_image),
booted as real libvirt's QEMU boots it (TCG, SeaBIOS, a virtio disk):
its boot sector fills the memory it says with non-zero words and halts
the vCPU.  Without that, every guest's memory is zeros, which QEMU moves
as flags, and no bandwidth makes a live migration last.

Reads guest memory back through QEMU's monitor (a unix socket)."""

import socket
import subprocess

from faultdriver.process import guest_image
from faultdriver.process import standins
from faultdriver.scenario import prereqs
from faultdriver import waiting

START = 0x100000
END = START + guest_image.FILLED_MIB * 1024 * 1024


def _until_prompt(conn):
    """What the monitor says up to its next prompt."""
    answer = b''
    while not answer.endswith(b'(qemu) '):
        chunk = conn.recv(65536)
        if not chunk:
            raise AssertionError('QEMU closed its monitor after %r' % answer)
        answer += chunk
    return answer.decode(errors='replace')


def _monitor(path, command):
    """The human monitor's answer to ``command``."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(path)
        conn.settimeout(10)
        _until_prompt(conn)                  # the banner and first prompt
        conn.sendall(command.encode() + b'\n')
        return _until_prompt(conn)


def _answers(path):
    """Whether QEMU's monitor takes a command yet (its socket file exists
    a moment before it accepts connections)."""
    try:
        return 'VM status' in _monitor(path, 'info status')
    except OSError:
        return False


def _word(path, address):
    """The 32-bit word of guest-physical ``address``."""
    answer = _monitor(path, 'xp /1xw 0x%x' % address)
    line = [item for item in answer.splitlines() if ': 0x' in item][-1]
    return int(line.split(': ')[1].split()[0], 16)


def test_the_boot_sector_fills_guest_memory_and_halts(tmp_path):
    disk = tmp_path / 'disk.raw'
    disk.write_bytes(guest_image.disk(standins.IMAGE_SIZE))
    monitor = str(tmp_path / 'monitor.sock')
    qemu = subprocess.Popen(
        [prereqs.program('qemu-system-x86_64'), '-machine', 'accel=tcg',
         '-m', '128', '-display', 'none', '-serial', 'none',
         '-drive', 'file=%s,format=raw,if=virtio' % disk,
         '-monitor', 'unix:%s,server=on,wait=off' % monitor],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        waiting.until(lambda: _answers(monitor), 30, "QEMU's monitor")
        # The vCPU halts only after the last word is written.
        waiting.until(lambda: 'HLT=1' in _monitor(monitor, 'info registers'),
                      120, 'the guest to fill its memory and halt')
        for address in (START, START + 0x123454, END - 4):
            assert _word(monitor, address) == address
        assert _word(monitor, END) == 0
    finally:
        qemu.kill()
        qemu.wait()
