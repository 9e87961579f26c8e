#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_rc_receive: sequences of valid RC, UC and UD frames aimed at
the fuzz target's QPs (rc_receive_fuzz.cpp describes them and the input format), several
seeds for every opcode the transport implements, requests and responses, plus timer-only
inputs. Deterministic: the same files on every run.
Run from anywhere: tests/fuzz/make_rc_receive_corpus.py"""
import os
import random
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "rc_receive")
rng = random.Random(0x11)

RC, UC, UD = 0x11, 0x12, 0x13
MTU = 256
IOVA = 0x10000
KEY = 0x101            # L_Key and R_Key of the target's one MR
QKEY = 0x11111111
PEER = 0x99

# What the target's RC requester has outstanding (PSN: opcode it expects back).
SEND_PSNS = (0, 1, 2)        # 600-byte SEND
READ_PSNS = (3, 4, 5)        # 600-byte READ
ATOMIC_PSN = 6               # FETCH_ADD
WRITE_PSNS = (7, 8)          # 300-byte WRITE


def bth(opcode, qp, psn, payload_len, se=False, ack_req=False):
    pad = (4 - payload_len % 4) % 4
    return struct.pack("!BBHII", opcode, (se << 7) | (pad << 4), 0xFFFF, qp, (ack_req << 31) | psn)


def pkt(opcode, qp, psn, payload=b"", ext=b"", se=False, ack_req=False):
    pad = (4 - len(payload) % 4) % 4
    return bth(opcode, qp, psn, len(payload), se, ack_req) + ext + payload + b"\0" * pad


def reth(va, length, key=KEY):
    return struct.pack("!QII", va, key, length)


def aeth(syndrome, msn):
    return struct.pack("!I", syndrome << 24 | msn)


def data(n):
    return bytes(rng.getrandbits(8) for _ in range(n))


# Frame flags (rc_receive_fuzz.cpp): bits 0-1 DestQP rewrite (0 here: the BTH names the QP),
# bit 2 GRH, bits 3-4 post on the RC QP first, bits 5-6 clock advance, bit 7 no receive top-up.
GRH = 1 << 2
POST_SEND, POST_READ, POST_ATOMIC = 1 << 3, 2 << 3, 3 << 3
T_10US, T_RNR14, T_5MS = 1 << 5, 2 << 5, 3 << 5
NO_TOP_UP = 1 << 7


def frame(p, flags=0):
    return struct.pack("!BH", flags, len(p)) + p


def imm():
    return struct.pack("!I", rng.getrandbits(32))


seeds = {}


def add(name, frames):
    seeds[name] = b"".join(frames)


# ---- requests to the RC and UC responders (expected PSN 0) ----
# (first, middle, last, last_imm, only, only_imm) per transport; RC adds the invalidate ones.
SEND = {RC: (0x00, 0x01, 0x02, 0x03, 0x04, 0x05), UC: (0x20, 0x21, 0x22, 0x23, 0x24, 0x25)}
WRITE = {RC: (0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B), UC: (0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B)}

for qp, name in ((RC, "rc"), (UC, "uc")):
    first, middle, last, last_imm, only, only_imm = SEND[qp]
    for v in range(3):
        n = rng.randint(0, MTU)
        add("%s_send_only_%d" % (name, v), [frame(pkt(only, qp, 0, data(n), se=v == 1, ack_req=True), flags=GRH if v == 1 else 0)])
        add("%s_send_only_imm_%d" % (name, v), [frame(pkt(only_imm, qp, 0, data(n), ext=imm(), ack_req=True))])
        mids = [frame(pkt(middle, qp, 1 + i, data(MTU))) for i in range(v)]
        tail = rng.randint(1, MTU)
        add("%s_send_first_middle_last_%d" % (name, v),
            [frame(pkt(first, qp, 0, data(MTU)))] + mids + [frame(pkt(last, qp, 1 + v, data(tail), ack_req=True))])
        add("%s_send_last_imm_%d" % (name, v),
            [frame(pkt(first, qp, 0, data(MTU)))] + mids +
            [frame(pkt(last_imm, qp, 1 + v, data(tail), ext=imm(), ack_req=True, se=True))])
    first, middle, last, last_imm, only, only_imm = WRITE[qp]
    for v in range(3):
        off = 4 * rng.randint(0, 1024)
        n = rng.randint(0, MTU)
        add("%s_write_only_%d" % (name, v), [frame(pkt(only, qp, 0, data(n), ext=reth(IOVA + off, n), ack_req=True))])
        add("%s_write_only_imm_%d" % (name, v),
            [frame(pkt(only_imm, qp, 0, data(n), ext=reth(IOVA + off, n) + imm(), ack_req=True))])
        tail = rng.randint(1, MTU)
        total = MTU * (1 + v) + tail
        mids = [frame(pkt(middle, qp, 1 + i, data(MTU))) for i in range(v)]
        add("%s_write_first_middle_last_%d" % (name, v),
            [frame(pkt(first, qp, 0, data(MTU), ext=reth(IOVA + off, total)))] + mids +
            [frame(pkt(last, qp, 1 + v, data(tail), ack_req=True))])
        add("%s_write_last_imm_%d" % (name, v),
            [frame(pkt(first, qp, 0, data(MTU), ext=reth(IOVA + off, total)))] + mids +
            [frame(pkt(last_imm, qp, 1 + v, data(tail), ext=imm(), ack_req=True))])

for v in range(3):
    n = rng.randint(0, MTU)
    rkey = struct.pack("!I", rng.choice([KEY, 0x201, 0]))
    add("rc_send_only_inv_%d" % v, [frame(pkt(0x17, RC, 0, data(n), ext=rkey, ack_req=True))])
    add("rc_send_last_inv_%d" % v,
        [frame(pkt(0x00, RC, 0, data(MTU))), frame(pkt(0x16, RC, 1, data(rng.randint(1, MTU)), ext=rkey, ack_req=True))])

for v, length in enumerate((0, 100, 600, 3000)):
    off = 8 * rng.randint(0, 256)
    read = pkt(0x0C, RC, 0, ext=reth(IOVA + off if length else 0, length, KEY if length else 0))
    add("rc_read_%d" % v, [frame(read)])
# A READ, then the requester asks again for the rest from its second PSN (a lost middle).
add("rc_read_duplicate_rest",
    [frame(pkt(0x0C, RC, 0, ext=reth(IOVA + 64, 600))), frame(pkt(0x0C, RC, 1, ext=reth(IOVA + 64 + MTU, 600 - MTU)))])
add("rc_read_then_send", [frame(pkt(0x0C, RC, 0, ext=reth(IOVA, 300))),
                          frame(pkt(0x04, RC, 2, data(20), ack_req=True))])

for v in range(3):
    va = IOVA + 8192 + 8 * v
    fa = pkt(0x14, RC, 0, ext=struct.pack("!QIQQ", va, KEY, rng.getrandbits(16), 0))
    cs = pkt(0x13, RC, 0, ext=struct.pack("!QIQQ", va, KEY, rng.getrandbits(64), rng.getrandbits(64)))
    add("rc_fetch_add_%d" % v, [frame(fa)] + ([frame(fa)] if v == 1 else []))  # v 1: a duplicate
    add("rc_compare_swap_%d" % v, [frame(cs)] + ([frame(cs)] if v == 2 else []))

# Sequence errors, duplicates and a missing receive WQE (the target posts 4 per QP).
add("rc_psn_gap", [frame(pkt(0x04, RC, 2, data(8), ack_req=True)), frame(pkt(0x04, RC, 3, data(8))),
                   frame(pkt(0x04, RC, 0, data(8), ack_req=True)), frame(pkt(0x04, RC, 1, data(8), ack_req=True))])
add("rc_duplicate_send", [frame(pkt(0x04, RC, 0, data(8), ack_req=True)), frame(pkt(0x04, RC, 0, data(8), ack_req=True))])
# The target keeps 4 receive WQEs posted unless told not to: the fifth SEND is RNR NAKed, and
# after the WQEs are posted again its retry is accepted.
add("rc_rnr", [frame(pkt(0x04, RC, i, data(8), ack_req=True), flags=NO_TOP_UP) for i in range(5)] +
    [frame(pkt(0x04, RC, 4, data(8), ack_req=True))] * 2)
add("uc_ud_no_receive_wqe", [frame(pkt(0x24, UC, i, data(8)), flags=NO_TOP_UP) for i in range(5)] +
    [frame(pkt(0x64, UD, i, data(8), ext=struct.pack("!II", QKEY, 7)), flags=NO_TOP_UP) for i in range(5)])
add("uc_psn_gap", [frame(pkt(0x20, UC, 0, data(MTU))), frame(pkt(0x22, UC, 2, data(8))),
                   frame(pkt(0x24, UC, 3, data(8)))])

# ---- UD ----
for v in range(4):
    n = rng.randint(0, MTU - 40)
    deth = struct.pack("!II", QKEY if v != 3 else 0x22222222, rng.randint(2, 0xFFFFFF))
    add("ud_send_only_%d" % v, [frame(pkt(0x64, UD, rng.getrandbits(24), data(n), ext=deth), flags=GRH if v & 1 else 0)])
    add("ud_send_only_imm_%d" % v, [frame(pkt(0x65, UD, rng.getrandbits(24), data(n), ext=deth + imm(), se=True))])

# ---- responses to the RC requester ----
for v, psn in enumerate((1, 2, 8)):
    add("rc_ack_%d" % v, [frame(pkt(0x11, RC, psn, ext=aeth(0x1F, v + 1)))])
for code in range(5):
    add("rc_nak_%d" % code, [frame(pkt(0x11, RC, 1, ext=aeth(0x60 | code, 0)))])
add("rc_nak_seq_repeat", [frame(pkt(0x11, RC, 1, ext=aeth(0x60, 0)))] * 2 + [frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1)))])
for v, timer in enumerate((1, 14, 0)):
    add("rc_rnr_nak_%d" % v, [frame(pkt(0x11, RC, 0, ext=aeth(0x20 | timer, 0)), flags=(v + 1) << 5)] * 3)
add("rc_rnr_nak_then_ack", [frame(pkt(0x11, RC, 0, ext=aeth(0x21, 0)), flags=T_10US),
                            frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1)))])
rest = aeth(0x1F, 2)
read_data = data(600)
add("rc_read_responses", [
    frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1))),
    frame(pkt(0x0D, RC, 3, read_data[:256], ext=rest)),
    frame(pkt(0x0E, RC, 4, read_data[256:512])),
    frame(pkt(0x0F, RC, 5, read_data[512:], ext=rest)),
    frame(pkt(0x12, RC, ATOMIC_PSN, ext=aeth(0x1F, 3) + struct.pack("!Q", rng.getrandbits(64)))),
    frame(pkt(0x11, RC, 8, ext=aeth(0x1F, 4))),
])
add("rc_read_response_lost_middle", [
    frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1))),
    frame(pkt(0x0D, RC, 3, read_data[:256], ext=rest)),
    frame(pkt(0x0F, RC, 5, read_data[512:], ext=rest)),
    frame(pkt(0x0D, RC, 4, read_data[256:512], ext=rest)),
    frame(pkt(0x0F, RC, 5, read_data[512:], ext=rest)),
])
# Complete everything outstanding, then READ again (posted with the last ACK, so it takes PSN 9)
# and answer it with one RDMA_READ_RESPONSE_ONLY, two times over (the second: a duplicate).
for v in range(3):
    more = data(600)
    add("rc_read_responses_%d" % v, [
        frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1))),
        frame(pkt(0x0D, RC, 3, more[:256], ext=rest)),
        frame(pkt(0x0E, RC, 4, more[256:512])),
        frame(pkt(0x0F, RC, 5, more[512:], ext=rest)),
        frame(pkt(0x12, RC, ATOMIC_PSN, ext=aeth(0x1F, 3) + struct.pack("!Q", rng.getrandbits(64)))),
        frame(pkt(0x11, RC, 8, ext=aeth(0x1F, 4)), flags=POST_READ),
        frame(pkt(0x10, RC, 9, data(200), ext=aeth(0x1F, 5))),
    ] + [frame(pkt(0x10, RC, 9, data(200), ext=aeth(0x1F, 5)))] * v)
add("rc_read_response_only", [frame(pkt(0x11, RC, 2, ext=aeth(0x1F, 1))),
                              frame(pkt(0x10, RC, 3, read_data[:200], ext=rest))])
add("rc_atomic_ack", [frame(pkt(0x11, RC, 5, ext=aeth(0x1F, 2))),
                      frame(pkt(0x12, RC, ATOMIC_PSN, ext=aeth(0x1F, 3) + struct.pack("!Q", 5)))])
add("rc_implied_nak", [frame(pkt(0x11, RC, 8, ext=aeth(0x1F, 4)))] * 3)

# ---- timers only: a zero-length frame (dropped as malformed) and the clock moves ----
add("timeouts", [frame(b"", flags=T_5MS)] * 5)
add("post_and_time_out", [frame(b"", flags=POST_SEND | T_5MS), frame(b"", flags=POST_READ | T_5MS),
                          frame(b"", flags=POST_ATOMIC | T_RNR14)] * 2)

os.makedirs(OUT, exist_ok=True)
for name in os.listdir(OUT):
    os.remove(os.path.join(OUT, name))
for name, blob in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)
print("wrote %d seeds to %s" % (len(seeds), OUT))
