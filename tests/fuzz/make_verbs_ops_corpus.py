#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_verbs_ops: programs of posts, polls, modifies and memory
registrations on the fuzz target's two devices (verbs_ops_fuzz.cpp describes them and the input
format): ping-pongs on RC, UC and UD, every operation, the errors an application makes (bad
keys, out of bounds, unaligned atomics, too many SGEs, too much inline data, a missing receive),
QPs moved to Error, SQD, Reset and back mid-transfer, MRs deregistered under work, under every
impairment and both ways of posting. Deterministic: the same files on every run. Inputs that
fuzzing found (flush_recv_in_progress_first) are checked in beside them and left alone.
Run from anywhere: tests/fuzz/make_verbs_ops_corpus.py"""
import os
import random
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "verbs_ops")
rng = random.Random(0x5e)

A, B = 0, 1
RC, UC, UD, SRQ_RC = 0, 1, 2, 3   # SRQ_RC: the RC QP on the side's SRQ (receives go to the SRQ)
SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CAS, FAA = 2, 3, 0, 1, 4, 5, 6
FENCE, SIGNALED, SOLICITED, INLINE = 1, 2, 4, 8
MAIN, SECOND, STALE, ANY = 0, 1, 2, 3   # key choices (an atomic's R_Key choice | 4: its address as given, else aligned)
SCQ, RCQ = 0, 1


def config(mtu=2, sig_all=False, impair=0, engine=False, timers=0):
    return bytes([mtu | (sig_all << 2) | (impair << 3) | (engine << 5) | (timers << 6)])


def length(n):
    if n <= 64:
        return n
    if n <= 4096:
        return 0x4000 | n
    assert n % 4 == 0 and n // 4 < 0x4000
    return 0x8000 | (n // 4)


def sge(offset, n, key=MAIN):
    return struct.pack("!BHH", key, offset // 2, length(n))


def wr(opcode, sges=(), flags=SIGNALED, rkey=MAIN, remote=0, imm=0, ud=None):
    b = struct.pack("!BBB", opcode, flags, len(sges)) + b"".join(sges)
    b += struct.pack("!BHI", rkey, remote // 2, imm)
    if ud is not None:  # AH, destination QP and Q_Key choices, then what they read
        b += bytes([ud])
        if ud & 12 >= 8:
            b += struct.pack("!I", 0x000abc)
        if ud & 16:
            b += struct.pack("!I", 0xdeadbeef)
    return b


def post_send(side, qp, *wrs, whole=False):  # whole: all or nothing (check_send, then post_send)
    return bytes([0, side | (qp << 1) | (whole << 7), len(wrs) - 1]) + b"".join(wrs)


def post_recv(side, qp, *lists):
    return bytes([1, side | (qp << 1), len(lists) - 1]) + b"".join(bytes([len(l)]) + b"".join(l) for l in lists)


def poll(side, cq, n=16):
    return bytes([2, side | (cq << 1) | ((n - 1) << 2)])


def run(kind):  # 0 settle, 4..7: 10 us, 1 ms, 20 ms, 500 ms
    return bytes([3, kind])


def modify(side, qp, choice, extra=b""):
    return bytes([4, side | (qp << 1), choice]) + extra


def memory(side, choice, extra=b""):
    return bytes([5, side, choice]) + extra


def step(side):
    return bytes([6, side])


def impair(level):
    return bytes([7, level])


def reap():
    return run(5) + poll(A, SCQ) + poll(A, RCQ) + poll(B, SCQ) + poll(B, RCQ)


def recvs(side, qp, n, size=4096, at=0):
    return b"".join(post_recv(side, qp, [sge(at + 4096 * (i % 8), size)]) for i in range(n))


def pingpong(qp, n, size, flags=SIGNALED):
    out = recvs(A, qp, n) + recvs(B, qp, n)
    for i in range(n):
        src, dst = (A, B) if i % 2 == 0 else (B, A)
        f = flags | (INLINE if size <= 64 and i % 3 == 0 else 0)
        out += post_send(src, qp, wr(SEND, [sge(8192, size)], f, ud=0 if qp == UD else None))
        out += run(4) + poll(dst, RCQ, 1) + poll(src, SCQ, 1)
    return out


def every_operation(qp=RC):
    return (recvs(B, qp, 4)
            + post_send(A, qp, wr(SEND, [sge(0, 100)]), wr(SEND_IMM, [sge(100, 2000)], imm=7),
                        wr(WRITE, [sge(0, 3000), sge(4096, 50)], remote=16384),
                        wr(WRITE_IMM, [sge(0, 10)], remote=20000, imm=9))
            + post_send(A, qp, wr(READ, [sge(12288, 5000)], remote=0),
                        wr(CAS, [sge(32768, 8)], remote=40000),
                        wr(FAA, [sge(32776, 8)], remote=40008, flags=SIGNALED | FENCE))
            + post_send(A, qp, wr(SEND, [], flags=SIGNALED | SOLICITED), wr(WRITE, [], remote=0))
            + reap())


def mistakes():
    return (recvs(B, RC, 6)
            + post_send(A, RC, wr(SEND, [sge(0, 64, STALE)]))                      # bad L_Key
            + post_send(A, RC, wr(WRITE, [sge(0, 64)], rkey=STALE, remote=0))       # bad R_Key
            + post_send(A, RC, wr(WRITE, [sge(0, 64)], remote=65000))              # past the MR
            + post_send(A, RC, wr(SEND, [sge(49000, 64, MAIN)]))                   # past the main MR
            + post_send(A, RC, wr(FAA, [sge(0, 8)], rkey=MAIN | 4, remote=13))     # unaligned atomic (| 4: as given)
            + post_send(A, RC, wr(FAA, [sge(0, 4)], remote=16))                   # 4-byte atomic
            + post_send(A, RC, wr(SEND, [sge(0, 8)] * 5))                           # too many SGEs
            + post_send(A, RC, wr(SEND, [sge(0, 64), sge(64, 64)], SIGNALED | INLINE))  # too much inline
            + post_send(A, UC, wr(READ, [sge(0, 8)]))                               # READ on UC
            + post_send(A, UD, wr(SEND, [sge(0, 8)], ud=2))                         # UD without an AH
            + post_send(A, UD, wr(SEND, [sge(0, 5000)], ud=0))                      # UD above the MTU
            + post_send(A, UD, wr(SEND, [sge(0, 8)], ud=16))                        # wrong Q_Key
            + post_send(A, UD, wr(SEND, [sge(0, 8)], ud=1))                         # nowhere
            + reap())


def seeds():
    yield "rc_pingpong", config() + bytes([1]) + pingpong(RC, 8, 32) + reap()
    yield "rc_pingpong_engine", config(engine=True) + bytes([2]) + pingpong(RC, 8, 200) + reap()
    yield "uc_pingpong", config(mtu=0) + bytes([3]) + pingpong(UC, 6, 700) + reap()
    yield "ud_pingpong", config(mtu=3) + bytes([4]) + pingpong(UD, 6, 1000) + reap()
    yield "unsignaled", config(engine=True) + bytes([5]) + pingpong(RC, 6, 16, flags=0) + reap()
    yield "sig_all", config(sig_all=True) + bytes([6]) + pingpong(RC, 4, 16, flags=0) + reap()
    for mtu in range(4):
        yield f"every_op_mtu{256 << mtu}", config(mtu=mtu) + bytes([7 + mtu]) + every_operation()
    yield "every_op_uc", config() + bytes([11]) + every_operation(UC)
    for level in (1, 2, 3):
        yield f"every_op_impaired{level}", config(impair=level) + bytes([12 + level]) + every_operation() + run(7)
    yield "mistakes", config() + bytes([20]) + mistakes()
    yield "mistakes_engine", config(engine=True, timers=1) + bytes([21]) + mistakes()
    # No receive posted: RNR, retried (timers 0: infinitely) or exhausted (timers 2).
    for t in (0, 2):
        yield f"rnr_timers{t}", config(timers=t) + bytes([22 + t]) + post_send(A, RC, wr(SEND, [sge(0, 10)])) + run(6) + recvs(B, RC, 1) + reap()
    # The peer gone to Error, Reset, or reconnected with other PSNs mid-transfer.
    for choice, extra in ((0, b""), (3, b""), (4, struct.pack("!II", 0x123, 0x456))):
        yield f"peer_modify{choice}", (config(timers=1) + bytes([30 + choice]) + recvs(B, RC, 4)
                                      + post_send(A, RC, wr(SEND, [sge(0, 3000)]), wr(READ, [sge(8192, 3000)]))
                                      + run(4) + modify(B, RC, choice, extra) + run(6) + reap())
    yield "sqd_and_back", (config() + bytes([40]) + recvs(B, RC, 4)
                           + post_send(A, RC, wr(SEND, [sge(0, 3000)]), wr(WRITE, [sge(0, 30000)], remote=0))
                           + modify(A, RC, 1) + run(5) + post_send(A, RC, wr(SEND, [sge(0, 8)]))
                           + modify(A, RC, 2) + reap())
    yield "reset_and_reconnect_both", (config() + bytes([41]) + recvs(B, RC, 4) + recvs(A, RC, 2)
                                       + post_send(A, RC, wr(SEND, [sge(0, 100)]))
                                       + modify(A, RC, 4, struct.pack("!II", 0x100, 0x200))
                                       + modify(B, RC, 4, struct.pack("!II", 0x200, 0x100))
                                       + recvs(B, RC, 2) + post_send(A, RC, wr(SEND, [sge(0, 100)])) + reap())
    yield "dereg_under_work", (config() + bytes([42]) + recvs(B, RC, 2, at=49152)
                               + post_send(A, RC, wr(WRITE, [sge(49152, 12000, SECOND)], rkey=SECOND, remote=49152))
                               + memory(B, 0) + run(5) + memory(B, 1, bytes([0xf]))
                               + post_send(A, RC, wr(SEND, [sge(0, 100)])) + memory(A, 2, bytes([1]))
                               + memory(A, 3) + post_send(A, RC, wr(SEND, [sge(0, 100)])) + reap())
    yield "steps", (config(engine=True) + bytes([43]) + recvs(B, RC, 4)
                    + post_send(A, RC, wr(SEND, [sge(0, 8)])) + step(B) + step(A) + step(B) + poll(B, RCQ)
                    + post_send(B, RC, wr(SEND, [sge(0, 8)])) + step(A) + reap())
    yield "impairment_changes", (config() + bytes([44]) + recvs(B, RC, 8) + impair(3)
                                 + post_send(A, RC, *[wr(SEND, [sge(0, 1500)])] * 4) + run(6) + impair(0)
                                 + post_send(A, RC, *[wr(SEND, [sge(0, 10)])] * 4) + run(7) + reap())
    # Any modify: the attributes straight from the input.
    for i in range(4):
        anything = bytes(rng.randrange(256) for _ in range(60))
        yield f"modify_anything{i}", (config() + bytes([50 + i]) + recvs(B, RC, 2)
                                      + post_send(A, RC, wr(SEND, [sge(0, 100)])) + modify(rng.randrange(2), RC, 5, anything)
                                      + post_send(A, RC, wr(SEND, [sge(0, 100)])) + reap())
    yield "srq_pingpong", config() + bytes([60]) + pingpong(SRQ_RC, 8, 300) + reap()
    yield "srq_send_cut_short", (config(mtu=0) + bytes([61]) + recvs(B, SRQ_RC, 3)
                                 + post_send(A, SRQ_RC, wr(SEND, [sge(0, 3000)]), wr(SEND, [sge(0, 10)]))
                                 + run(0) + modify(B, SRQ_RC, 0) + run(5) + reap())
    yield "rc_send_cut_short", (config(mtu=0) + bytes([62]) + recvs(B, RC, 3)
                                + post_send(A, RC, wr(SEND, [sge(0, 3000)]), wr(SEND, [sge(0, 10)]))
                                + run(0) + modify(B, RC, 0) + run(5) + reap())
    yield "whole_batches", (config() + bytes([63]) + recvs(B, RC, 4)
                            + post_send(A, RC, wr(WRITE, [sge(0, 8)], remote=0), wr(SEND, [sge(0, 8)] * 5), whole=True)
                            + post_send(A, RC, *[wr(WRITE, [sge(0, 8)], remote=8 * i) for i in range(4)], whole=True)
                            + post_send(A, UD, wr(SEND, [sge(0, 8)], ud=0), wr(SEND, [sge(0, 8)], ud=2), whole=True)
                            + modify(A, RC, 3) + post_send(A, RC, wr(SEND, [sge(0, 8)]), whole=True) + reap())
    # Destroyed under work and created again (choice 6), on each kind of QP.
    for qp in (RC, UC, UD, SRQ_RC):
        yield f"destroy_recreate_qp{qp}", (config(impair=1) + bytes([70 + qp]) + recvs(B, qp, 4)
                                           + post_send(A, qp, wr(SEND, [sge(0, 2000)], ud=0 if qp == UD else None))
                                           + run(4) + modify(B, qp, 6) + recvs(B, qp, 2)
                                           + post_send(A, qp, wr(SEND, [sge(0, 100)], ud=0 if qp == UD else None))
                                           + modify(A, qp, 6) + recvs(A, qp, 1)
                                           + post_send(B, qp, wr(SEND, [sge(0, 100)], ud=0 if qp == UD else None)) + reap())
    for i in range(6):
        yield f"random{i}", bytes(rng.randrange(256) for _ in range(rng.randrange(64, 512)))


def main():
    os.makedirs(OUT, exist_ok=True)  # files it does not write (inputs fuzzing found) stay
    for name, data in seeds():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
