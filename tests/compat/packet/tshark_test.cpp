// Cross-checks the packet builder against Wireshark's InfiniBand dissector and an
// independent CRC computation:
//
//   1. RoCE v2: four packets of every supported RC, UC and UD opcode (with and without
//      immediate data, and the IETH ones), IPv4 and IPv6, every PadCnt, seeded random field
//      values, built by build_roce_v2 and written by PcapWriter to a LINKTYPE_RAW pcap.
//   2. Native IB: the same opcodes, local and global, built by build_ib and written to a
//      LINKTYPE_INFINIBAND pcap.
//
// For each file ONE tshark invocation prints every field (-T fields), and every field must
// equal what the encoder put in: BTH, RETH, AETH, DETH, ImmDt, AtomicETH, AtomicAckETH, IETH,
// the payload with its pad, the CRCs, and the IP/UDP or LRH/GRH fields. IP and UDP checksum
// validation is on; no packet may carry an expert error or be malformed, and `-z expert`
// must report nothing. Then tests/compat/packet/crc_check.py recomputes every ICRC (and
// VCRC) with Python's zlib, and those must equal ours.
//
// What we learned about tshark 4.0.17 while writing this:
//   - It shows infiniband.invariant.crc and infiniband.variant.crc as the wire bytes read
//     big-endian. The IBA sends CRCs least-significant byte first, so tshark's value is the
//     byte-swapped CRC. It never checks either CRC.
//   - Its pcap reader does not know LINKTYPE_INFINIBAND (247): "network type 247 unknown or
//     unsupported". The native file is therefore handed to tshark as a copy that differs only
//     in the link type of its file header (147, USER0), mapped to the "infiniband" dissector
//     with the user_dlts preference. Every record byte tshark reads is the 247 file's.
//   - It shows the payload (data.data) with its pad bytes.
//   - Payload heuristics beyond those of compat-facts §D fire too: Mellanox EoIB marked an
//     empty UD SEND_ONLY_WITH_IMMEDIATE malformed, so infiniband.eoib, infiniband_sdp and
//     fcoib are disabled as well. Its built-in IPoIB guess (an ethertype followed by two zero
//     bytes) is avoided by payloads whose bytes 2-3 are not both zero.
//   - DestQP and DETH.SrcQP 0 and 1 make it parse the payload as a MAD; random QPNs here
//     are >= 2 (random_data_qpn).
//   - FECN and BECN have no fields: BTH byte 4 shows as the first infiniband.reserved.
//   - RD opcodes (0x40-0x5F) are dissected as DCT, with an extra 8-byte header: RD packets
//     (unsupported by softib anyway) are not sent to it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "packet/pcap.hpp"
#include "unit/packet/random_packets.hpp"

