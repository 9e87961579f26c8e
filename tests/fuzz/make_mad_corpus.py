#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_mad: valid 256-byte MADs of every class softib decodes
(LID-routed and directed-route SMPs, SA MADs with and without RMPP, PMA and vendor range 2
MADs) carrying several attributes, plus truncated and illegal ones. The bytes are packed
here with struct from the IBA layouts, independently of softib.
Run from tests/fuzz: ./make_mad_corpus.py"""
import os, struct

OUT = os.path.join(os.path.dirname(__file__), "corpus", "mad")

GET, SET, GETRESP, TRAP, REPORT, GETTABLE, GETTABLERESP = 0x01, 0x02, 0x81, 0x05, 0x06, 0x12, 0x92


def header(mgmt_class, method, attr, mod=0, tid=0x1000, class_version=1, status=0, class_spec=0):
    # IBA 13.4.2: BaseVersion, MgmtClass, ClassVersion, R|Method, Status, ClassSpecific,
    # TransactionID, AttributeID, Reserved, AttributeModifier
    return struct.pack("!BBBBHHQHHI", 1, mgmt_class, class_version, method, status, class_spec,
                       tid, attr, 0, mod)


def pad(data, n):
    assert len(data) <= n, (len(data), n)
    return data + b"\0" * (n - len(data))


def smp(method, attr, data=b"", mod=0, mkey=0):
    # IBA 14.2.1.1: header, M_Key, 32 reserved, 64 data, 128 reserved
    return header(0x01, method, attr, mod) + struct.pack("!Q", mkey) + b"\0" * 32 + pad(data, 64) + b"\0" * 128


def dr_smp(method, attr, path, data=b"", direction=0, hop_ptr=0, ret=(), status=0, drslid=0xFFFF,
           drdlid=0xFFFF):
    # IBA 14.2.1.2: D|Status in the Status word, HopPointer|HopCount in ClassSpecific
    hops = len(path)
    initial = bytes([0] + list(path))
    h = header(0x81, method, attr, status=(direction << 15) | status, class_spec=(hop_ptr << 8) | hops)
    return (h + struct.pack("!QHH", 0, drslid, drdlid) + b"\0" * 28 + pad(data, 64) + pad(initial, 64)
            + pad(bytes(ret), 64))


def rmpp(version=0, rtype=0, resp=0, flags=0, status=0, d1=0, d2=0):
    # IBA 13.6.2.1: RMPPVersion, RMPPType, RRespTime|RMPPFlags, RMPPStatus, Data1, Data2
    return struct.pack("!BBBBII", version, rtype, (resp << 3) | flags, status, d1, d2)


def sa(method, attr, data=b"", rmpp_hdr=None, comp_mask=0, attr_offset=0, status=0):
    # IBA 15.2.1.1: header, RMPP, SM_Key, AttributeOffset, reserved, ComponentMask, 200 data
    return (header(0x03, method, attr, class_version=2, status=status) + (rmpp_hdr or rmpp())
            + struct.pack("!QHHQ", 0, attr_offset, 0, comp_mask) + pad(data, 200))


def pma(method, attr, data=b"", mod=0):
    # IBA 16.1.1: header, 40 reserved, 192 data
    return header(0x04, method, attr, mod) + b"\0" * 40 + pad(data, 192)


def vendor2(method, attr, data=b"", mgmt_class=0x32, oui=0x001405):
    # vendor range 2 (IBA 13.4.4): header, RMPP, reserved byte, OUI, 216 data
    return header(mgmt_class, method, attr) + rmpp() + struct.pack("!I", oui) + pad(data, 216)


GUID = 0x0002C90300001000


def node_info(node_type=1, ports=1, local_port=1):
    return struct.pack("!BBBBQQQHHIB", 1, 1, node_type, ports, GUID, GUID, GUID + local_port, 128,
                       0x1017, 0xA0, local_port) + (0x0002C9).to_bytes(3, "big")


def port_info(lid=7, state=4, phys=5):
    b = struct.pack("!QQHHIHHBBBB", 0, 0xFE80000000000000, lid, 1, 0x02510868, 0, 15, 1, 3, 3, 2)
    b += bytes([(1 << 4) | state, (phys << 4) | 2, 3, (4 << 4) | 7, (5 << 4) | 0, (4 << 4) | 0,
                8, 8, 8, 0x45, (7 << 5) | 19, (4 << 4) | 0xF])
    b += struct.pack("!HHHBBBBH", 0, 0, 0, 128, 0x80 | 18, 17, 0x84, 0)
    b += bytes([0, 0, 1, 0]) + struct.pack("!H", 0x0001) + bytes([(2 << 4) | 3, 30])
    return b


def switch_info():
    return struct.pack("!HHHHBBBBHHBBH", 0xC000, 0, 0x1000, 12, 0, 0xFF, 0xFF, (18 << 3) | 4, 1,
                       32, 0xC0, 0, 0xC002)


def notice(trap, details, producer=2, issuer=7):
    # IBA 13.4.8.2: IsGeneric|Type, ProducerType, TrapNumber, IssuerLID, Toggle|Count,
    # DataDetails, IssuerGID
    return (bytes([0x80 | 1]) + producer.to_bytes(3, "big") + struct.pack("!HHH", trap, issuer, 1)
            + pad(details, 54) + bytes.fromhex("fe800000000000000002c90300001001"))


def gid(guid):
    return struct.pack("!QQ", 0xFE80000000000000, guid)


def path_record(dlid=2, slid=1):
    return (struct.pack("!Q", 0) + gid(GUID + 2) + gid(GUID + 1) + struct.pack("!HHIBBHHBBBB", dlid, slid,
            (0x12345 << 8) | 64, 0, 0x81, 0xFFFF, 0, 0x84, 0x83, 0x92, 0) + b"\0" * 6)


def node_record(lid=3):
    return struct.pack("!HH", lid, 0) + node_info(2, 36, 0) + pad(b"softib switch-1", 64)


seeds = {
    "smp_get_nodeinfo": smp(GET, 0x11),
    "smp_getresp_nodeinfo": smp(GETRESP, 0x11, node_info()),
    "smp_getresp_nodedesc": smp(GETRESP, 0x10, b"host-1 HCA-1"),
    "smp_getresp_portinfo": smp(GETRESP, 0x15, port_info(), mod=1),
    "smp_set_portinfo": smp(SET, 0x15, port_info(lid=9, state=0, phys=0), mod=1, mkey=0x1234),
    "smp_getresp_switchinfo": smp(GETRESP, 0x12, switch_info()),
    "smp_getresp_guidinfo": smp(GETRESP, 0x14, struct.pack("!QQ", GUID + 1, GUID + 0x100)),
    "smp_getresp_pkeytable": smp(GETRESP, 0x16, struct.pack("!HH", 0xFFFF, 0x8001)),
    "smp_getresp_sl2vl": smp(GETRESP, 0x17, bytes.fromhex("0123456789abcdef"), mod=0x0102),
    "smp_getresp_vlarb": smp(GETRESP, 0x18, bytes([0, 0xFF, 1, 0x40, 0x0F, 0x10]), mod=0x00010000),
    "smp_getresp_lft": smp(GETRESP, 0x19, bytes([0, 1, 2, 3] * 16)),
    "smp_getresp_mft": smp(GETRESP, 0x1B, struct.pack("!HH", 0x0006, 0x8000), mod=0xF0000000),
    "smp_getresp_sminfo": smp(GETRESP, 0x20, struct.pack("!QQIB", GUID, 0, 42, (15 << 4) | 3)),
    # A Trap SMP carries the Notice without IssuerGID (IBA 14.2.5.1): its first 64 bytes.
    "smp_trap128": smp(TRAP, 0x02, notice(128, struct.pack("!H", 3))[:64]),
    "smp_trap144": smp(TRAP, 0x02, notice(144, struct.pack("!HHBBIHH", 0, 7, 0, 1, 0x02510868, 0x21, 1))[:64]),
    "dr_get_nodeinfo_local": dr_smp(GET, 0x11, []),
    "dr_get_portinfo_3hops": dr_smp(GET, 0x15, [1, 5, 7], hop_ptr=0),
    "dr_at_switch_hop2": dr_smp(GET, 0x11, [1, 5, 7], hop_ptr=2, ret=[0, 3]),
    "dr_getresp_returning": dr_smp(GETRESP, 0x11, [1, 5], node_info(2, 36), direction=1, hop_ptr=3,
                                   ret=[0, 3, 2]),
    "dr_lid_routed_tail": dr_smp(GET, 0x11, [1, 2], drdlid=0x40),
    "sa_get_pathrecord": sa(GET, 0x35, path_record(), comp_mask=0x0C),
    "sa_getresp_pathrecord": sa(GETRESP, 0x35, path_record()),
    "sa_gettableresp_noderecord": sa(GETTABLERESP, 0x11, node_record() + b"\0" * 4,
                                     rmpp(1, 1, 0x1F, 0x7, 0, 1, 20 + 112), attr_offset=14),
    "sa_gettableresp_seg1": sa(GETTABLERESP, 0x11, (node_record(3) + b"\0" * 4 + node_record(4))[:200],
                               rmpp(1, 1, 18, 0x3, 0, 1, 2 * 220 - (400 - 224)), attr_offset=14),
    "sa_gettableresp_seg2": sa(GETTABLERESP, 0x11, (node_record(4) + b"\0" * 4)[88:],
                               rmpp(1, 1, 18, 0x5, 0, 2, 220 - (400 - 224)), attr_offset=14),
    "sa_rmpp_ack": sa(GETTABLE, 0x11, rmpp_hdr=rmpp(1, 2, 0, 1, 0, 1, 8)),
    "sa_set_mcmember": sa(SET, 0x38, bytes.fromhex("ff12401bffff00000000000000000001") + gid(GUID + 1)
                          + struct.pack("!IHBBHBBIBB", 0x80010000, 0xC000, 0x84, 0, 0xFFFF, 0x83, 0x92,
                                        (0 << 28) | 0, 0x21, 0x80), comp_mask=0x10083),
    "sa_set_servicerecord": sa(SET, 0x31, struct.pack("!Q", 0x1000000000000001) + gid(GUID + 1)
                               + struct.pack("!HHI", 0xFFFF, 0, 0xFFFFFFFF) + b"\0" * 16
                               + pad(b"softib-service", 64) + bytes(range(16))),
    "sa_getresp_portinforecord": sa(GETRESP, 0x12, struct.pack("!HBB", 7, 1, 0) + port_info()),
    "sa_getresp_linkrecord": sa(GETRESP, 0x20, struct.pack("!HBBH", 3, 1, 4, 7)),
    "sa_getresp_switchinforecord": sa(GETRESP, 0x14, struct.pack("!HH", 3, 0) + switch_info()),
    "sa_getresp_lftrecord": sa(GETRESP, 0x15, struct.pack("!HHI", 3, 0, 0) + bytes([1, 2] * 32)),
    "sa_getresp_pkeytablerecord": sa(GETRESP, 0x33, struct.pack("!HHBBH", 7, 0, 1, 0, 0) + b"\xff\xff"),
    "sa_set_informinfo": sa(SET, 0x03, b"\0" * 16 + struct.pack("!HHHBBHHIBBH", 0xFFFF, 0, 0, 1, 1,
                                                                 0xFFFF, 64, (2 << 8) | 18, 0, 0, 0x0004)),
    "sa_report_notice64": sa(REPORT, 0x02, notice(64, b"\0" * 6 + gid(GUID + 5), producer=4)),
    "sa_getresp_classportinfo": sa(GETRESP, 0x01, struct.pack("!BBHI", 1, 2, 0x0602, 18)),
    "sa_no_records": sa(GETRESP, 0x35, status=0x0300),
    "pma_get_classportinfo": pma(GET, 0x01),
    "pma_getresp_portcounters": pma(GETRESP, 0x12, struct.pack("!BBHHBBHHHHBBBBHHIIIII", 0, 1, 0xFFFF,
                                                                 3, 1, 2, 4, 5, 6, 7, 8, 9, 0, 0x21, 10,
                                                                 11, 1000, 2000, 30, 40, 50)),
    "pma_getresp_portcountersext": pma(GETRESP, 0x1D, struct.pack("!BBHI", 0, 1, 0xFF00, 0)
                                       + struct.pack("!8Q", *range(1, 9)) + struct.pack("!14Q", *range(9, 23))),
    "vendor_ibping": vendor2(GET, 0x0000),
    "vendor_ibping_resp": vendor2(GETRESP, 0x0000, b"host-1.example"),
}
seeds["truncated_smp"] = seeds["smp_getresp_portinfo"][:100]
seeds["truncated_dr_in_path"] = seeds["dr_get_portinfo_3hops"][:130]
seeds["truncated_sa_header"] = seeds["sa_get_pathrecord"][:40]
seeds["truncated_header"] = seeds["pma_get_classportinfo"][:13]
# A whole two-segment GetTable response: the fuzz target reassembles inputs made of MADs.
seeds["sa_gettableresp_both_segments"] = seeds["sa_gettableresp_seg1"] + seeds["sa_gettableresp_seg2"]
hop64 = bytearray(dr_smp(GET, 0x11, [1] * 63))
hop64[7] = 64  # one more hop than a DR SMP can have
seeds["dr_hopcount_64"] = bytes(hop64)
seeds["bad_base_version"] = bytes([0x80]) + seeds["smp_get_nodeinfo"][1:]
seeds["sa_rmpp_first_without_active"] = sa(GETTABLE, 0x35, rmpp_hdr=rmpp(1, 1, 0, 0x2, 0, 1, 220))
seeds["sa_class_version_1"] = seeds["sa_get_pathrecord"][:2] + b"\x01" + seeds["sa_get_pathrecord"][3:]

for name, data in seeds.items():
    assert len(data) % 256 == 0 or name.startswith("truncated"), name

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), OUT))
