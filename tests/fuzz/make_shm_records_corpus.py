#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_shm_records: sequences of ring records as a sender process
writes them into an inbox channel (shm_records_fuzz.cpp describes the receiver and the input
format): ordinary frames, frames with GRH fields, packed records of SENDs to the target's RC
QP, polls that stop mid-record, and a few broken records. Deterministic: the same files on
every run. Run from anywhere: tests/fuzz/make_shm_records_corpus.py"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "shm_records")
QP = 0x11
SEND_ONLY = 0x04
FRAME, GLOBAL, PACKED, RAW = 0, 1, 2, 3


def bth(opcode, psn, payload_len, ack_req=True):
    pad = (4 - payload_len % 4) % 4
    return struct.pack("!BBHII", opcode, pad << 4, 0xFFFF, QP, (ack_req << 31) | psn)


def send(psn, n):
    payload = bytes((psn * 7 + i) & 0xFF for i in range(n))
    return bth(SEND_ONLY, psn, n) + payload + bytes((4 - n % 4) % 4)


def frame_header(slid=2, dlid=1, sl=0):
    # ShmFrameHeader: slid, dlid, sl, burst_mtu, packets, last_opcode, last_flags, reserved, last_ext
    return struct.pack("<HHBBHBBHI", slid, dlid, sl, 0, 1, 0, 0, 0, 0)


def grh_fields():
    return bytes(16) + bytes(16) + struct.pack("<IBB2x", 0, 0, 64)


def sub_frame(transport, slid=2, dlid=1, sl=0, length=None):
    n = len(transport) if length is None else length
    body = struct.pack("<HHHBB", n, slid, dlid, sl, 0) + transport
    return body + bytes((8 - len(body) % 8) % 8)


def record(kind, body, poll=False, limit=0, raw_kind=None):
    flags = kind | (4 if poll else 0) | (limit << 3)
    out = bytes([flags]) + struct.pack("<H", len(body))
    if kind == RAW:
        out = bytes([flags]) + struct.pack("<H", len(body)) + struct.pack("<H", raw_kind)
    return out + body


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


os.makedirs(OUT, exist_ok=True)
# One ordinary frame, then one with GRH fields.
write("frame", record(FRAME, frame_header() + send(0, 16), poll=True))
write("frame_global", record(GLOBAL, frame_header() + grh_fields() + send(0, 32), poll=True))
# A packed record of SENDs of several sizes, read whole, then read one completion at a time.
pack = b"".join(sub_frame(send(psn, n)) for psn, n in enumerate([0, 1, 64, 200, 244, 7]))
write("packed", record(PACKED, pack, poll=True))
write("packed_one_at_a_time", record(PACKED, pack) + b"".join(
    bytes([4 | (1 << 3), 0, 0]) for _ in range(6)) )
# Many small records wrapping the 16 KiB ring, ordinary and packed in turn.
seq, psn = b"", 0
for i in range(120):
    if i % 2:
        body = b"".join(sub_frame(send(psn + k, 64)) for k in range(4))
        seq += record(PACKED, body, poll=(i % 7 == 0), limit=i % 5)
        psn += 4
    else:
        seq += record(FRAME, frame_header() + send(psn, 64 + i))
        psn += 1
write("wrapping", seq)
# Broken: short header, a sub-frame running past its record, an empty pack, unknown kinds,
# then a good SEND.
broken = (record(PACKED, b"\x01\x02\x03") + record(PACKED, sub_frame(send(0, 8), length=200)[:24]) +
          record(PACKED, sub_frame(send(0, 8)) + struct.pack("<H", 0xFFFF) + bytes(6)) +
          record(PACKED, b"") + record(RAW, bytes(20), raw_kind=99) + record(RAW, b"", raw_kind=0xFFFF) +
          record(FRAME, b"\x00" * 5) + record(FRAME, frame_header() + send(0, 16), poll=True))
write("broken", broken)