namespace softib::packet {
namespace {

using namespace softib::packet::testing;
using Bytes = std::vector<uint8_t>;
using wire::ByteSpan;

// ---- Running tools ------------------------------------------------------------------------

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// A private directory for the files and for tshark's HOME and TMPDIR; removed afterwards.
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/softib_tshark_XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

RunResult run(const std::string& command, const TempDir& dir) {
  RunResult r;
  const std::string err_file = dir.file("stderr.txt");
  FILE* p = ::popen((command + " 2>'" + err_file + "'").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  return r;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!text.empty() && text.back() == sep) parts.emplace_back();
  return parts;
}

// ---- Expected fields ----------------------------------------------------------------------

enum class Kind {
  kNumber,  // decimal or 0x-hex: compared as integers
  kBytes,   // hex digits, compared without separators, in lower case
  kText,    // compared as is
  kIpv6,    // an IPv6 address in any valid spelling
};

struct Column {
  std::string field;
  Kind kind;
};

const std::vector<Column> kTransportColumns = {
    {"infiniband.bth.opcode", Kind::kNumber},
    {"infiniband.bth.se", Kind::kNumber},
    {"infiniband.bth.m", Kind::kNumber},
    {"infiniband.bth.padcnt", Kind::kNumber},
    {"infiniband.bth.tver", Kind::kNumber},
    {"infiniband.bth.p_key", Kind::kNumber},
    {"infiniband.reserved", Kind::kBytes},  // first occurrence: BTH byte 4 (FECN, BECN)
    {"infiniband.bth.destqp", Kind::kNumber},
    {"infiniband.bth.a", Kind::kNumber},
    {"infiniband.bth.reserved7", Kind::kNumber},
    {"infiniband.bth.psn", Kind::kNumber},
    {"infiniband.deth.q_key", Kind::kNumber},
    {"infiniband.deth.srcqp", Kind::kNumber},
    {"infiniband.reth.va", Kind::kNumber},
    {"infiniband.reth.r_key", Kind::kNumber},
    {"infiniband.reth.dmalen", Kind::kNumber},
    {"infiniband.atomiceth.swapdt", Kind::kNumber},
    {"infiniband.atomiceth.cmpdt", Kind::kNumber},
    {"infiniband.aeth.syndrome", Kind::kNumber},
    {"infiniband.aeth.msn", Kind::kNumber},
    {"infiniband.atomicacketh.origremdt", Kind::kNumber},
    {"infiniband.immdt", Kind::kBytes},
    {"infiniband.ieth", Kind::kBytes},
    {"data.data", Kind::kBytes},
    {"data.len", Kind::kNumber},
    {"infiniband.invariant.crc", Kind::kNumber},
    {"_ws.expert.severity", Kind::kText},
    {"_ws.malformed", Kind::kText},
};

const std::vector<Column> kRoceColumns = {
    {"frame.protocols", Kind::kText}, {"frame.len", Kind::kNumber},
    {"ip.src", Kind::kText},          {"ip.dst", Kind::kText},
    {"ip.dsfield", Kind::kNumber},    {"ip.ttl", Kind::kNumber},
    {"ip.id", Kind::kNumber},         {"ip.flags.df", Kind::kNumber},
    {"ip.len", Kind::kNumber},        {"ip.proto", Kind::kNumber},
    {"ip.checksum.status", Kind::kNumber},
    {"ipv6.src", Kind::kIpv6},        {"ipv6.dst", Kind::kIpv6},
    {"ipv6.tclass", Kind::kNumber},   {"ipv6.flow", Kind::kNumber},
    {"ipv6.hlim", Kind::kNumber},     {"ipv6.plen", Kind::kNumber},
    {"ipv6.nxt", Kind::kNumber},
    {"udp.srcport", Kind::kNumber},   {"udp.dstport", Kind::kNumber},
    {"udp.length", Kind::kNumber},    {"udp.checksum", Kind::kNumber},
    {"udp.checksum.status", Kind::kNumber},
};

const std::vector<Column> kIbColumns = {
    {"frame.protocols", Kind::kText},          {"frame.len", Kind::kNumber},
    {"infiniband.lrh.vl", Kind::kNumber},      {"infiniband.lrh.lver", Kind::kNumber},
    {"infiniband.lrh.sl", Kind::kNumber},      {"infiniband.lrh.reserved2", Kind::kNumber},
    {"infiniband.lrh.lnh", Kind::kNumber},     {"infiniband.lrh.dlid", Kind::kNumber},
    {"infiniband.lrh.reserved5", Kind::kNumber}, {"infiniband.lrh.pktlen", Kind::kNumber},
    {"infiniband.lrh.slid", Kind::kNumber},    {"infiniband.grh.ipver", Kind::kNumber},
    {"infiniband.grh.tclass", Kind::kNumber},  {"infiniband.grh.flowlabel", Kind::kNumber},
    {"infiniband.grh.paylen", Kind::kNumber},  {"infiniband.grh.nxthdr", Kind::kNumber},
    {"infiniband.grh.hoplmt", Kind::kNumber},  {"infiniband.grh.sgid", Kind::kIpv6},
    {"infiniband.grh.dgid", Kind::kIpv6},      {"infiniband.variant.crc", Kind::kNumber},
};

std::string normalize(const std::string& v, Kind kind) {
  if (v.empty()) return v;
  switch (kind) {
    case Kind::kNumber: {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 0);
      return end && *end == '\0' ? std::to_string(n) : "unparsable:" + v;
    }
    case Kind::kBytes: {
      std::string hex;
      for (char c : v)
        if (c != ':') hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return hex;
    }
    case Kind::kIpv6: {
      const auto gid = Gid::parse(v);
      return gid ? gid->to_string() : "unparsable:" + v;
    }
    case Kind::kText: break;
  }
  return v;
}

using Expect = std::map<std::string, std::string>;  // field -> value; absent: field must be empty

std::string num(uint64_t v) { return std::to_string(v); }
std::string hex(ByteSpan bytes) {
  std::string s;
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}
std::string hex32(uint32_t v) {
  uint8_t b[4];
  wire::store_be32(b, v);
  return hex(b);
}
std::string ipv4_text(const Gid& g) {
  const uint32_t a = g.ipv4();
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xFF, (a >> 8) & 0xFF, a & 0xFF);
}

