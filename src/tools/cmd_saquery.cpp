// softib saquery: infiniband-diags' saquery on softib's SA. The same query names, options,
// record dumps (saquery.c's printf layouts, which are not libibmad's field dumps), messages
// and exit statuses: errno values as saquery returns them (ETIMEDOUT 110 when the SA does not
// answer, EIO 5 for an SA error status, ENONET 64 for a name no NodeRecord has).
//
// saquery prints each record's wire fields as they came, reserved ones included, so the
// dumps read them at their IBA 15.2.5 offsets (the same offsets the mad layouts list); the
// PortInfo inside a PortInfoRecord is dumped by the mad codec, as libibmad does for saquery.
#include <arpa/inet.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mad/codec.hpp"
#include "mad/link_record.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/path_record.hpp"
#include "mad/port_info.hpp"
#include "mad/port_info_record.hpp"
#include "mad/printer.hpp"
#include "tools/command.hpp"
#include "tools/host.hpp"
#include "tools/mad_rpc.hpp"
#include "tools/saquery_records.hpp"

namespace softib::tools {

namespace {

using namespace saquery;  // the records and their dumps (saquery_records.hpp)

using nlohmann::json;

constexpr uint8_t kGet = 0x01, kGetTable = 0x12;
constexpr int kEnonet = 64;  // "Machine is not on the network": no NodeRecord has the name


struct Params {  // saquery's struct query_params: -1/0 mean "not given"
  int64_t slid = 0, dlid = 0, mlid = 0, numb_path = -1, reversible = -1, sl = -1, pkey = 0;
  uint64_t service_id = 0;
  std::string sgid, dgid, gid, mgid;
  Bytes cpi;  // the SA's ClassPortInfo, when queried
};

enum class NodePrint { kAll, kLidOnly, kUniqueLidOnly, kGuidOnly, kAllDesc, kNameOfLid, kNameOfGuid };

struct Args {
  bool p = false, N = false, L = false, l = false, G = false, O = false, U = false, s = false, g = false,
       m = false, x = false, c = false, S = false, I = false, D = false, json = false;
  std::string src_to_dst, sgid_to_dgid, smkey, slid, dlid, mlid, sgid, dgid, gid, mgid, pkey, service_id;
  int reversible = -1, numb_path = -1, sl = -1, timeout = 1000;
  std::vector<std::string> rest;
};

// Thrown nowhere: a failure carries saquery's message and exit status.
struct Failure {
  std::string message;  // to stderr
  int status;
};

class Saquery {
 public:
  Saquery(MadRpc& rpc, uint64_t sm_key) : rpc_(rpc), sm_key_(sm_key) {}

  // GetTable (or Get) of `attr`: the records, or saquery's failure.
  Result<std::vector<Bytes>> query(uint8_t method, uint16_t attr, uint64_t mask, const Bytes& rec, uint32_t mod,
                                   Failure& fail) {
    auto a = rpc_.sa_query(method, attr, mask, rec, sm_key_, mod);
    if (!a) {
      if (a.error().code() == Code::kTimeout) {
        fail = {"Query SA failed: Connection timed out", ETIMEDOUT};
        return Status(Code::kTimeout, fail.message);
      }
      return Err{a.error()};
    }
    if (a->status != 0) {
      fail = {report_err(a->status), EIO};
      return Status(Code::kInvalidArgument, fail.message);
    }
    return std::move(a->records);
  }

  static std::string report_err(uint16_t status) {  // ibdiag_sa.c sa_report_err
    static const char* kMad[] = {"MAD No invalid fields", "MAD Bad version", "MAD Method specified is not supported",
                                 "MAD Method/Attribute combination is not supported", "MAD Reserved", "MAD Reserved",
                                 "MAD Reserved", "MAD Invalid value in Attribute field(s) or Attribute Modifier",
                                 "MAD UNKNOWN ERROR"};
    static const char* kSa[] = {"SA_NO_ERROR", "SA_ERR_NO_RESOURCES", "SA_ERR_REQ_INVALID", "SA_ERR_NO_RECORDS",
                                "SA_ERR_TOO_MANY_RECORDS", "SA_ERR_REQ_INVALID_GID",
                                "SA_ERR_REQ_INSUFFICIENT_COMPONENTS", "SA_ERR_REQ_DENIED",
                                "SA_ERR_STATUS_PRIO_SUGGESTED", "SA_ERR_UNKNOWN"};
    std::string mad_err, sa_err;
    if (const unsigned st = status & 0xff; st != 0)
      mad_err = fmt::format(" ({}; {}; {})", (st & 1) ? "BUSY" : "", (st & 2) ? "Redirection Required" : "",
                            kMad[std::min(st >> 2, 8u)]);
    if (const unsigned st = status >> 8; st != 0) sa_err = fmt::format(" SA({})", kSa[std::min(st, 9u)]);
    return fmt::format("ERROR: Query result returned 0x{:04x}, {}{}", status, mad_err, sa_err);
  }

