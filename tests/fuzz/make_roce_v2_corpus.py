#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_roce_v2: valid RoCE v2 datagrams (IPv4 and IPv6, ICRC
computed here with Python's zlib, independently of softib) plus the ConnectX-4 Lx capture.
Run from tests/fuzz: ./make_roce_v2_corpus.py"""
import os, struct, zlib

OUT = os.path.join(os.path.dirname(__file__), "corpus", "roce_v2")

def csum(data):
    if len(data) % 2: data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16: s = (s & 0xFFFF) + (s >> 16)
    return s

def icrc(datagram):
    v6 = datagram[0] >> 4 == 6
    iplen = 40 if v6 else (datagram[0] & 0xF) * 4
    m = bytearray(datagram)
    if v6:
        m[0] |= 0x0F; m[1:4] = b"\xff\xff\xff"; m[7] = 0xFF
    else:
        m[1] = 0xFF; m[8] = 0xFF; m[10:12] = b"\xff\xff"
    m[iplen + 6:iplen + 8] = b"\xff\xff"
    m[iplen + 8 + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF

def bth(opcode, qp, psn, pad=0):
    return struct.pack("!BBHII", opcode, pad << 4, 0xFFFF, qp, psn)

def v4(transport, tos=0, sport=4791):
    total = 20 + 8 + len(transport) + 4
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, total, 0, 0x4000, 64, 17, 0,
                               bytes([127, 0, 0, 1]), bytes([127, 0, 0, 2])))
    ip[10:12] = struct.pack("!H", 0xFFFF - csum(bytes(ip)))
    d = bytes(ip) + struct.pack("!HHHH", sport, 4791, 8 + len(transport) + 4, 0) + transport
    return d + struct.pack("<I", icrc(d))

def v6(transport):
    src = bytes.fromhex("fe800000000000000000000000000001")
    dst = bytes.fromhex("fe800000000000000000000000000002")
    ip = struct.pack("!IHBB16s16s", 0x60000000, 8 + len(transport) + 4, 17, 64, src, dst)
    d = ip + struct.pack("!HHHH", 4791, 4791, 8 + len(transport) + 4, 0) + transport
    return d + struct.pack("<I", icrc(d))

seeds = {
    "v4_rc_send_only": v4(bth(0x04, 0x12, 1) + b"hello world!"),
    "v4_rc_write_first": v4(bth(0x06, 0x12, 2) + struct.pack("!QII", 0x1000, 0x1234, 8192) + b"\0" * 256),
    "v4_rc_ack": v4(bth(0x11, 0x12, 3) + struct.pack("!I", 0x1F000003)),
    "v4_ud_send_imm": v4(bth(0x65, 0x20, 4) + struct.pack("!IIi", 0x11111111, 0x21, 7) + b"x" * 40),
    "v4_rc_cmp_swap": v4(bth(0x13, 0x12, 5) + struct.pack("!QIQQ", 0x2000, 7, 1, 2)),
    "v6_rc_read_req": v6(bth(0x0C, 0x12, 6) + struct.pack("!QII", 0x3000, 9, 4096)),
    "v6_uc_send_pad": v6(bth(0x24, 0x13, 7, pad=3) + b"abcde\0\0\0"),
    "connectx4_cnp": bytes.fromhex("45c2003c718c4000401191610a0011010a001201000012b70028000081"
                                    "00ffff4000011800000000" + "00" * 16 + "82fd002a"),
}
seeds["v4_truncated"] = seeds["v4_rc_send_only"][:30]
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), OUT))