// BTH, extension headers, payload (as tshark shows it: with the pad) and ICRC.
void expect_transport(Expect& e, const TransportHeaders& h, ByteSpan payload_with_pad, ByteSpan icrc_bytes) {
  const wire::Bth& b = h.bth;
  e["infiniband.bth.opcode"] = num(b.opcode);
  e["infiniband.bth.se"] = num(b.solicited);
  e["infiniband.bth.m"] = num(b.mig_req);
  e["infiniband.bth.padcnt"] = num(b.pad_count);
  e["infiniband.bth.tver"] = "0";
  e["infiniband.bth.p_key"] = num(b.pkey.value());
  e["infiniband.reserved"] = fmt::format("{:02x}", (b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0));
  e["infiniband.bth.destqp"] = num(b.dest_qp.value());
  e["infiniband.bth.a"] = num(b.ack_req);
  e["infiniband.bth.reserved7"] = "0";
  e["infiniband.bth.psn"] = num(b.psn.value());
  if (h.deth) {
    e["infiniband.deth.q_key"] = num(h.deth->qkey.value());
    e["infiniband.deth.srcqp"] = num(h.deth->src_qp.value());
  }
  if (h.reth) {
    e["infiniband.reth.va"] = num(h.reth->va);
    e["infiniband.reth.r_key"] = num(h.reth->rkey.value());
    e["infiniband.reth.dmalen"] = num(h.reth->dma_len);
  }
  if (h.atomic_eth) {  // tshark shows the AtomicETH's VA and R_Key under reth.*
    e["infiniband.reth.va"] = num(h.atomic_eth->va);
    e["infiniband.reth.r_key"] = num(h.atomic_eth->rkey.value());
    e["infiniband.atomiceth.swapdt"] = num(h.atomic_eth->swap_add);
    e["infiniband.atomiceth.cmpdt"] = num(h.atomic_eth->compare);
  }
  if (h.aeth) {
    e["infiniband.aeth.syndrome"] = num(h.aeth->syndrome);
    e["infiniband.aeth.msn"] = num(h.aeth->msn);
  }
  if (h.atomic_ack_eth) e["infiniband.atomicacketh.origremdt"] = num(h.atomic_ack_eth->orig_remote_data);
  if (h.immdt) e["infiniband.immdt"] = hex32(h.immdt->imm);
  if (h.ieth) e["infiniband.ieth"] = hex32(h.ieth->rkey.value());
  if (!payload_with_pad.empty()) {
    e["data.data"] = hex(payload_with_pad);
    e["data.len"] = num(payload_with_pad.size());
  }
  e["infiniband.invariant.crc"] = num(wire::load_be32(icrc_bytes.data()));  // the wire bytes, read big-endian
}

// ---- Packets ------------------------------------------------------------------------------

struct Sent {
  std::string what;
  Bytes bytes;
  Expect expect;
  uint32_t icrc = 0;                // as the IBA defines it (sent LSB first)
  std::optional<uint16_t> vcrc;     // native IB only
};

std::vector<const OpcodeInfo*> checked_opcodes() {
  std::vector<const OpcodeInfo*> ops;
  for (const OpcodeInfo& info : kOpcodeTable)
    if (info.supported && info.transport() != Transport::kRd) ops.push_back(&info);
  return ops;
}

// The i-th packet of an opcode: sizes cycle through every PadCnt.
size_t payload_size(TestRng& rng, const OpcodeInfo& info, int i) {
  if (!info.payload) return 0;
  if (info.payload_is_full_pmtu()) return 4 * rng.between(1, 16);
  return 4 * rng.between(0, 10) + static_cast<size_t>(i);
}

