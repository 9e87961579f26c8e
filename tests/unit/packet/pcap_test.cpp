// PcapWriter: the file header and records byte for byte, snapshot-length cuts, and I/O
// failures reported as Statuses.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "packet/pcap.hpp"

namespace softib::packet {
namespace {

using Bytes = std::vector<uint8_t>;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "softib_pcap_XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::remove(file("a.pcap").c_str());
    ::rmdir(path_.c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  bool ok() const { return !path_.empty(); }

 private:
  std::string path_;
};

Bytes read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint32_t le32(const Bytes& b, size_t at) {
  return uint32_t{b[at]} | uint32_t{b[at + 1]} << 8 | uint32_t{b[at + 2]} << 16 | uint32_t{b[at + 3]} << 24;
}

TEST(PacketPcapWriter, FileHeaderAndRecords) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.pcap");
  auto w = PcapWriter::create(path, PcapLinkType::kInfiniband);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  const Bytes p1 = {1, 2, 3, 4, 5};
  const Bytes p2 = {9};
  ASSERT_TRUE(w->write(p1, 1'700'000'000s + 123'456'789ns).ok());
  ASSERT_TRUE(w->write(p2, 2s).ok());
  EXPECT_EQ(w->records(), 2u);
  ASSERT_TRUE(w->close().ok());

  const Bytes f = read_all(path);
  ASSERT_EQ(f.size(), 24u + 16 + 5 + 16 + 1);
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 4), (Bytes{0xD4, 0xC3, 0xB2, 0xA1}));  // little-endian magic
  EXPECT_EQ(f[4], 2);
  EXPECT_EQ(f[6], 4);
  EXPECT_EQ(le32(f, 8), 0u);   // thiszone
  EXPECT_EQ(le32(f, 12), 0u);  // sigfigs
  EXPECT_EQ(le32(f, 16), 65535u);
  EXPECT_EQ(le32(f, 20), 247u);
  EXPECT_EQ(le32(f, 24), 1'700'000'000u);
  EXPECT_EQ(le32(f, 28), 123'456u);  // microseconds
  EXPECT_EQ(le32(f, 32), 5u);
  EXPECT_EQ(le32(f, 36), 5u);
  EXPECT_EQ(Bytes(f.begin() + 40, f.begin() + 45), p1);
  EXPECT_EQ(le32(f, 45), 2u);
  EXPECT_EQ(le32(f, 49), 0u);
  EXPECT_EQ(le32(f, 53), 1u);
  EXPECT_EQ(f[61], 9);
}

TEST(PacketPcapWriter, RawLinkTypeAndSnapshotLength) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("a.pcap");
  auto w = PcapWriter::create(path, PcapLinkType::kRaw, 4);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->link_type(), PcapLinkType::kRaw);
  ASSERT_TRUE(w->write(Bytes{1, 2, 3, 4, 5, 6}, 0s).ok());
  ASSERT_TRUE(w->close().ok());
  const Bytes f = read_all(path);
  ASSERT_EQ(f.size(), 24u + 16 + 4);
  EXPECT_EQ(le32(f, 16), 4u);
  EXPECT_EQ(le32(f, 20), 101u);
  EXPECT_EQ(le32(f, 32), 4u);  // captured
  EXPECT_EQ(le32(f, 36), 6u);  // on the wire
  EXPECT_EQ(Bytes(f.begin() + 40, f.end()), (Bytes{1, 2, 3, 4}));
}

TEST(PacketPcapWriter, IoFailuresAreStatuses) {
  auto missing = PcapWriter::create("/nonexistent-softib-dir/x.pcap", PcapLinkType::kRaw);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_EQ(missing.error().to_errno(), ENOENT);

  // /dev/full accepts the open and fails every write with ENOSPC; the buffered header
  // surfaces at the latest on flush.
  auto full = PcapWriter::create("/dev/full", PcapLinkType::kRaw);
  ASSERT_TRUE(full.ok()) << full.error().to_string();
  const Bytes big(70000, 1);
  Status s = full->write(big, 0s);
  if (s.ok()) s = full->flush();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.to_errno(), ENOSPC) << s.to_string();

  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto w = PcapWriter::create(dir.file("a.pcap"), PcapLinkType::kRaw);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->close().ok());
  EXPECT_EQ(w->write(Bytes{1}, 0s).code(), Code::kInvalidArgument);
  EXPECT_FALSE(w->close().ok());
  EXPECT_EQ(w->write(Bytes{1}, -1s).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace softib::packet
