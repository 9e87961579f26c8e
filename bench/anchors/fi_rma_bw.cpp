// Anchor: libfabric's shared-memory provider, RMA bandwidth between two processes (issue 5
// names fabtests' `fi_rma_bw -p shm`, which Debian does not package). Our own small program
// on libfabric: an FI_EP_RDM endpoint with FI_RMA on the provider given by --provider
// (default "shm") in each of two processes (fork; addresses and keys go through a
// socketpair), registered buffers, and for each size a window of outstanding fi_write (or
// fi_read) operations, every one with a completion, all to the same remote buffer.
//
// The parent is the initiator; the child, the target, only drives its provider's progress
// (fi_cq_read) until told to stop, as a verbs target would leave it to the HCA. After each
// size the bytes are checked: the target's buffer after a write, the initiator's after a read.
//
//   anchor_fi_rma_bw [--ops write,read] [--sizes 64,4096,...] [--iters K | --bytes B]
//                    [--window W] [--provider shm]
//   {"bench":"fi_rma_bw","provider":"shm","op":"write","size":N,"iters":K,"window":W,
//    "MBps":X,"usec_per_op":Y,"verified":true}                 one line per op and size
// MB/s is 10^6 bytes of payload per second. Without --iters, each size moves about --bytes
// (default 1 GiB) in 100..100000 operations.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<std::string> ops{"write", "read"};
  std::vector<size_t> sizes;
  uint64_t iters = 0;  // 0: from --bytes
  uint64_t bytes = uint64_t{1} << 30;
  uint64_t window = 64;
  std::string provider = "shm";
};

constexpr anchor::Cli kCli{"fi_rma_bw",
                           "usage: anchor_fi_rma_bw [--ops write,read] [--sizes 64,4096,...] "
                           "[--iters K | --bytes B] [--window W] [--provider shm]"};

[[noreturn]] void die(const std::string& what, long rc) {
  fmt::print(stderr, "fi_rma_bw[{}]: {}: {} ({})\n", getpid(), what, fi_strerror(static_cast<int>(-rc)), rc);
  std::exit(1);
}

void check(const std::string& what, long rc) {
  if (rc != 0) die(what, rc);
}

Options parse(int argc, char** argv) {
  Options o;
  for (size_t s = 64; s <= (size_t{4} << 20); s *= 4) o.sizes.push_back(s);
  kCli.each(argc, argv, {}, [&](const std::string& a, const std::string& v) {
    if (a == "--ops") {
      o.ops = anchor::Cli::split(v);
      for (auto& op : o.ops)
        if (op != "write" && op != "read") kCli.usage("--ops takes write and/or read");
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (auto& s : anchor::Cli::split(v)) o.sizes.push_back(kCli.positive(s, "size"));
    } else if (a == "--iters") {
      o.iters = kCli.positive(v);
    } else if (a == "--bytes") {
      o.bytes = kCli.positive(v);
    } else if (a == "--window") {
      o.window = kCli.positive(v);
    } else if (a == "--provider") {
      o.provider = v;
    } else {
      return false;
    }
    return true;
  });
  return o;
}

// Byte i of the initiator's write source and of the target's read source.
unsigned char pattern_a(size_t i) { return static_cast<unsigned char>((i * 131 + 7) & 0xff); }
unsigned char pattern_b(size_t i) { return static_cast<unsigned char>((i * 151 + 91) & 0xff); }

// What each side tells the other once its endpoint is up.
struct Card {
  uint64_t name_len = 0;
  unsigned char name[256] = {};
  uint64_t buf_addr = 0;  // the target's write destination / the initiator's unused
  uint64_t buf_key = 0;
  uint64_t src_addr = 0;  // the target's read source
  uint64_t src_key = 0;
};

void write_all(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  while (n > 0) {
    const ssize_t k = ::write(fd, b, n);
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      fmt::print(stderr, "fi_rma_bw[{}]: control socket write failed\n", getpid());
      std::exit(1);
    }
    b += k;
    n -= static_cast<size_t>(k);
  }
}

void read_all(int fd, void* p, size_t n) {
  auto* b = static_cast<unsigned char*>(p);
  while (n > 0) {
    const ssize_t k = ::read(fd, b, n);
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      fmt::print(stderr, "fi_rma_bw[{}]: control socket closed\n", getpid());
      std::exit(1);
    }
    b += k;
    n -= static_cast<size_t>(k);
  }
}

// Control messages from the initiator to the target.
struct Command {
  char op = 0;  // 'Z' zero [0,size) of the write destination, 'V' verify it, 'Q' quit
  uint64_t size = 0;
};

struct Fabric {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  std::vector<fid_mr*> mrs;