Bytes payload_bytes(TestRng& rng, size_t n) {
  Bytes p = random_bytes(rng, n);
  if (n >= 4 && p[2] == 0 && p[3] == 0) p[3] = 1;  // not an IPoIB-like ethertype header
  return p;
}

ByteSpan padded_payload(const PacketView& v) {
  return ByteSpan(v.payload().data(), v.payload().size() + v.pad_count());
}

Sent roce_packet(TestRng& rng, const OpcodeInfo& info, bool ipv6, size_t n) {
  Sent s;
  s.what = fmt::format("{} over {} with {} payload bytes", info.name, ipv6 ? "IPv6" : "IPv4", n);
  const TransportHeaders h = random_headers(rng, info);
  const wire::RoceV2Addressing a = random_addressing(rng, ipv6);
  const Bytes payload = payload_bytes(rng, n);
  s.bytes.resize(roce_v2_packet_length(ipv6, info, n));
  auto built = build_roce_v2(a, h, payload, s.bytes);
  EXPECT_TRUE(built.ok()) << built.error().to_string();
  auto v = PacketView::parse_roce_v2(s.bytes);
  EXPECT_TRUE(v.ok()) << v.error().to_string();
  if (!built.ok() || !v.ok()) return s;
  s.icrc = v->roce()->icrc;

  Expect& e = s.expect;
  const size_t ip_len = ipv6 ? 40 : 20;
  const size_t udp_len = s.bytes.size() - ip_len;
  e["frame.protocols"] = std::string(ipv6 ? "raw:ipv6" : "raw:ip") + ":udp:infiniband" + (n + v->pad_count() ? ":data" : "");
  e["frame.len"] = num(s.bytes.size());
  if (ipv6) {
    e["ipv6.src"] = a.source.to_string();
    e["ipv6.dst"] = a.destination.to_string();
    e["ipv6.tclass"] = num(a.traffic_class);
    e["ipv6.flow"] = num(a.flow_label);
    e["ipv6.hlim"] = num(a.hop_limit);
    e["ipv6.plen"] = num(udp_len);
    e["ipv6.nxt"] = "17";
    e["udp.checksum.status"] = "1";  // present and verified good
  } else {
    e["ip.src"] = ipv4_text(a.source);
    e["ip.dst"] = ipv4_text(a.destination);
    e["ip.dsfield"] = num(a.traffic_class);
    e["ip.ttl"] = num(a.hop_limit);
    e["ip.id"] = num(a.identification);
    e["ip.flags.df"] = "1";
    e["ip.len"] = num(s.bytes.size());
    e["ip.proto"] = "17";
    e["ip.checksum.status"] = "1";   // verified good
    e["udp.checksum.status"] = "3";  // not present: RoCE v2 over IPv4 sends 0
  }
  e["udp.srcport"] = num(a.source_port);
  e["udp.dstport"] = "4791";
  e["udp.length"] = num(udp_len);
  e["udp.checksum"] = num(v->roce()->udp.checksum);
  TransportHeaders sent = h;
  sent.bth.pad_count = v->pad_count();
  expect_transport(e, sent, padded_payload(*v), ByteSpan(s.bytes).last(4));
  return s;
}