 private:
  MadRpc& rpc_;
  uint64_t sm_key_;
};

// ---- the command -----------------------------------------------------------------------------

struct QueryName {
  const char* name;
  const char* alias;
  uint16_t type;
  const char* usage;
};
constexpr QueryName kQueries[] = {
    {"ClassPortInfo", "CPI", kCpi, nullptr},
    {"NodeRecord", "NR", kNr, "[lid]"},
    {"PortInfoRecord", "PIR", kPir, "[[lid]/[port]/[options]]"},
    {"SL2VLTableRecord", "SL2VL", kSl2Vl, "[[lid]/[in_port]/[out_port]]"},
    {"PKeyTableRecord", "PKTR", 0x0033, "[[lid]/[port]/[block]]"},
    {"VLArbitrationTableRecord", "VLAR", kVlar, "[[lid]/[port]/[block]]"},
    {"InformInfoRecord", "IIR", kIir, "[subscriber_gid]"},
    {"LinkRecord", "LR", kLr, "[[from_lid]/[from_port]] [[to_lid]/[to_port]]"},
    {"ServiceRecord", "SR", kSr, nullptr},
    {"PathRecord", "PR", kPr, nullptr},
    {"MCMemberRecord", "MCMR", kMcmr, nullptr},
    {"LFTRecord", "LFTR", kLftr, "[[lid]/[block]]"},
    {"MFTRecord", "MFTR", kMftr, "[[mlid]/[position]/[block]]"},
    {"GUIDInfoRecord", "GIR", kGir, "[[lid]/[block]]"},
    {"SwitchInfoRecord", "SWIR", kSwir, "[lid]"},
    {"SMInfoRecord", "SMIR", kSmir, "[lid]"},
};

const QueryName* find_query(std::string_view name) {
  auto eq = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& q : kQueries)
    if (eq(name, q.name) || eq(name, q.alias)) return &q;
  return nullptr;
}

class Run {
 public:
  Run(MadRpc& rpc, const Args& a, uint64_t sm_key) : rpc_(rpc), sa_(rpc, sm_key), a_(a) {}

  // The exit status; output in text_ / json_.
  int main();
  std::string text;
  json out = json::object();
  std::string err;

 private:
  bool fail(const Failure& f) {
    err += f.message + "\n";
    status_ = f.status;
    return false;
  }
  bool table(uint16_t attr, uint64_t mask, const Bytes& rec, std::vector<Bytes>& got, uint32_t mod = 0) {
    Failure f{"", 0};
    auto r = sa_.query(kGetTable, attr, mask, rec, mod, f);
    if (!r) {
      if (f.status == 0) f = {fmt::format("Query SA failed: {}", r.error().message()), EIO};
      return fail(f);
    }
    got = std::move(*r);
    return true;
  }
  template <class Dump>
  bool dump_table(uint16_t attr, uint64_t mask, const Bytes& rec, Dump dump, uint32_t mod = 0) {
    std::vector<Bytes> got;
    if (!table(attr, mask, rec, got, mod)) return false;
    json recs = json::array();
    for (const auto& r : got) {
      Out o = dump(r);
      text += o.text;
      recs.push_back(o.obj);
    }
    out["records"] = recs;
    return true;
  }
  // saquery's get_lid: a name (a NodeRecord's description) or a LID.
  bool get_lid(const std::string& name, int64_t& lid);
  bool parse_lid_and_ports(const std::string& s, int64_t& lid, int64_t* p1, int64_t* p2);
  bool query_sa_cpi();
  bool print_node_records(NodePrint how, const std::string& requested);

