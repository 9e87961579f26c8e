#!/usr/bin/env python3
"""Seeds for the ipc fuzz target: one valid payload per decoder (first byte selects it, as
ipc_fuzz.cpp does) and a fragment stream. Run from anywhere; writes corpus/ipc/."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ipc")


def s(text):
    b = text.encode()
    return struct.pack("<H", len(b)) + b


def mad(fill):
    return struct.pack("<IHIIBHII", 3, 0x1234, 1, 0x80010000, 5, 0xFFFF, 0, 256) + bytes([fill]) * 256


def header(t, flags, length, seq):
    return struct.pack("<IHHII", 0x31424953, t, flags, length, seq)


seeds = {
    "node": b"\x00" + struct.pack("<IBBQQIHI", 7, 2, 3, 0x2c903, 0x2c900, 0x2c9, 0xcf08, 0xa0)
            + s("S-L0001") + s("leaf 1") + struct.pack("<H", 3) + struct.pack("<QQQ", 1, 1, 1),
    "port": b"\x01" + struct.pack("<IBQ", 9, 1, 0x100001) + bytes(range(64)) + struct.pack("<HHH", 2, 0xFFFF, 0x8001)
            + bytes([2]) + struct.pack("<I", 0x7F140001),
    "register": b"\x02" + bytes([0x32, 1, 1]) + bytes(16) + struct.pack("<I", 0x1405),
    "mad": b"\x03" + mad(0xAB),
    "fabric": b"\x04" + s("default") + s("switch:hosts=2") + s("/run/x.sock") + s("/var/lib/x")
              + struct.pack("<IIIII", 42, 3, 2, 1, 2) + bytes([3]) + struct.pack("<H", 1),
    "batch": b"\x05" + struct.pack("<I", 2) + struct.pack("<I", len(mad(1))) + mad(1)
             + struct.pack("<I", len(mad(2))) + mad(2),
    "fragments": b"\x06" + bytes([20]) + header(4, 1, 4, 9) + b"abcd" + bytes([18]) + header(4, 0, 2, 9) + b"ef",
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