  explicit Fabric(const std::string& provider) {
    fi_info* hints = fi_allocinfo();
    if (hints == nullptr) die("fi_allocinfo", -FI_ENOMEM);
    hints->caps = FI_RMA;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;  // we pass a fi_context2 with every operation
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider.c_str());
    check("fi_getinfo(" + provider + ")", fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info));
    fi_freeinfo(hints);
    check("fi_fabric", fi_fabric(info->fabric_attr, &fabric, nullptr));
    check("fi_domain", fi_domain(fabric, info, &domain, nullptr));
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check("fi_av_open", fi_av_open(domain, &av_attr, &av, nullptr));
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 1024;
    check("fi_cq_open", fi_cq_open(domain, &cq_attr, &cq, nullptr));
    check("fi_endpoint", fi_endpoint(domain, info, &ep, nullptr));
    check("fi_ep_bind(av)", fi_ep_bind(ep, &av->fid, 0));
    check("fi_ep_bind(cq)", fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    check("fi_enable", fi_enable(ep));
  }

  uint64_t mr_mode() const { return static_cast<uint64_t>(info->domain_attr->mr_mode); }

  fid_mr* reg(void* buf, size_t len, uint64_t access, uint64_t requested_key) {
    fid_mr* mr = nullptr;
    check("fi_mr_reg", fi_mr_reg(domain, buf, len, access, 0, requested_key, 0, &mr, nullptr));
    if ((mr_mode() & FI_MR_ENDPOINT) != 0) {
      check("fi_mr_bind", fi_mr_bind(mr, &ep->fid, 0));
      check("fi_mr_enable", fi_mr_enable(mr));
    }
    mrs.push_back(mr);
    return mr;
  }

  // The address a peer names for byte 0 of `buf` (FI_MR_VIRT_ADDR: the virtual address).
  uint64_t remote_addr(const void* buf) const {
    return (mr_mode() & FI_MR_VIRT_ADDR) != 0 ? reinterpret_cast<uint64_t>(buf) : 0;
  }

  Card card() const {
    Card c;
    size_t len = sizeof c.name;
    check("fi_getname", fi_getname(&ep->fid, c.name, &len));
    c.name_len = len;
    return c;
  }

  fi_addr_t insert(const Card& peer) {
    fi_addr_t a = 0;
    const int n = fi_av_insert(av, peer.name, 1, &a, 0, nullptr);
    if (n != 1) die("fi_av_insert", n < 0 ? n : -FI_EINVAL);
    return a;
  }

  // Reads up to `max` completions; returns how many, dies on an error completion.
  size_t reap(fi_cq_entry* entries, size_t max) {
    const ssize_t n = fi_cq_read(cq, entries, max);
    if (n > 0) return static_cast<size_t>(n);
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq, &err, 0);
      fmt::print(stderr, "fi_rma_bw[{}]: completion error: {} ({})\n", getpid(),
                 fi_cq_strerror(cq, err.prov_errno, err.err_data, nullptr, 0), fi_strerror(err.err));
      std::exit(1);
    }
    die("fi_cq_read", n);
  }

  ~Fabric() {
    if (ep != nullptr) fi_close(&ep->fid);
    for (auto* mr : mrs) fi_close(&mr->fid);
    if (cq != nullptr) fi_close(&cq->fid);
    if (av != nullptr) fi_close(&av->fid);
    if (domain != nullptr) fi_close(&domain->fid);
    if (fabric != nullptr) fi_close(&fabric->fid);
    if (info != nullptr) fi_freeinfo(info);
  }
};

unsigned char* alloc_buffer(size_t size) {
  const size_t alloc = (size + 4095) / 4096 * 4096;
  auto* b = static_cast<unsigned char*>(std::aligned_alloc(4096, alloc));
  if (b == nullptr) {
    fmt::print(stderr, "fi_rma_bw: out of memory\n");
    std::exit(1);
  }
  std::memset(b, 0, alloc);
  return b;
}

int run_target(const Options& o, int sock, size_t max_size) {
  unsigned char* dst = alloc_buffer(max_size);  // written by the initiator
  unsigned char* src = alloc_buffer(max_size);  // read by the initiator
  for (size_t i = 0; i < max_size; ++i) src[i] = pattern_b(i);
  {
    Fabric f(o.provider);  // closed before the buffers it registered are freed
    fid_mr* dst_mr = f.reg(dst, max_size, FI_REMOTE_WRITE, 1);
    fid_mr* src_mr = f.reg(src, max_size, FI_REMOTE_READ, 2);

    Card mine = f.card();
    mine.buf_addr = f.remote_addr(dst);
    mine.buf_key = fi_mr_key(dst_mr);
    mine.src_addr = f.remote_addr(src);
    mine.src_key = fi_mr_key(src_mr);
    write_all(sock, &mine, sizeof mine);
    Card peer;
    read_all(sock, &peer, sizeof peer);
    f.insert(peer);

    fi_cq_entry entries[16];
    pollfd p{sock, POLLIN, 0};
    for (uint64_t turn = 1;; ++turn) {
      f.reap(entries, 16);  // drives the provider's progress
      if ((turn & 255) != 0 || poll(&p, 1, 0) <= 0) continue;
      Command c;
      read_all(sock, &c, sizeof c);
      if (c.op == 'Q') break;
      const size_t n = std::min<size_t>(c.size, max_size);
      unsigned char ok = 1;
      if (c.op == 'Z') {
        std::memset(dst, 0, n);
      } else {
        for (size_t i = 0; i < n && ok != 0; ++i) ok = dst[i] == pattern_a(i) ? 1 : 0;
      }
      write_all(sock, &ok, 1);
    }
  }
  std::free(dst);
  std::free(src);
  return 0;
}

