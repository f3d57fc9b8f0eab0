"""The disk image every server boots from on the process tiers.

On real libvirt a guest whose memory is all zeros moves in about a
second whatever ``[libvirt] live_migration_bandwidth`` says: QEMU sends
a zero page as a flag, not its 4 KiB.  So the image's boot sector fills
:data:`FILLED_MIB` MiB of guest memory, from 1 MiB up, with data no
zero-page or duplicate-page detection skips (each 32-bit word holds its
own address), then halts the vCPU for good (``cli; hlt``: no load on
the host).  A live migration then really transfers those MiB, and a
scenario that sets the bandwidth (``topology: live-migration-bandwidth``)
makes the transfer last long enough for a fault to land inside it.
``fake_numa`` never reads the image.  Nova inspects it as a whole-disk
image ("registered as raw, but detected as gpt", which it allows), so
it has a partition table.

The boot sector's code, as GNU ``as --32`` source (``ld -Ttext 0x7c00
--oformat binary``), which :data:`_CODE` holds assembled (the partition
table and the signature are added by :func:`boot_sector`)::

            .code16
    _start: cli
            xorw %ax, %ax
            movw %ax, %ds
            inb $0x92, %al            # fast A20 on (SeaBIOS has it on too)
            orb $2, %al
            outb %al, $0x92
            lgdtw gdt_desc
            movl %cr0, %eax           # protected mode, flat 4 GiB segments
            orl $1, %eax
            movl %eax, %cr0
            ljmpw $0x08, $pm
            .code32
    pm:     movw $0x10, %ax
            movw %ax, %ds
            movw %ax, %es
            movw %ax, %ss
            movl $0x100000, %edi      # from 1 MiB
            movl $0x1000000, %ecx     # 16 Mi words: 64 MiB
    fill:   movl %edi, (%edi)
            addl $4, %edi
            loop fill
    halt:   hlt
            jmp halt
            .p2align 3
    gdt:    .quad 0
            .quad 0x00cf9a000000ffff  # code 0x08
            .quad 0x00cf92000000ffff  # data 0x10
    gdt_desc:
            .word 23
            .long gdt
"""

#: MiB of guest memory the boot sector fills (the 0x1000000 words of its
#: ``movl $0x1000000, %ecx``); every flavor of the tiers has 512 MiB.
FILLED_MIB = 64

_CODE = bytes.fromhex(
    'fa31c08ed8e4920c02e6920f0116587c'
    '0f20c06683c8010f22c0ea1f7c080066'
    'b810008ed88ec08ed0bf00001000b900'
    '000001893f83c704e2f9f4ebfd8d7600'
    '0000000000000000ffff0000009acf00'
    'ffff00000092cf001700407c0000')

#: The partition table's first entry: one partition from sector 1 to the
#: image's end (type 0x83).  Nova's deep image inspection (oslo.utils'
#: format inspector, ``GPTInspector.check_mbr_partitions``) refuses an MBR
#: that defines none: "Image does not pass safety check".
_PARTITION = bytes.fromhex('00000200' '83000000') + (1).to_bytes(4, 'little')

#: Where the partition table begins in a boot sector.
_TABLE = 446


def boot_sector(size: int) -> bytes:
    """The 512-byte boot sector of a ``size``-byte image: the code, the
    partition table, the signature 55 AA."""
    entry = _PARTITION + (size // 512 - 1).to_bytes(4, 'little')
    table = entry + bytes(48)
    return _CODE + bytes(_TABLE - len(_CODE)) + table + b'\x55\xaa'


def disk(size: int) -> bytes:
    """A raw disk image of ``size`` bytes: the boot sector, then zeros."""
    return boot_sector(size) + bytes(size - 512)
