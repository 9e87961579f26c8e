#include "tools/saquery_records.hpp"

#include <arpa/inet.h>

#include "mad/codec.hpp"
#include "mad/port_info.hpp"
#include "mad/printer.hpp"

namespace softib::tools::saquery {

using nlohmann::json;

uint64_t be(const Bytes& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | (at + i < b.size() ? b[at + i] : 0);
  return v;
}
void put(Bytes& b, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}
std::string gid_at(const Bytes& b, size_t at) {
  uint8_t raw[16] = {};
  for (size_t i = 0; i < 16 && at + i < b.size(); ++i) raw[i] = b[at + i];
  char s[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, raw, s, sizeof s);
  return s;
}
std::string text_at(const Bytes& b, size_t at, size_t n) {
  std::string s;
  for (size_t i = 0; i < n && at + i < b.size() && b[at + i] != 0; ++i) s += static_cast<char>(b[at + i]);
  return s;
}

// ---- record dumps (saquery.c) ----------------------------------------------------------------

const char* node_type_str(uint64_t t) {
  switch (t) {
    case 1: return "Channel Adapter";
    case 2: return "Switch";
    case 3: return "Router";
    default: return "Unknown";
  }
}

Out dump_node_record(const Bytes& r) {
  Out o;
  o.raw("NodeRecord dump:\n");
  o.u("lid.....................", "lid", be(r, 0, 2));
  o.x("reserved................", "reserved", be(r, 2, 2));
  o.x("base_version............", "base_version", be(r, 4, 1));
  o.x("class_version...........", "class_version", be(r, 5, 1));
  o.s("node_type...............", "node_type", node_type_str(be(r, 6, 1)));
  o.u("num_ports...............", "num_ports", be(r, 7, 1));
  o.g64("sys_guid................", "sys_guid", be(r, 8, 8));
  o.g64("node_guid...............", "node_guid", be(r, 16, 8));
  o.g64("port_guid...............", "port_guid", be(r, 24, 8));
  o.x("partition_cap...........", "partition_cap", be(r, 32, 2));
  o.x("device_id...............", "device_id", be(r, 34, 2));
  o.x("revision................", "revision", be(r, 36, 4));
  o.u("port_num................", "port_num", be(r, 40, 1));
  o.x("vendor_id...............", "vendor_id", be(r, 41, 3));
  o.s("NodeDescription.........", "NodeDescription", text_at(r, 44, 64));
  return o;
}

Out dump_path_record(const Bytes& r) {
  Out o;
  o.raw("PathRecord dump:\n");
  o.g64("service_id..............", "service_id", be(r, 0, 8));
  o.s("dgid....................", "dgid", gid_at(r, 8));
  o.s("sgid....................", "sgid", gid_at(r, 24));
  o.u("dlid....................", "dlid", be(r, 40, 2));
  o.u("slid....................", "slid", be(r, 42, 2));
  o.x("hop_flow_raw............", "hop_flow_raw", be(r, 44, 4));
  o.x("tclass..................", "tclass", be(r, 48, 1));
  o.x("num_path_revers.........", "num_path_revers", be(r, 49, 1));
  o.x("pkey....................", "pkey", be(r, 50, 2));
  o.x("qos_class...............", "qos_class", be(r, 52, 2) >> 4);
  o.x("sl......................", "sl", be(r, 52, 2) & 0xf);
  o.x("mtu.....................", "mtu", be(r, 54, 1));
  o.x("rate....................", "rate", be(r, 55, 1));
  o.x("pkt_life................", "pkt_life", be(r, 56, 1));
  o.x("preference..............", "preference", be(r, 57, 1));
  o.f("resv2...................", "resv2", fmt::format("0x{:012X}", be(r, 58, 6)), be(r, 58, 6));
  return o;
}

Out dump_class_port_info(const Bytes& c) {
  Out o;
  o.raw("SA ClassPortInfo:\n");
  o.u("Base version.............", "base_version", be(c, 0, 1));
  o.u("Class version............", "class_version", be(c, 1, 1));
  o.f("Capability mask..........", "capability_mask", fmt::format("0x{:04X}", be(c, 2, 2)), be(c, 2, 2));
  o.f("Capability mask 2........", "capability_mask2", fmt::format("0x{:08X}", be(c, 4, 4) >> 5), be(c, 4, 4) >> 5);
  o.f("Response time value......", "resp_time_value", fmt::format("0x{:02X}", be(c, 4, 4) & 0x1f), be(c, 4, 4) & 0x1f);
  o.s("Redirect GID.............", "redirect_gid", gid_at(c, 8));
  o.f("Redirect TC/SL/FL........", "redirect_tc_sl_fl", fmt::format("0x{:08X}", be(c, 24, 4)), be(c, 24, 4));
  o.u("Redirect LID.............", "redirect_lid", be(c, 28, 2));
  o.f("Redirect PKey............", "redirect_pkey", fmt::format("0x{:04X}", be(c, 30, 2)), be(c, 30, 2));
  o.f("Redirect QP..............", "redirect_qp", fmt::format("0x{:08X}", be(c, 32, 4)), be(c, 32, 4));
  o.f("Redirect QKey............", "redirect_qkey", fmt::format("0x{:08X}", be(c, 36, 4)), be(c, 36, 4));
  o.s("Trap GID.................", "trap_gid", gid_at(c, 40));
  o.f("Trap TC/SL/FL............", "trap_tc_sl_fl", fmt::format("0x{:08X}", be(c, 56, 4)), be(c, 56, 4));
  o.u("Trap LID.................", "trap_lid", be(c, 60, 2));
  o.f("Trap PKey................", "trap_pkey", fmt::format("0x{:04X}", be(c, 62, 2)), be(c, 62, 2));
  o.f("Trap HL/QP...............", "trap_hl_qp", fmt::format("0x{:08X}", be(c, 64, 4)), be(c, 64, 4));
  o.f("Trap QKey................", "trap_qkey", fmt::format("0x{:08X}", be(c, 68, 4)), be(c, 68, 4));
  return o;
}

// The short PortInfoRecord of -s.
Out dump_portinfo_record(const Bytes& r) {
  Out o;
  o.raw("PortInfoRecord dump:\n");
  o.u("EndPortLid..............", "EndPortLid", be(r, 0, 2));
  o.u("PortNum.................", "PortNum", be(r, 2, 1));
  o.u("base_lid................", "base_lid", be(r, kPirPortInfo + 16, 2));
  o.u("master_sm_base_lid......", "master_sm_base_lid", be(r, kPirPortInfo + 18, 2));
  o.x("capability_mask.........", "capability_mask", be(r, kPirPortInfo + 20, 4));
  return o;
}

Out dump_one_portinfo_record(const Bytes& r) {
  Out o;
  o.text = fmt::format("PortInfoRecord dump:\n\tRID\n\t\tEndPortLid..............{}\n\t\tPortNum.................{}\n"
                       "\t\tOptions.................0x{:x}\n\tPortInfo dump:\n",
                       be(r, 0, 2), be(r, 2, 1), be(r, 3, 1));
  o.obj["EndPortLid"] = be(r, 0, 2);
  o.obj["PortNum"] = be(r, 2, 1);
  o.obj["Options"] = be(r, 3, 1);
  Bytes pi(mad::wire_size<mad::PortInfo>, 0);
  for (size_t i = 0; i < pi.size() && kPirPortInfo + i < r.size(); ++i) pi[i] = r[kPirPortInfo + i];
  // infiniband-diags' dump_portinfo: the M_Key is not shown, every field line two tabs in.
  std::string d;
  mad::append_dump_line(d, "Mkey", "<not displayed>");
  const std::string all = mad::dump<mad::PortInfo>(wire::ByteSpan(pi));
  d += all.substr(all.find('\n') + 1);
  size_t at = 0;
  while (at < d.size()) {
    const size_t nl = d.find('\n', at);
    const std::string line = d.substr(at, nl - at);
    o.text += (line.starts_with("\t") ? "" : "\t\t") + line + "\n";
    at = nl == std::string::npos ? d.size() : nl + 1;
  }
  auto decoded = mad::decode<mad::PortInfo>(wire::ByteSpan(pi));
  if (decoded) {
    json p = json::object();
    p["Lid"] = decoded->lid.value();
    p["SMLid"] = decoded->master_sm_lid.value();
    p["CapMask"] = decoded->capability_mask;
    p["LinkState"] = mad::format_integer(mad::Printer::kPortState, 4, static_cast<uint64_t>(decoded->port_state));
    p["PhysLinkState"] = mad::format_integer(mad::Printer::kPhysPortState, 4, static_cast<uint64_t>(decoded->port_physical_state));
    p["LocalPort"] = decoded->local_port_num;
    o.obj["PortInfo"] = p;
  }
  return o;
}

Out dump_one_mcmember_record(const Bytes& r) {
  Out o;
  o.raw("MCMember Record dump:\n");
  const uint64_t sfh = be(r, 44, 4), ss = be(r, 48, 1);
  o.s("MGID....................", "MGID", gid_at(r, 0));
  o.s("PortGid.................", "PortGid", gid_at(r, 16));
  o.xl("qkey....................", "qkey", be(r, 32, 4));
  o.xl("mlid....................", "mlid", be(r, 36, 2));
  o.xl("mtu.....................", "mtu", be(r, 38, 1));
  o.xl("TClass..................", "TClass", be(r, 39, 1));
  o.xl("pkey....................", "pkey", be(r, 40, 2));
  o.xl("rate....................", "rate", be(r, 42, 1));
  o.xl("pkt_life................", "pkt_life", be(r, 43, 1));
  o.xl("SL......................", "SL", sfh >> 28);
  o.xl("FlowLabel...............", "FlowLabel", (sfh >> 8) & 0xfffff);
  o.xl("HopLimit................", "HopLimit", sfh & 0xff);
  o.xl("Scope...................", "Scope", ss >> 4);
  o.xl("JoinState...............", "JoinState", ss & 0xf);
  o.xl("ProxyJoin...............", "ProxyJoin", be(r, 49, 1) >> 7);
  return o;
}

Out dump_multicast_group_record(const Bytes& r) {
  Out o;
  o.raw("MCMemberRecord group dump:\n");
  o.s("MGID....................", "MGID", gid_at(r, 0));
  o.x("Mlid....................", "Mlid", be(r, 36, 2));
  o.x("Mtu.....................", "Mtu", be(r, 38, 1));
  o.x("pkey....................", "pkey", be(r, 40, 2));
  o.x("Rate....................", "Rate", be(r, 42, 1));
  o.x("SL......................", "SL", be(r, 44, 4) >> 28);
  return o;
}

Out dump_service_record(const Bytes& r) {
  Out o;
  o.raw("ServiceRecord dump:\n");
  o.g64("ServiceID...............", "ServiceID", be(r, 0, 8));
  o.s("ServiceGID..............", "ServiceGID", gid_at(r, 8));
  o.x("ServiceP_Key............", "ServiceP_Key", be(r, 24, 2));
  o.x("ServiceLease............", "ServiceLease", be(r, 28, 4));
  o.s("ServiceKey..............", "ServiceKey", "<not displayed>");
  o.s("ServiceName.............", "ServiceName", text_at(r, 48, 64));
  auto data = [&](const char* kind, size_t count, size_t at, size_t width) {
    for (size_t i = 0; i < count; ++i) {
      const std::string name = fmt::format("ServiceData{}.{}", kind, i + 1);
      const uint64_t v = be(r, at + width * i, width);
      if (width == 8) o.g64(fmt::format("{:.<24}", name), name, v);
      else o.x(fmt::format("{:.<24}", name), name, v);
    }
  };
  data("8", 16, 112, 1);
  data("16", 8, 128, 2);
  data("32", 4, 144, 4);
  data("64", 2, 160, 8);
  return o;
}

Out dump_sm_info_record(const Bytes& r) {
  Out o;
  o.raw("SMInfoRecord dump:\n\t\tRID\n");
  o.u("LID...................", "LID", be(r, 0, 2));
  o.raw("\t\tSMInfo dump:\n");
  o.g64("GUID..................", "GUID", be(r, 4, 8));
  o.g64("SM_Key................", "SM_Key", be(r, 12, 8));
  o.u("ActCount..............", "ActCount", be(r, 20, 4));
  o.u("Priority..............", "Priority", be(r, 24, 1) >> 4);
  o.u("SMState...............", "SMState", be(r, 24, 1) & 0xf);
  return o;
}

Out dump_switch_info_record(const Bytes& r, const Bytes& cpi) {
  Out o;
  o.raw("SwitchInfoRecord dump:\n\t\tRID\n");
  o.u("LID.....................................", "LID", be(r, 0, 2));
  o.raw("\t\tSwitchInfo dump:\n");
  o.x("LinearFDBCap............................", "LinearFDBCap", be(r, 4, 2));
  o.x("RandomFDBCap............................", "RandomFDBCap", be(r, 6, 2));
  o.x("MulticastFDBCap.........................", "MulticastFDBCap", be(r, 8, 2));
  o.x("LinearFDBTop............................", "LinearFDBTop", be(r, 10, 2));
  o.u("DefaultPort.............................", "DefaultPort", be(r, 12, 1));
  o.u("DefaultMulticastPrimaryPort.............", "DefaultMulticastPrimaryPort", be(r, 13, 1));
  o.u("DefaultMulticastNotPrimaryPort..........", "DefaultMulticastNotPrimaryPort", be(r, 14, 1));
  o.x("LifeTimeValue/PortStateChange/OpSL2VL...", "LifeTimeValue/PortStateChange/OpSL2VL", be(r, 15, 1));
  o.x("LIDsPerPort.............................", "LIDsPerPort", be(r, 16, 2));
  o.x("PartitionEnforcementCap.................", "PartitionEnforcementCap", be(r, 18, 2));
  o.x("flags...................................", "flags", be(r, 20, 1));
  constexpr uint32_t kIsMcastTopSupported = 1u << 3;  // ClassPortInfo CapabilityMask2
  if ((be(cpi, 4, 4) >> 5) & kIsMcastTopSupported)
    o.x("MulticastFDBTop.........................", "MulticastFDBTop", be(r, 22, 2));
  return o;
}

Out dump_inform_info_record(const Bytes& r) {
  Out o;
  const bool generic = be(r, 46, 1) != 0;
  o.raw("InformInfoRecord dump:\n\t\tRID\n");
  o.s("SubscriberGID...........", "SubscriberGID", gid_at(r, 0));
  o.x("SubscriberEnum..........", "SubscriberEnum", be(r, 16, 2));
  o.raw("\t\tInformInfo dump:\n");
  o.s("gid.....................", "gid", gid_at(r, 24));
  o.u("lid_range_begin.........", "lid_range_begin", be(r, 40, 2));
  o.u("lid_range_end...........", "lid_range_end", be(r, 42, 2));
  o.x("is_generic..............", "is_generic", be(r, 46, 1));
  o.x("subscribe...............", "subscribe", be(r, 47, 1));
  o.x("trap_type...............", "trap_type", be(r, 48, 2));
  if (generic) o.u("trap_num................", "trap_num", be(r, 50, 2));
  else o.x("dev_id..................", "dev_id", be(r, 50, 2));
  o.s("qpn.....................", "qpn", "<not displayed>");
  o.x("resp_time_val...........", "resp_time_val", be(r, 52, 4) & 0x1f);
  o.f(generic ? "node_type..............." : "vendor_id...............", generic ? "node_type" : "vendor_id",
      fmt::format("0x{:06X}", be(r, 57, 3)), be(r, 57, 3));
  return o;
}

Out dump_one_link_record(const Bytes& r) {
  Out o;
  o.raw("LinkRecord dump:\n");
  o.u("FromLID....................", "FromLID", be(r, 0, 2));
  o.u("FromPort...................", "FromPort", be(r, 2, 1));
  o.u("ToPort.....................", "ToPort", be(r, 3, 1));
  o.u("ToLID......................", "ToLID", be(r, 4, 2));
  return o;
}

Out dump_one_slvl_record(const Bytes& r) {
  Out o;
  o.raw("SL2VLTableRecord dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("InPort.....................", "InPort", be(r, 2, 1));
  o.u("OutPort....................", "OutPort", be(r, 3, 1));
  o.raw("\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\t\tVL:");
  json vls = json::array();
  for (size_t sl = 0; sl < 16; ++sl) {
    const uint64_t vl = (be(r, 8 + sl / 2, 1) >> (sl % 2 == 0 ? 4 : 0)) & 0xf;
    o.raw(fmt::format("{:2}|", vl));
    vls.push_back(vl);
  }
  o.raw("\n");
  o.obj["VL"] = vls;
  return o;
}

Out dump_one_vlarb_record(const Bytes& r) {
  Out o;
  o.raw("VLArbTableRecord dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("Port.......................", "Port", be(r, 2, 1));
  o.u("Block......................", "Block", be(r, 3, 1));
  json entries = json::array();
  for (size_t i = 0; i < 32; i += 16) {
    std::string vl = "\t\tVL    :", w = "\t\tWeight:";
    for (size_t j = i; j < i + 16; ++j) {
      vl += fmt::format("{:2}|", be(r, 8 + 2 * j, 1) & 0xf);
      w += fmt::format("{:2}|", be(r, 9 + 2 * j, 1));
      entries.push_back({{"VL", be(r, 8 + 2 * j, 1) & 0xf}, {"Weight", be(r, 9 + 2 * j, 1)}});
    }
    o.raw(vl + "\n" + w + "\n");
  }
  o.obj["entries"] = entries;
  return o;
}

Out dump_one_pkey_tbl_record(const Bytes& r) {
  Out o;
  o.raw("PKeyTableRecord dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("Port.......................", "Port", be(r, 4, 1));
  o.u("Block......................", "Block", be(r, 2, 2));
  o.raw("\t\tPKey Table:\n");
  json keys = json::array();
  for (size_t i = 0; i < 32; i += 8) {
    o.raw("\t\t");
    for (size_t j = i; j < i + 8; ++j) {
      o.raw(fmt::format("0x{:04x}{}", be(r, 8 + 2 * j, 2), j + 1 < i + 8 ? " " : "\n"));
      keys.push_back(be(r, 8 + 2 * j, 2));
    }
  }
  o.raw("\n");
  o.obj["PKeys"] = keys;
  return o;
}

Out dump_one_lft_record(const Bytes& r) {
  Out o;
  const uint64_t block = be(r, 2, 2);
  o.raw("LFT Record dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("Block......................", "Block", block);
  o.raw("\t\tLFT:\n\t\tLID\tPort Number\n");
  json lft = json::array();
  for (size_t i = 0; i < 64; ++i) {
    o.raw(fmt::format("\t\t{}\t{}\n", block * 64 + i, be(r, 8 + i, 1)));
    lft.push_back(be(r, 8 + i, 1));
  }
  o.raw("\n");
  o.obj["LFT"] = lft;
  return o;
}

Out dump_one_guidinfo_record(const Bytes& r) {
  Out o;
  o.raw("GUIDInfo Record dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("Block......................", "Block", be(r, 2, 1));
  for (size_t i = 0; i < 8; ++i)
    o.g64(fmt::format("GUID {}.....................", i), fmt::format("GUID {}", i), be(r, 8 + 8 * i, 8));
  return o;
}

Out dump_one_mft_record(const Bytes& r) {
  Out o;
  const uint64_t pb = be(r, 2, 2), position = pb >> 12, block = pb & 0x1ff;
  o.raw("MFT Record dump:\n");
  o.u("LID........................", "LID", be(r, 0, 2));
  o.u("Position...................", "Position", position);
  o.u("Block......................", "Block", block);
  o.raw("\t\tMFT:\n\t\tMLID\tPort Mask\n");
  json mft = json::array();
  for (size_t i = 0; i < 32; ++i) {
    o.raw(fmt::format("\t\t0x{:04x}\t0x{:04x}\n", 0xC000 + block * 32 + i, be(r, 8 + 2 * i, 2)));
    mft.push_back(be(r, 8 + 2 * i, 2));
  }
  o.raw("\n");
  o.obj["MFT"] = mft;
  return o;
}

}  // namespace softib::tools::saquery