bool ask_target(int sock, char op, size_t size) {
  Command c;
  c.op = op;
  c.size = size;
  write_all(sock, &c, sizeof c);
  unsigned char ok = 0;
  read_all(sock, &ok, 1);
  return ok != 0;
}

int run_initiator(const Options& o, int sock, size_t max_size) {
  unsigned char* src = alloc_buffer(max_size);  // written to the target
  unsigned char* dst = alloc_buffer(max_size);  // read from the target
  for (size_t i = 0; i < max_size; ++i) src[i] = pattern_a(i);
  bool all_ok = true;
  {
    Fabric f(o.provider);
    fid_mr* src_mr = f.reg(src, max_size, FI_WRITE, 3);
    fid_mr* dst_mr = f.reg(dst, max_size, FI_READ, 4);
    Card mine = f.card();
    write_all(sock, &mine, sizeof mine);
    Card peer;
    read_all(sock, &peer, sizeof peer);
    const fi_addr_t target = f.insert(peer);

    std::vector<fi_context2> contexts(o.window);
    fi_cq_entry entries[64];
    for (const auto& op : o.ops) {
      const bool is_write = op == "write";
      for (const size_t size : o.sizes) {
        const uint64_t iters =
            o.iters != 0 ? o.iters : std::clamp<uint64_t>(o.bytes / size, 100, 100000);
        const uint64_t warmup = std::min<uint64_t>(iters / 10 + 1, 1000);
        if (is_write) {
          ask_target(sock, 'Z', size);
        } else {
          std::memset(dst, 0, size);
        }
        // Posts `count` operations with at most o.window outstanding; returns when all complete.
        auto transfer = [&](uint64_t count) {
          uint64_t posted = 0, completed = 0;
          while (completed < count) {
            while (posted < count && posted - completed < o.window) {
              void* ctx = &contexts[posted % o.window];
              const ssize_t rc =
                  is_write ? fi_write(f.ep, src, size, fi_mr_desc(src_mr), target, peer.buf_addr, peer.buf_key, ctx)
                           : fi_read(f.ep, dst, size, fi_mr_desc(dst_mr), target, peer.src_addr, peer.src_key, ctx);
              if (rc == -FI_EAGAIN) break;  // the provider's queue is full: reap first
              if (rc != 0) die(is_write ? "fi_write" : "fi_read", rc);
              ++posted;
            }
            completed += f.reap(entries, 64);
          }
        };
        transfer(warmup);
        const auto start = Clock::now();
        transfer(iters);
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();

        bool ok = true;
        if (is_write) {
          ok = ask_target(sock, 'V', size);
        } else {
          for (size_t i = 0; i < size && ok; ++i) ok = dst[i] == pattern_b(i);
        }
        all_ok = all_ok && ok;
        fmt::print(
            "{{\"bench\":\"fi_rma_bw\",\"provider\":\"{}\",\"op\":\"{}\",\"size\":{},\"iters\":{},\"window\":{},"
            "\"MBps\":{:.1f},\"usec_per_op\":{:.3f},\"verified\":{}}}\n",
            o.provider, op, size, iters, o.window, static_cast<double>(iters) * static_cast<double>(size) / us,
            us / static_cast<double>(iters), ok);
        std::fflush(stdout);
      }
    }
    Command quit;
    quit.op = 'Q';
    write_all(sock, &quit, sizeof quit);
  }
  std::free(src);
  std::free(dst);
  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    fmt::print(stderr, "fi_rma_bw: socketpair: {}\n", std::strerror(errno));
    return 1;
  }
  // Fork before libfabric is touched: each process opens its own provider state.
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "fi_rma_bw: fork: {}\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    // SIGTERM, not SIGKILL: libfabric's shm provider unlinks its region on SIGTERM.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    close(sv[0]);
    const int rc = run_target(o, sv[1], max_size);
    std::fflush(stdout);
    _exit(rc);
  }
  close(sv[1]);
  const int rc = run_initiator(o, sv[0], max_size);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "fi_rma_bw: the target process failed (status {:#x})\n", status);
    return 1;
  }
  return rc;
}
