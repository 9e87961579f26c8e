#!/usr/bin/env python3
"""Recomputes the CRCs of every packet in a classic pcap file, independently of softib's C++:
the ICRC with Python's zlib.crc32 over the masked packet (IBA 7.8.1 for native IB, annex
A17.4.5.1 for RoCE v2) and the VCRC with a bitwise CRC-16 (polynomial 0x100B, IBA 7.8.2).

Link types: 101 (LINKTYPE_RAW: RoCE v2 datagrams), 247 (LINKTYPE_INFINIBAND: native IB
packets, LRH through VCRC).

Prints one line per packet:  <index> <icrc as computed, hex> <vcrc as computed, hex or -> OK|BAD
and exits 1 when any packet's stored CRC differs (or the file is not what it should be).

Usage: crc_check.py FILE.pcap"""
import struct
import sys
import zlib


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, major, minor, _, _, snaplen, linktype = struct.unpack_from("<IHHiIII", data, 0)
    if magic != 0xA1B2C3D4 or (major, minor) != (2, 4):
        sys.exit("%s: not a little-endian microsecond pcap file" % path)
    at = 24
    while at < len(data):
        _, _, caplen, origlen = struct.unpack_from("<IIII", data, at)
        at += 16
        if caplen != origlen:
            sys.exit("%s: record cut by the snapshot length" % path)
        yield linktype, data[at:at + caplen]
        at += caplen


def icrc_roce(datagram):
    """ICRC of a RoCE v2 datagram (IP header through pad), A17.4.5.1."""
    m = bytearray(datagram)
    if m[0] >> 4 == 6:
        iplen = 40
        m[0] |= 0x0F               # traffic class (high nibble)
        m[1:4] = b"\xff\xff\xff"   # traffic class (low nibble) and flow label
        m[7] = 0xFF                # hop limit
    else:
        iplen = (m[0] & 0x0F) * 4
        m[1] = 0xFF                # TOS
        m[8] = 0xFF                # TTL
        m[10:12] = b"\xff\xff"     # header checksum
    m[iplen + 6:iplen + 8] = b"\xff\xff"  # UDP checksum
    m[iplen + 8 + 4] = 0xFF               # BTH byte 4: FECN, BECN, Resv6
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF


def icrc_ib(packet):
    """ICRC of a native IB packet (LRH through pad), IBA 7.8.1."""
    m = bytearray(packet)
    lnh = m[1] & 0x03
    if lnh == 2:                   # local: VL is variant
        m[0] |= 0xF0
        bth = 8
    elif lnh == 3:                 # global: the whole LRH, GRH TClass/FlowLabel/HopLmt
        m[0:8] = b"\xff" * 8
        m[8] |= 0x0F
        m[9:12] = b"\xff\xff\xff"
        m[15] = 0xFF
        bth = 48
    else:
        raise ValueError("LNH %d carries no ICRC" % lnh)
    m[bth + 4] = 0xFF
    return zlib.crc32(bytes(m)) & 0xFFFFFFFF


def vcrc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return crc ^ 0xFFFF


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    bad = 0
    for index, (linktype, pkt) in enumerate(records(sys.argv[1]), start=1):
        if linktype == 101:
            icrc, stored_icrc = icrc_roce(pkt[:-4]), struct.unpack("<I", pkt[-4:])[0]
            v, stored_v = None, None
        elif linktype == 247:
            icrc, stored_icrc = icrc_ib(pkt[:-6]), struct.unpack("<I", pkt[-6:-2])[0]
            v, stored_v = vcrc(pkt[:-2]), struct.unpack("<H", pkt[-2:])[0]
        else:
            sys.exit("link type %d is neither 101 nor 247" % linktype)
        ok = icrc == stored_icrc and v == stored_v
        bad += not ok
        print("%d 0x%08x %s %s" % (index, icrc, "-" if v is None else "0x%04x" % v, "OK" if ok else "BAD"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