  MadRpc& rpc_;
  Saquery sa_;
  const Args& a_;
  Params p_;
  int status_ = 0;
};

bool Run::get_lid(const std::string& name, int64_t& lid) {
  if (name.empty()) {
    lid = 0;
    return true;
  }
  if (std::isalpha(static_cast<unsigned char>(name[0]))) {
    std::vector<Bytes> nrs;
    if (!table(kNr, 0, Bytes(108, 0), nrs)) return false;
    for (const auto& r : nrs)
      if (text_at(r, 44, 64) == name.substr(0, 64)) {
        lid = static_cast<int64_t>(be(r, 0, 2));
        return true;
      }
    return fail({fmt::format("Failed to find lid for \"{}\": {}", name, std::strerror(kEnonet)), kEnonet});
  }
  errno = 0;
  const long v = std::strtol(name.c_str(), nullptr, 0);
  if (errno != 0 || v <= 0 || v > 0xFFFF) return fail({fmt::format("Invalid lid specified: \"{}\"", name), EINVAL});
  lid = v;
  return true;
}

bool Run::parse_lid_and_ports(const std::string& s, int64_t& lid, int64_t* p1, int64_t* p2) {
  if (p1) *p1 = -1;
  if (p2) *p2 = -1;
  const size_t a = s.find('/');
  if (!get_lid(s.substr(0, a), lid)) return false;
  if (a == std::string::npos) return true;
  auto num = [](const std::string& t, int64_t* value) {
    if (!value) return;
    char* e = nullptr;
    const unsigned long v = std::strtoul(t.c_str(), &e, 0);
    *value = e == t.c_str() ? -1 : static_cast<int64_t>(v);
  };
  const size_t b = s.find('/', a + 1);
  num(s.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1), p1);
  if (b != std::string::npos) num(s.substr(b + 1), p2);
  return true;
}

bool Run::query_sa_cpi() {
  Failure f{"", 0};
  auto r = sa_.query(kGet, kCpi, 0, {}, 0, f);
  if (!r || r->empty()) {
    if (!r && f.status == 0) f = {fmt::format("Query SA failed: {}", r.error().message()), EIO};
    if (r) f = {"Query SA failed: no ClassPortInfo in the answer", EIO};
    fail(f);
    err += "Failed to query SA:ClassPortInfo\n";
    return false;
  }
  p_.cpi = (*r)[0];
  p_.cpi.resize(72, 0);
  return true;
}

bool Run::print_node_records(NodePrint how, const std::string& requested) {
  std::vector<Bytes> nrs;
  if (!table(kNr, 0, Bytes(108, 0), nrs)) return false;
  if (how == NodePrint::kAllDesc) text += "   LID \"name\"\n================\n";
  json recs = json::array();
  uint64_t want = 0;
  if (how == NodePrint::kNameOfLid || how == NodePrint::kNameOfGuid) want = std::strtoull(requested.c_str(), nullptr, 0);
  if (how == NodePrint::kNameOfLid) want &= 0xFFFF;
  auto print = [&](const Bytes& r) {
    json j = {{"lid", be(r, 0, 2)}, {"port_guid", fmt::format("0x{:016x}", be(r, 24, 8))},
              {"NodeDescription", text_at(r, 44, 64)}};
    switch (how) {
      case NodePrint::kLidOnly:
      case NodePrint::kUniqueLidOnly: text += fmt::format("{}\n", be(r, 0, 2)); break;
      case NodePrint::kGuidOnly: text += fmt::format("0x{:016x}\n", be(r, 24, 8)); break;
      case NodePrint::kNameOfLid:
      case NodePrint::kNameOfGuid: text += text_at(r, 44, 64) + "\n"; break;
      default: {
        Out o = dump_node_record(r);
        text += o.text;
        j = o.obj;
      }
    }
    recs.push_back(j);
  };
  for (const auto& r : nrs) {
    if (how == NodePrint::kAllDesc) {
      if (be(r, 6, 1) == 1) {
        text += fmt::format("{:6}  \"{}\"\n", be(r, 0, 2), text_at(r, 44, 64));
        recs.push_back({{"lid", be(r, 0, 2)}, {"name", text_at(r, 44, 64)}});
      }
    } else if (how == NodePrint::kNameOfLid) {
      if (want == be(r, 0, 2)) print(r);
    } else if (how == NodePrint::kNameOfGuid) {
      if (want == be(r, 24, 8)) print(r);
    } else if (requested.empty() || text_at(r, 44, 64) == requested.substr(0, 64)) {
      print(r);
      if (how == NodePrint::kUniqueLidOnly) break;
    }
  }
  out["records"] = recs;
  return true;
}