Sent ib_packet(TestRng& rng, const OpcodeInfo& info, bool global, size_t n) {
  Sent s;
  s.what = fmt::format("{} {} with {} payload bytes", info.name, global ? "global" : "local", n);
  const TransportHeaders h = random_headers(rng, info);
  const IbRoute route = random_route(rng, global);
  const Bytes payload = payload_bytes(rng, n);
  s.bytes.resize(ib_packet_length(global, info, n));
  auto built = build_ib(route, h, payload, s.bytes);
  EXPECT_TRUE(built.ok()) << built.error().to_string();
  auto v = PacketView::parse_ib(s.bytes);
  EXPECT_TRUE(v.ok()) << v.error().to_string();
  if (!built.ok() || !v.ok()) return s;
  s.icrc = *v->icrc();
  s.vcrc = *v->vcrc();

  Expect& e = s.expect;
  const size_t icrc_end = s.bytes.size() - 2;
  e["frame.protocols"] = std::string("user_dlt:infiniband") + (n + v->pad_count() ? ":data" : "");
  e["frame.len"] = num(s.bytes.size());
  e["infiniband.lrh.vl"] = num(route.lrh.vl);
  e["infiniband.lrh.lver"] = "0";
  e["infiniband.lrh.sl"] = num(route.lrh.sl);
  e["infiniband.lrh.reserved2"] = "0";
  e["infiniband.lrh.lnh"] = global ? "3" : "2";
  e["infiniband.lrh.dlid"] = num(route.lrh.dlid.value());
  e["infiniband.lrh.reserved5"] = "0";
  e["infiniband.lrh.pktlen"] = num(icrc_end / 4);
  e["infiniband.lrh.slid"] = num(route.lrh.slid.value());
  if (global) {
    e["infiniband.grh.ipver"] = "6";
    e["infiniband.grh.tclass"] = num(route.grh->tclass);
    e["infiniband.grh.flowlabel"] = num(route.grh->flow_label);
    e["infiniband.grh.paylen"] = num(icrc_end - 48);
    e["infiniband.grh.nxthdr"] = "27";
    e["infiniband.grh.hoplmt"] = num(route.grh->hop_lmt);
    e["infiniband.grh.sgid"] = route.grh->sgid.to_string();
    e["infiniband.grh.dgid"] = route.grh->dgid.to_string();
  }
  TransportHeaders sent = h;
  sent.bth.pad_count = v->pad_count();
  expect_transport(e, sent, padded_payload(*v), ByteSpan(s.bytes).subspan(icrc_end - 4, 4));
  e["infiniband.variant.crc"] = num(wire::load_be16(&s.bytes[icrc_end]));  // read big-endian
  return s;
}

// ---- The checks ---------------------------------------------------------------------------

const char* const kDisabledProtocols[] = {
    // compat-facts §D: payload heuristics that misread RDMA payloads
    "rpcordma", "smb_direct", "nvme-rdma", "iser", "lnet", "smc",
    // further infiniband.payload heuristics found in `tshark -G heuristic-decodes`
    "infiniband.eoib", "infiniband_sdp", "fcoib"};

std::string tshark_command(const std::string& tshark, const TempDir& dir, const std::string& file) {
  std::string cmd = fmt::format("env HOME='{0}' XDG_CONFIG_HOME='{0}' TMPDIR='{0}' '{1}' -n -r '{2}'", dir.path(),
                                tshark, file);
  cmd += " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE";
  cmd += " -o 'uat:user_dlts:\"User 0 (DLT=147)\",\"infiniband\",\"0\",\"\",\"0\",\"\"'";
  for (const char* p : kDisabledProtocols) cmd += fmt::format(" --disable-protocol {}", p);
  return cmd;
}

void write_pcap(const std::string& path, PcapLinkType type, const std::vector<Sent>& packets) {
  auto w = PcapWriter::create(path, type);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  int64_t t = 1'700'000'000;
  for (const Sent& s : packets) ASSERT_TRUE(w->write(s.bytes, std::chrono::seconds(t++)).ok());
  ASSERT_TRUE(w->close().ok());
}

// Runs tshark once over `file` and compares every column of every packet.
void check_with_tshark(const TempDir& dir, const std::string& file, const std::vector<Column>& columns,
                       const std::vector<Sent>& packets) {
  const std::string tshark = find_on_path("tshark");
  ASSERT_FALSE(tshark.empty()) << "tshark is not installed (Debian: apt-get install tshark). This cross-check "
                                  "needs it and does not skip.";
  std::string cmd = tshark_command(tshark, dir, file) + " -T fields -E header=n -E separator=/t -E quote=n"
                                                        " -E occurrence=f";
  for (const Column& c : columns) cmd += " -e " + c.field;
  const RunResult r = run(cmd, dir);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;

  std::vector<std::string> lines = split(r.out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  ASSERT_EQ(lines.size(), packets.size()) << r.out << r.err;
  size_t compared = 0;
  for (size_t i = 0; i < packets.size(); ++i) {
    const std::vector<std::string> got = split(lines[i], '\t');
    ASSERT_EQ(got.size(), columns.size()) << lines[i];
    SCOPED_TRACE(fmt::format("packet {}: {}", i + 1, packets[i].what));
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto want = packets[i].expect.find(columns[c].field);
      const std::string expected = want == packets[i].expect.end() ? "" : normalize(want->second, columns[c].kind);
      EXPECT_EQ(normalize(got[c], columns[c].kind), expected) << columns[c].field << " (tshark printed '" << got[c] << "')";
      compared += !expected.empty();
    }
  }
  // Not vacuous: the comparisons above included the fields that were set.
  EXPECT_GT(compared, packets.size() * 15);

  const RunResult expert = run(tshark_command(tshark, dir, file) + " -q -z expert", dir);
  ASSERT_EQ(expert.exit_code, 0) << expert.err;
  EXPECT_EQ(expert.out.find("Errors"), std::string::npos) << expert.out;
  EXPECT_EQ(expert.out.find("Warnings"), std::string::npos) << expert.out;
  EXPECT_EQ(expert.out.find("Malformed"), std::string::npos) << expert.out;
}

