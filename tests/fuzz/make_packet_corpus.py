#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_packet: packets of many opcodes in both encodings the
target parses, native IB (LRH ... VCRC, CRCs computed here with Python's zlib and a bitwise
CRC-16, independently of softib) and RoCE v2 transport parts (BTH ... pad), plus a few broken
ones. Deterministic: the same files on every run.
Run from anywhere: tests/fuzz/make_packet_corpus.py"""
import os
import random
import struct
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "packet")
rng = random.Random(4791)

# Opcode -> extension headers after the BTH, in wire order (IBA 9.2.1 table 38).
HEADERS = {
    0x00: [], 0x01: [], 0x02: [], 0x03: ["ImmDt"], 0x04: [], 0x05: ["ImmDt"],
    0x06: ["RETH"], 0x07: [], 0x08: [], 0x09: ["ImmDt"], 0x0A: ["RETH"], 0x0B: ["RETH", "ImmDt"],
    0x0C: ["RETH"], 0x0D: ["AETH"], 0x0E: [], 0x0F: ["AETH"], 0x10: ["AETH"], 0x11: ["AETH"],
    0x12: ["AETH", "AtomicAckETH"], 0x13: ["AtomicETH"], 0x14: ["AtomicETH"], 0x16: ["IETH"],
    0x17: ["IETH"], 0x1C: ["FETH", "RETH"], 0x1D: ["RETH"],
    0x23: ["ImmDt"], 0x24: [], 0x26: ["RETH"], 0x2B: ["RETH", "ImmDt"],
    0x40: ["RDETH", "DETH"], 0x4B: ["RDETH", "DETH", "RETH", "ImmDt"], 0x4E: ["RDETH"],
    0x52: ["RDETH", "AETH", "AtomicAckETH"], 0x55: ["RDETH", "DETH"],
    0x64: ["DETH"], 0x65: ["DETH", "ImmDt"],
}
NO_PAYLOAD = {0x0C, 0x11, 0x12, 0x13, 0x14, 0x1C, 0x4C, 0x51, 0x52, 0x53, 0x54, 0x55}
FULL_PMTU = {0x00, 0x01, 0x06, 0x07, 0x0D, 0x0E, 0x40, 0x4E}  # first and middle packets


def u32():
    return rng.getrandbits(32)


def ext(name):
    if name == "RDETH":
        return struct.pack("!I", rng.getrandbits(24))
    if name == "DETH":
        return struct.pack("!II", u32(), rng.randint(2, 0xFFFFFF))
    if name == "FETH":
        return struct.pack("!I", rng.getrandbits(6))
    if name == "RETH":
        return struct.pack("!QII", rng.getrandbits(64), u32(), u32())
    if name == "AtomicETH":
        return struct.pack("!QIQQ", rng.getrandbits(64), u32(), rng.getrandbits(64), rng.getrandbits(64))
    if name == "AETH":
        return struct.pack("!I", (rng.choice([0x1F, 0x23, 0x60, 0x63]) << 24) | rng.getrandbits(24))
    if name == "AtomicAckETH":
        return struct.pack("!Q", rng.getrandbits(64))
    if name in ("ImmDt", "IETH"):
        return struct.pack("!I", u32())
    raise ValueError(name)


def transport(opcode, payload_len, pad_field=None):
    """BTH | extension headers | payload | pad, with reserved bits zero. pad_field, when
    given, is written to BTH.PadCnt instead of the pad actually appended."""
    pad = (4 - payload_len % 4) % 4
    padcnt = pad if pad_field is None else pad_field
    bth = struct.pack("!BBHBBHBBH", opcode, (rng.getrandbits(2) << 6) | (padcnt << 4), rng.getrandbits(16),
                      rng.choice([0x00, 0x80, 0x40, 0xC0]), 0, rng.randint(2, 0xFFFF),
                      rng.getrandbits(1) << 7, rng.getrandbits(8), rng.getrandbits(16))
    body = b"".join(ext(h) for h in HEADERS[opcode])
    return bth + body + bytes(rng.getrandbits(8) for _ in range(payload_len)) + b"\0" * pad


def vcrc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def icrc_ib(packet, bth_at):
    m = bytearray(packet)
    if bth_at == 8:
        m[0] |= 0xF0                      # VL
    else:
        m[0:8] = b"\xff" * 8              # the LRH of a global packet
        m[8] |= 0x0F
        m[9:12] = b"\xff\xff\xff"         # TClass, FlowLabel
        m[15] = 0xFF                      # HopLmt
    m[bth_at + 4] = 0xFF                  # FECN, BECN, Resv6
    return zlib.crc32(bytes(m)) & 0xFFFFFFFF


def native(t, glob=False):
    """LRH [GRH] | t | ICRC | VCRC."""
    n = 8 + (40 if glob else 0) + len(t) + 4
    lrh = struct.pack("!BBHHH", rng.getrandbits(4) << 4, (rng.getrandbits(4) << 4) | (3 if glob else 2),
                      rng.getrandbits(16), n // 4, rng.getrandbits(16))
    grh = b""
    if glob:
        grh = struct.pack("!IHBB16s16s", (6 << 28) | rng.getrandbits(28), n - 48, 0x1B, 64,
                          bytes(rng.getrandbits(8) for _ in range(16)), bytes(rng.getrandbits(8) for _ in range(16)))
    p = lrh + grh + t
    p += struct.pack("<I", icrc_ib(p, 48 if glob else 8))
    return p + struct.pack("<H", vcrc(p))


def payload_len(opcode):
    if opcode in NO_PAYLOAD:
        return 0
    if opcode in FULL_PMTU:
        return 4 * rng.randint(1, 8)
    return rng.randint(0, 37)


seeds = {}
for i, opcode in enumerate(sorted(HEADERS)):  # every opcode in one of the two encodings
    if i % 2 == 0 or opcode == 0x04:
        seeds["ib_%02x" % opcode] = native(transport(opcode, payload_len(opcode)))
    else:
        seeds["roce_%02x" % opcode] = transport(opcode, payload_len(opcode))
for opcode in (0x04, 0x0B, 0x65):
    seeds["ib_global_%02x" % opcode] = native(transport(opcode, payload_len(opcode)), glob=True)

# Broken or unusual ones.
good = seeds["ib_04"]
seeds["ib_truncated"] = good[:len(good) - 3]
bad_vcrc = bytearray(good)
bad_vcrc[-1] ^= 1
seeds["ib_bad_vcrc"] = bytes(bad_vcrc)
seeds["ib_reserved_opcode"] = native(bytes([0x15]) + transport(0x04, 8)[1:])
seeds["ib_pad_too_large"] = native(transport(0x11, 0, pad_field=2))
seeds["roce_payload_on_ack"] = transport(0x11, 4)
seeds["roce_not_whole_words"] = transport(0x24, 8) + b"\x01"
resv7 = bytearray(transport(0x24, 5))
resv7[8] |= 0x01                          # BTH Resv7: ignored on receive, so not canonical
seeds["roce_reserved_bit_set"] = bytes(resv7)
raw = bytearray(native(transport(0x04, 4)))
raw[1] &= 0xFC                            # LNH 0: a raw packet
seeds["ib_lnh_raw"] = bytes(raw)

os.makedirs(OUT, exist_ok=True)
for name in os.listdir(OUT):
    os.remove(os.path.join(OUT, name))
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), OUT))