int Run::main() {
  // Which query: saquery's process_opt and main.
  enum class Cmd { kQuery, kNodeRecord, kClassPortInfo, kIsSm, kMcGroups, kMcMembers } cmd = Cmd::kQuery;
  NodePrint how = NodePrint::kAll;
  uint16_t type = 0;
  if (!a_.src_to_dst.empty()) {
    const size_t c = a_.src_to_dst.find(':');
    if (c == std::string::npos) return fail({"--src-to-dst wants <src:dst>", EINVAL}), status_;
    p_.numb_path = 0x7f;
    type = kPr;
  }
  if (a_.p) type = kPr;
  if (a_.D) how = NodePrint::kAllDesc, cmd = Cmd::kNodeRecord;
  if (a_.c) cmd = Cmd::kClassPortInfo;
  if (a_.S) type = kSr;
  if (a_.I) type = kIir;
  if (a_.N) cmd = Cmd::kNodeRecord;
  if (a_.L) how = NodePrint::kLidOnly, cmd = Cmd::kNodeRecord;
  if (a_.l) how = NodePrint::kUniqueLidOnly, cmd = Cmd::kNodeRecord;
  if (a_.G) how = NodePrint::kGuidOnly, cmd = Cmd::kNodeRecord;
  if (a_.O) how = NodePrint::kNameOfLid, cmd = Cmd::kNodeRecord;
  if (a_.U) how = NodePrint::kNameOfGuid, cmd = Cmd::kNodeRecord;
  if (a_.s) cmd = Cmd::kIsSm;
  if (a_.g) cmd = Cmd::kMcGroups;
  if (a_.m) cmd = Cmd::kMcMembers;
  if (a_.x) type = kLr;
  auto num = [](const std::string& s) { return static_cast<int64_t>(std::strtoull(s.c_str(), nullptr, 0)); };
  if (!a_.slid.empty()) p_.slid = num(a_.slid) & 0xFFFF;
  if (!a_.dlid.empty()) p_.dlid = num(a_.dlid) & 0xFFFF;
  if (!a_.mlid.empty()) p_.mlid = num(a_.mlid) & 0xFFFF;
  if (!a_.pkey.empty()) p_.pkey = num(a_.pkey) & 0xFFFF;
  if (!a_.service_id.empty()) p_.service_id = static_cast<uint64_t>(num(a_.service_id));
  if (a_.numb_path >= 0) p_.numb_path = a_.numb_path;
  p_.reversible = a_.reversible;
  p_.sl = a_.sl;
  p_.sgid = a_.sgid;
  p_.dgid = a_.dgid;
  p_.gid = a_.gid;
  p_.mgid = a_.mgid;
  if (!a_.sgid_to_dgid.empty()) {
    const size_t d = a_.sgid_to_dgid.find('-');
    if (d == std::string::npos) return fail({"--sgid-to-dgid wants <sgid-dgid>", EINVAL}), status_;
    p_.sgid = a_.sgid_to_dgid.substr(0, d);
    p_.dgid = a_.sgid_to_dgid.substr(d + 1);
    p_.numb_path = 0x7f;
    type = kPr;
  }

  std::vector<std::string> args = a_.rest;
  const QueryName* q = nullptr;
  if (type == 0 && cmd == Cmd::kQuery) {
    if (args.empty() || !(q = find_query(args[0]))) {
      type = kNr;
    } else {
      type = q->type;
      args.erase(args.begin());
    }
  }
  std::string requested;
  if (!args.empty()) requested = args[0];
  if ((how == NodePrint::kLidOnly || how == NodePrint::kUniqueLidOnly || how == NodePrint::kGuidOnly) &&
      requested.empty())
    return fail({"ERROR: name not specified", 2}), status_;
  if (how == NodePrint::kNameOfLid && requested.empty()) return fail({"ERROR: lid not specified", 2}), status_;
  if (how == NodePrint::kNameOfGuid && requested.empty()) return fail({"ERROR: guid not specified", 2}), status_;

  if (!a_.src_to_dst.empty()) {
    const size_t c = a_.src_to_dst.find(':');
    if (!get_lid(a_.src_to_dst.substr(0, c), p_.slid)) return status_;
    if (!get_lid(a_.src_to_dst.substr(c + 1), p_.dlid)) return status_;
  }
  if ((cmd == Cmd::kClassPortInfo || (cmd == Cmd::kQuery && (type == kCpi || type == kSwir))) && !query_sa_cpi())
    return status_;

  out["query"] = cmd == Cmd::kQuery ? std::string(q ? q->name : "") : "";
  auto lid_bit = [](uint64_t& mask, int bit, int64_t v, int64_t dflt) {
    if (v != dflt) mask |= 1ull << bit;
  };
  switch (cmd) {
    case Cmd::kNodeRecord: out["query"] = "NodeRecord"; print_node_records(how, requested); return status_;
    case Cmd::kClassPortInfo: {
      out["query"] = "ClassPortInfo";
      Out o = dump_class_port_info(p_.cpi);
      text += o.text;
      out["records"] = json::array({o.obj});
      return status_;
    }
    case Cmd::kIsSm: {
      out["query"] = "IsSM";
      const uint64_t mask = mad::component_mask<mad::PortInfoRecord>({"CapabilityMask"});
      constexpr uint32_t kIsSm = 1u << 1, kIsSmDisabled = 1u << 10;
      json both = json::object();
      for (auto [title, bit, key] : {std::tuple{"IsSM ports\n", kIsSm, "IsSM"},
                                     std::tuple{"\nIsSMdisabled ports\n", kIsSmDisabled, "IsSMdisabled"}}) {
        Bytes rec(72, 0);
        put(rec, kPirPortInfo + 20, bit, 4);
        std::vector<Bytes> got;
        if (!table(kPir, mask, rec, got, 1u << 31)) return status_;
        text += title;
        json recs = json::array();
        for (const auto& r : got) {
          Out o = dump_portinfo_record(r);
          text += o.text;
          recs.push_back(o.obj);
        }
        both[key] = recs;
      }
      out["records"] = both;
      return status_;
    }
    case Cmd::kMcGroups:
      out["query"] = "MCMemberRecord groups";
      dump_table(kMcmr, 0, Bytes(56, 0), dump_multicast_group_record);
      return status_;
    case Cmd::kMcMembers: {
      out["query"] = "MCMemberRecord members";
      std::vector<Bytes> groups, nrs;
      if (!table(kMcmr, 0, Bytes(56, 0), groups)) return status_;
      if (!table(kNr, 0, Bytes(108, 0), nrs)) return status_;
      json recs = json::array();
      for (const auto& g : groups) {
        std::string name = "<unknown>";
        for (const auto& n : nrs)
          if (be(n, 24, 8) == be(g, 24, 8)) {
            name = text_at(n, 44, 64);
            break;
          }
        const uint64_t mlid = be(g, 36, 2);
        if (!requested.empty()) {
          if (static_cast<uint64_t>(std::strtol(requested.c_str(), nullptr, 0)) == mlid)
            text += fmt::format("\t\tPortGid.................{} ({})\n", gid_at(g, 16), name);
        } else {
          text += fmt::format("MCMemberRecord member dump:\n\t\tMGID....................{}\n\t\tMlid....................0x{:X}\n"
                              "\t\tPortGid.................{}\n\t\tScopeState..............0x{:X}\n"
                              "\t\tProxyJoin...............0x{:X}\n\t\tNodeDescription.........{}\n",
                              gid_at(g, 0), mlid, gid_at(g, 16), be(g, 48, 1), be(g, 49, 1) >> 7, name);
        }
        recs.push_back({{"MGID", gid_at(g, 0)}, {"Mlid", mlid}, {"PortGid", gid_at(g, 16)},
                        {"ScopeState", be(g, 48, 1)}, {"NodeDescription", name}});
      }
      out["records"] = recs;
      return status_;
    }
    case Cmd::kQuery: break;
  }

  if (!q) {
    for (const auto& c : kQueries)
      if (c.type == type) q = &c;
  }
  out["query"] = q ? q->name : "";
  int64_t lid = 0, p1 = -1, p2 = -1;
  auto lid_ports = [&](int64_t* a, int64_t* b) { return args.empty() || parse_lid_and_ports(args[0], lid, a, b); };
  uint64_t mask = 0;
  switch (type) {
    case kCpi: {
      Out o = dump_class_port_info(p_.cpi);
      text += o.text;
      out["records"] = json::array({o.obj});
      break;
    }
    case kNr: {
      if (!lid_ports(nullptr, nullptr)) break;
      Bytes rec(108, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      dump_table(kNr, mask, rec, dump_node_record);
      break;
    }
    case kPir: {
      if (!lid_ports(&p1, &p2)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 1), mask |= 1u << 1;
      if (p2 != -1) put(rec, 3, static_cast<uint64_t>(p2), 1), mask |= 1u << 2;
      dump_table(kPir, mask, rec, dump_one_portinfo_record);
      break;
    }
    case kSl2Vl: {
      if (!lid_ports(&p1, &p2)) break;
      Bytes rec(16, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 1), mask |= 1u << 1;
      if (p2 != -1) put(rec, 3, static_cast<uint64_t>(p2), 1), mask |= 1u << 2;
      dump_table(kSl2Vl, mask, rec, dump_one_slvl_record);
      break;
    }
    case 0x0033: {  // PKeyTableRecord: LID 0, BlockNum 1, PortNum 2
      if (!lid_ports(&p1, &p2)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 4, static_cast<uint64_t>(p1), 1), mask |= 1u << 2;
      if (p2 != -1) put(rec, 2, static_cast<uint64_t>(p2), 2), mask |= 1u << 1;
      dump_table(0x0033, mask, rec, dump_one_pkey_tbl_record);
      break;
    }
    case kVlar: {  // LID 0, OutputPortNum 1, BlockNum 2
      if (!lid_ports(&p1, &p2)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 1), mask |= 1u << 1;
      if (p2 != -1) put(rec, 3, static_cast<uint64_t>(p2), 1), mask |= 1u << 2;
      dump_table(kVlar, mask, rec, dump_one_vlarb_record);
      break;
    }
    case kIir: {
      Bytes rec(80, 0);
      if (!args.empty()) {
        if (::inet_pton(AF_INET6, args[0].c_str(), rec.data()) != 1) {
          fail({fmt::format("Invalid SubscriberGID specified: \"{}\"", args[0]), EINVAL});
          break;
        }
        mask = 1;
      }
      dump_table(kIir, mask, rec, dump_inform_info_record);
      break;
    }
    case kLr: {
      int64_t to_lid = 0, to_port = -1;
      if (!args.empty() && !parse_lid_and_ports(args[0], lid, &p1, nullptr)) break;
      if (args.size() > 1 && !parse_lid_and_ports(args[1], to_lid, &to_port, nullptr)) break;
      Bytes rec(8, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      put(rec, 4, static_cast<uint64_t>(to_lid), 2);
      uint64_t m = 0;
      if (lid != 0) m |= mad::component_mask<mad::LinkRecord>({"FromLID"});
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 1), m |= mad::component_mask<mad::LinkRecord>({"FromPort"});
      if (to_lid != 0) m |= mad::component_mask<mad::LinkRecord>({"ToLID"});
      if (to_port != -1) put(rec, 3, static_cast<uint64_t>(to_port), 1), m |= mad::component_mask<mad::LinkRecord>({"ToPort"});
      dump_table(kLr, m, rec, dump_one_link_record);
      break;
    }
    case kSr: dump_table(kSr, 0, Bytes(176, 0), dump_service_record); break;
    case kPr: {
      uint64_t m = 0;
      using PR = mad::PathRecord;
      Bytes rec(64, 0);
      if (p_.service_id != 0) put(rec, 0, p_.service_id, 8), m |= mad::component_mask<PR>({"ServiceID"});
      auto gid = [&](const std::string& s, size_t at, std::string_view comp) {
        if (s.empty()) return true;
        if (::inet_pton(AF_INET6, s.c_str(), rec.data() + at) != 1) return false;
        m |= mad::component_mask<PR>({comp});
        return true;
      };
      if (!gid(p_.sgid, 24, "SGID") || !gid(p_.dgid, 8, "DGID")) {
        fail({"bad GID", EINVAL});
        break;
      }
      if (p_.slid != 0) put(rec, 42, static_cast<uint64_t>(p_.slid), 2), m |= mad::component_mask<PR>({"SLID"});
      if (p_.dlid != 0) put(rec, 40, static_cast<uint64_t>(p_.dlid), 2), m |= mad::component_mask<PR>({"DLID"});
      uint8_t np = 0;
      if (p_.reversible != -1) np |= static_cast<uint8_t>((p_.reversible & 1) << 7), m |= mad::component_mask<PR>({"Reversible"});
      if (p_.numb_path != -1) np |= static_cast<uint8_t>(p_.numb_path & 0x7f), m |= mad::component_mask<PR>({"NumbPath"});
      rec[49] = np;
      if (p_.pkey != 0) put(rec, 50, static_cast<uint64_t>(p_.pkey), 2), m |= mad::component_mask<PR>({"P_Key"});
      if (p_.sl != -1) put(rec, 52, static_cast<uint64_t>(p_.sl & 0xf), 2), m |= mad::component_mask<PR>({"SL"});
      dump_table(kPr, m, rec, dump_path_record);
      break;
    }
    case kMcmr: {
      Bytes rec(56, 0);
      uint64_t m = 0;
      using MR = mad::MCMemberRecord;
      if (!p_.mgid.empty() && ::inet_pton(AF_INET6, p_.mgid.c_str(), rec.data()) == 1) m |= mad::component_mask<MR>({"MGID"});
      if (!p_.gid.empty() && ::inet_pton(AF_INET6, p_.gid.c_str(), rec.data() + 16) == 1) m |= mad::component_mask<MR>({"PortGID"});
      if (p_.mlid != 0) put(rec, 36, static_cast<uint64_t>(p_.mlid), 2), m |= mad::component_mask<MR>({"MLID"});
      if (p_.pkey != 0) put(rec, 40, static_cast<uint64_t>(p_.pkey), 2), m |= mad::component_mask<MR>({"P_Key"});
      dump_table(kMcmr, m, rec, dump_one_mcmember_record);
      break;
    }
    case kLftr: {  // LID 0, BlockNum 1
      if (!lid_ports(&p1, nullptr)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 2), mask |= 1u << 1;
      dump_table(kLftr, mask, rec, dump_one_lft_record);
      break;
    }
    case kMftr: {  // LID 0, Position 1, Reserved 2, BlockNum 3
      if (!lid_ports(&p1, &p2)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      uint64_t pb = 0;
      if (p2 != -1) pb |= static_cast<uint64_t>(p2) & 0x1ff, mask |= 1u << 3;
      if (p1 != -1) pb |= (static_cast<uint64_t>(p1) & 0xf) << 12, mask |= 1u << 1;
      put(rec, 2, pb, 2);
      dump_table(kMftr, mask, rec, dump_one_mft_record);
      break;
    }
    case kGir: {  // LID 0, BlockNum 1
      if (!lid_ports(&p1, nullptr)) break;
      Bytes rec(72, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      if (p1 != -1) put(rec, 2, static_cast<uint64_t>(p1), 1), mask |= 1u << 1;
      dump_table(kGir, mask, rec, dump_one_guidinfo_record);
      break;
    }
    case kSwir: {
      if (!lid_ports(nullptr, nullptr)) break;
      Bytes rec(32, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      dump_table(kSwir, mask, rec, [&](const Bytes& r) { return dump_switch_info_record(r, p_.cpi); });
      break;
    }
    case kSmir: {
      if (!lid_ports(nullptr, nullptr)) break;
      Bytes rec(32, 0);
      put(rec, 0, static_cast<uint64_t>(lid), 2);
      lid_bit(mask, 0, lid, 0);
      dump_table(kSmir, mask, rec, dump_sm_info_record);
      break;
    }
    default: fail({fmt::format("Unknown query type {}", type), EINVAL});
  }
  return status_;
}

std::string usage_names() {
  std::string s = "Supported query names (and aliases):\n";
  for (const auto& q : kQueries) s += fmt::format("  {} ({}) {}\n", q.name, q.alias, q.usage ? q.usage : "");
  return s + "\n  Queries node records by default.";
}

int run_saquery(const Args& a, CommandContext& ctx) {
  RpcOptions opts;
  opts.timeout = std::chrono::milliseconds(a.timeout);
  std::vector<ipc::NodeEntry> nodes;
  auto rpc = open_tool_port(ctx.fabric, ctx.host, 1, opts, &nodes);
  if (!rpc) return ctx.fail(rpc.error());
  std::string host_id;  // the node the port is on, for sa_get_handle's message
  for (const auto& n : nodes)
    if (n.index == rpc->node()) host_id = n.id;
  if (rpc->sm_lid() == 0) {
    // sa_get_handle: the port knows no SM, so there is no SA to ask.
    fmt::print(stderr, "ibwarn: [{}] sa_get_handle: No SM/SA found on port {}:1\n", ::getpid(), host_id);
    fmt::print(stderr, "ibpanic: [{}] main: Failed to bind to the SA\n", ::getpid());
    return ctx.exit_code = 255;
  }
  uint64_t sm_key = 0;
  if (!a.smkey.empty()) sm_key = std::strtoull(a.smkey.c_str(), nullptr, 0);
  Run run(*rpc, a, sm_key);
  const int status = run.main();
  if (a.json) {
    run.out["exit_status"] = status;
    if (!run.err.empty()) run.out["error"] = run.err.substr(0, run.err.size() - 1);
    std::cout << run.out.dump(2) << "\n";
  } else {
    std::cout << run.text;
  }
  std::cout.flush();
  if (!run.err.empty()) fmt::print(stderr, "{}", run.err);
  return ctx.exit_code = status;
}

}  // namespace

void register_saquery(CLI::App& app, CommandContext& ctx) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("saquery", "Query the SA's records (infiniband-diags saquery)");
  cmd->footer(usage_names());
  cmd->add_option("QUERY", a->rest, "[query-name] [<name> | <lid> | <guid>]");
  cmd->add_flag("-p", a->p, "get PathRecord info");
  cmd->add_flag("-N", a->N, "get NodeRecord info");
  cmd->add_flag("-L", a->L, "return the Lids of the name specified");
  cmd->add_flag("-l", a->l, "return the unique Lid of the name specified");
  cmd->add_flag("-G", a->G, "return the Guids of the name specified");
  cmd->add_flag("-O", a->O, "return name for the Lid specified");
  cmd->add_flag("-U", a->U, "return name for the Guid specified");
  cmd->add_flag("-s", a->s, "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on");
  cmd->add_flag("-g", a->g, "get multicast group info");
  cmd->add_flag("-m", a->m, "get multicast member info (with an MLID: member GIDs of that group only)");
  cmd->add_flag("-x", a->x, "get LinkRecord info");
  cmd->add_flag("-c", a->c, "get the SA's class port info");
  cmd->add_flag("-S", a->S, "get ServiceRecord info");
  cmd->add_flag("-I", a->I, "get InformInfoRecord (subscription) info");
  cmd->add_flag("-D,--list", a->D, "the node desc of the CA's");
  cmd->add_option("--src-to-dst", a->src_to_dst, "get a PathRecord for <src:dst> (node names or LIDs)");
  cmd->add_option("--sgid-to-dgid", a->sgid_to_dgid, "get a PathRecord for <sgid-dgid> (IPv6 format)");
  cmd->add_option("--smkey", a->smkey, "SA SM_Key value for the query (default 0: untrusted)");
  cmd->add_option("--slid", a->slid, "Source LID (PathRecord)");
  cmd->add_option("--dlid", a->dlid, "Destination LID (PathRecord)");
  cmd->add_option("--mlid", a->mlid, "Multicast LID (MCMemberRecord)");
  cmd->add_option("--sgid", a->sgid, "Source GID (PathRecord)");
  cmd->add_option("--dgid", a->dgid, "Destination GID (PathRecord)");
  cmd->add_option("--gid", a->gid, "Port GID (MCMemberRecord)");
  cmd->add_option("--mgid", a->mgid, "Multicast GID (MCMemberRecord)");
  cmd->add_option("-r,--reversible", a->reversible, "Reversible path (PathRecord)");
  cmd->add_option("-n,--numb_path", a->numb_path, "Number of paths (PathRecord)");
  cmd->add_option("--pkey", a->pkey, "P_Key (PathRecord, MCMemberRecord)");
  cmd->add_option("--sl", a->sl, "Service level (PathRecord)");
  cmd->add_option("--service_id", a->service_id, "ServiceID (PathRecord)");
  cmd->add_option("-t,--timeout", a->timeout, "timeout per try, ms (default 1000)");
  cmd->add_flag("--json", a->json, "print the records as JSON");
  cmd->callback([a, &ctx] { run_saquery(*a, ctx); });
}

}  // namespace softib::tools
