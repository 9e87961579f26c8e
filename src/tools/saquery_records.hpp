// saquery's record dumps (infiniband-diags saquery.c's printf layouts, not libibmad's field
// dumps): each reads a record's wire bytes at its IBA 15.2.5 offsets, reserved fields included,
// and gives saquery's text and the same fields for --json. Private to tools (cmd_saquery.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace softib::tools::saquery {

using Bytes = std::vector<uint8_t>;

inline constexpr size_t kPirPortInfo = 4;  // PortInfoRecord: the PortInfo after EndportLID, PortNum, Options

// SA attribute IDs (IBA 15.2.5, table 204).
enum : uint16_t {
  kCpi = 0x0001, kNr = 0x0011, kPir = 0x0012, kSl2Vl = 0x0013, kSwir = 0x0014, kLftr = 0x0015,
  kMftr = 0x0017, kSmir = 0x0018, kLr = 0x0020, kGir = 0x0030, kSr = 0x0031, kPr = 0x0035,
  kVlar = 0x0036, kMcmr = 0x0038, kIir = 0x00F3,
};

// Big-endian fields of a record.
uint64_t be(const Bytes& b, size_t at, size_t n);
void put(Bytes& b, size_t at, uint64_t v, size_t n);
std::string gid_at(const Bytes& b, size_t at);
std::string text_at(const Bytes& b, size_t at, size_t n);

// One record's output: saquery's text and the same fields for --json.
struct Out {
  std::string text;
  nlohmann::json obj = nlohmann::json::object();
  void raw(std::string_view s) { text += s; }
  template <class V>
  void f(std::string_view label, std::string_view key, const std::string& shown, V value) {
    text += fmt::format("\t\t{}{}\n", label, shown);
    obj[std::string(key)] = value;
  }
  void u(std::string_view label, std::string_view key, uint64_t v) { f(label, key, fmt::format("{}", v), v); }
  void x(std::string_view label, std::string_view key, uint64_t v) { f(label, key, fmt::format("0x{:X}", v), v); }
  void xl(std::string_view label, std::string_view key, uint64_t v) { f(label, key, fmt::format("0x{:x}", v), v); }
  void g64(std::string_view label, std::string_view key, uint64_t v) {
    f(label, key, fmt::format("0x{:016x}", v), fmt::format("0x{:016x}", v));
  }
  void s(std::string_view label, std::string_view key, const std::string& v) { f(label, key, v, v); }
};

const char* node_type_str(uint64_t t);
Out dump_node_record(const Bytes& r);
Out dump_path_record(const Bytes& r);
Out dump_class_port_info(const Bytes& c);
Out dump_portinfo_record(const Bytes& r);
Out dump_one_portinfo_record(const Bytes& r);
Out dump_one_mcmember_record(const Bytes& r);
Out dump_multicast_group_record(const Bytes& r);
Out dump_service_record(const Bytes& r);
Out dump_sm_info_record(const Bytes& r);
Out dump_switch_info_record(const Bytes& r, const Bytes& cpi);
Out dump_inform_info_record(const Bytes& r);
Out dump_one_link_record(const Bytes& r);
Out dump_one_slvl_record(const Bytes& r);
Out dump_one_vlarb_record(const Bytes& r);
Out dump_one_pkey_tbl_record(const Bytes& r);
Out dump_one_lft_record(const Bytes& r);
Out dump_one_guidinfo_record(const Bytes& r);
Out dump_one_mft_record(const Bytes& r);

}  // namespace softib::tools::saquery