// Runs crc_check.py over the pcap and compares its CRCs with ours.
void check_crcs_with_python(const TempDir& dir, const std::string& file, const std::vector<Sent>& packets) {
  const std::string python = find_on_path("python3");
  ASSERT_FALSE(python.empty()) << "python3 is needed for the independent CRC check";
  const std::string script = std::string(SOFTIB_SOURCE_DIR) + "/tests/compat/packet/crc_check.py";
  const RunResult r = run(fmt::format("'{}' '{}' '{}'", python, script, file), dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> lines = split(r.out, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  ASSERT_EQ(lines.size(), packets.size()) << r.out << r.err;
  for (size_t i = 0; i < packets.size(); ++i) {
    const std::string vcrc = packets[i].vcrc ? fmt::format("0x{:04x}", *packets[i].vcrc) : "-";
    EXPECT_EQ(lines[i], fmt::format("{} 0x{:08x} {} OK", i + 1, packets[i].icrc, vcrc)) << packets[i].what;
  }
}

TEST(PacketTshark, RoceV2EverySupportedOpcode) {
  TestRng rng;
  std::vector<Sent> packets;
  for (const OpcodeInfo* info : checked_opcodes())
    for (int i = 0; i < 4; ++i) packets.push_back(roce_packet(rng, *info, i % 2 == 1, payload_size(rng, *info, i)));
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(packets.size(), 4u * 37);  // RC 23, UC 12, UD 2

  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.file("roce_v2.pcap");
  write_pcap(file, PcapLinkType::kRaw, packets);
  std::vector<Column> columns = kRoceColumns;
  columns.insert(columns.end(), kTransportColumns.begin(), kTransportColumns.end());
  check_with_tshark(dir, file, columns, packets);
  check_crcs_with_python(dir, file, packets);
}

TEST(PacketTshark, NativeIbEverySupportedOpcode) {
  TestRng rng;
  std::vector<Sent> packets;
  for (const OpcodeInfo* info : checked_opcodes())
    for (int i = 0; i < 4; ++i) packets.push_back(ib_packet(rng, *info, i % 2 == 1, payload_size(rng, *info, i)));
  ASSERT_FALSE(::testing::Test::HasFailure());

  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.file("infiniband.pcap");
  write_pcap(file, PcapLinkType::kInfiniband, packets);
  // tshark 4.0 cannot read LINKTYPE_INFINIBAND: give it the same file with link type USER0.
  std::ifstream in(file, std::ios::binary);
  Bytes content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(content.size(), 24u);
  ASSERT_EQ(wire::load_le32(&content[20]), 247u);
  wire::store_le32(&content[20], 147);
  const std::string user0 = dir.file("infiniband_user0.pcap");
  FILE* out = std::fopen(user0.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), out), content.size());
  ASSERT_EQ(std::fclose(out), 0);
  std::vector<Column> columns = kIbColumns;
  columns.insert(columns.end(), kTransportColumns.begin(), kTransportColumns.end());
  check_with_tshark(dir, user0, columns, packets);
  check_crcs_with_python(dir, file, packets);  // the LINKTYPE_INFINIBAND original
}

}  // namespace
}  // namespace softib::packet
