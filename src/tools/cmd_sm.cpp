// softib sm: the subnet manager as its own program on an HCA port, through softibd, taking
// OpenSM's options, so that several can run for master/standby failover.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "ipc/client.hpp"
#include "mad/port_info.hpp"
#include "sm/sm_config.hpp"
#include "sm/subnet_manager.hpp"
#include "base/file.hpp"
#include "tools/command.hpp"
#include "tools/host.hpp"
#include "tools/socket_mad_port.hpp"

namespace softib::tools {

namespace {

struct SmArgs {
  std::string guid, engines, partitions, config_file, create_config, log_file, cache_dir;
  int priority = -1, sweep = -1;
  bool once = false;
};

// A log sink appending to opensm's -f file.
class FileSink final : public LogSink {
 public:
  explicit FileSink(FILE* f) : f_(f) {}
  void write(LogLevel level, std::string_view component, std::string_view message) override {
    fmt::print(f_, "{} [{}] {}\n", to_string(level), component, message);
    std::fflush(f_);
  }

 private:
  FILE* f_;
};

int run_sm(const SmArgs& a, CommandContext& ctx) {
  sm::SmConfig config;
  if (!a.config_file.empty()) {
    auto c = sm::read_sm_config(a.config_file, config);
    if (!c) return ctx.fail(c.error());
    config = c->config;
    for (const auto& w : c->warnings) fmt::print(stderr, "softib sm: warning: {}\n", w);
  }
  if (a.priority >= 0) config.sm_priority = static_cast<uint8_t>(a.priority);
  if (a.sweep >= 0) config.sweep_interval = static_cast<uint32_t>(a.sweep);
  if (!a.partitions.empty()) config.partition_config_file = a.partitions;
  if (!a.engines.empty())
    if (auto r = sm::set_sm_option(config, "routing_engine", a.engines); !r) return ctx.fail(r.error());
  if (!a.guid.empty())
    if (auto r = sm::set_sm_option(config, "guid", a.guid); !r) return ctx.fail(r.error());
  if (!a.log_file.empty()) config.log_file = a.log_file;
  if (!a.create_config.empty()) {
    // opensm -c: dump the configuration (the file's, with the command line on top) and exit.
    if (auto r = write_file_atomic(a.create_config, sm::write_sm_config(config)); !r) return ctx.fail(r.error());
    fmt::print("softib sm: configuration written to {}\n", a.create_config);
    return 0;
  }
  auto c = ipc::Connection::open(ctx.fabric, "softib sm");
  if (!c) return ctx.fail(c.error());
  if (config.cache_dir == "/var/cache/opensm") {
    // The fabric's own state directory, so a restarted SM finds its guid2lid.
    auto info = c->fabric_info();
    if (!info) return ctx.fail(info.error());
    config.cache_dir = a.cache_dir.empty() ? info->state_dir + "/sm-" + (a.guid.empty() ? ctx.host : a.guid) : a.cache_dir;
  }
  auto nodes = c->list_nodes();
  if (!nodes) return ctx.fail(nodes.error());
  auto node = a.guid.empty() ? this_host(*nodes, ctx.host) : find_node(*nodes, a.guid);
  if (!node) return ctx.fail(node.error());
  uint8_t port = 1;  // OpenSM binds the first port, or the one whose GUID -g names
  if (!a.guid.empty())
    for (size_t i = 0; i < node->port_guids.size(); ++i)
      if (fmt::format("{:#x}", node->port_guids[i]) == a.guid || fmt::format("{:#018x}", node->port_guids[i]) == a.guid)
        port = static_cast<uint8_t>(i + 1);
  auto mad_port = SocketMadPort::open(*c, node->index, port);
  if (!mad_port) return ctx.fail(mad_port.error());
  std::unique_ptr<FileSink> sink;
  FILE* log_file = nullptr;
  if (!a.log_file.empty()) {
    log_file = std::fopen(a.log_file.c_str(), "a");
    if (!log_file) return ctx.fail(Status::from_errno(errno, fmt::format("cannot open {}", a.log_file)));
    sink = std::make_unique<FileSink>(log_file);
    set_log_sink(sink.get());
  }
  fmt::print("softib sm: on {} port {} (priority {})\n", node->description, port, config.sm_priority);
  std::fflush(stdout);

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  SteadyClock clock;
  sm::SubnetManager manager(**mad_port, clock, config);
  manager.start();
  bool was_up = false;
  std::optional<mad::SmState> said;
  for (;;) {
    manager.poll();
    // OpenSM's console lines on the election's outcome.
    const mad::SmState st = manager.state();
    if ((st == mad::SmState::kMaster || st == mad::SmState::kStandby) && said != st) {
      said = st;
      fmt::print("softib sm: Entering {} state\n", st == mad::SmState::kMaster ? "MASTER" : "STANDBY");
      std::fflush(stdout);
    }
    // As OpenSM says on its console each time a sweep brings the subnet up.
    const bool up = manager.state() == mad::SmState::kMaster && !manager.sweeping() && manager.subnet_up();
    if (up && !was_up && !a.once) {
      fmt::print("softib sm: SUBNET UP\n");
      std::fflush(stdout);
    }
    was_up = up;
    if (a.once && !manager.sweeping() && (manager.subnet_up() || manager.state() != mad::SmState::kDiscovering)) {
      fmt::print("softib sm: {}\n", manager.subnet_up() ? "SUBNET UP" : "sweep done");
      break;
    }
    int ms = -1;
    if (auto t = manager.next_deadline())
      ms = static_cast<int>(std::clamp<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(*t - clock.now()).count(), 0, 60000));
    pollfd p[2] = {{c->fd(), POLLIN, 0}, {sig, POLLIN, 0}};
    if (::poll(p, 2, ms) < 0 && errno != EINTR) return ctx.fail(Status::from_errno(errno, "poll"));
    if (p[1].revents) break;
    if (p[0].revents & (POLLHUP | POLLERR)) return ctx.fail(Status(Code::kUnavailable, "softibd went away"));
  }
  set_log_sink(nullptr);
  if (log_file) std::fclose(log_file);
  ::close(sig);
  return 0;
}

}  // namespace

void register_sm(CLI::App& app, CommandContext& ctx) {
  auto a = std::make_shared<SmArgs>();
  CLI::App* cmd = app.add_subcommand("sm", "Run a subnet manager on an HCA port of the fabric (OpenSM's options)");
  cmd->add_option("-g,--guid", a->guid, "the port GUID to bind (default: this host's first port)");
  cmd->add_option("-p,--priority", a->priority, "SM priority 0-15 (higher wins the election)")->check(CLI::Range(0, 15));
  cmd->add_option("-R,--routing_engine", a->engines, "routing engines, e.g. ftree,updn");
  cmd->add_option("-P,--Pconfig", a->partitions, "partitions.conf");
  cmd->add_option("-F,--config", a->config_file, "opensm.conf");
  cmd->add_option("-c,--create-config", a->create_config, "write the configuration to this file and exit");
  cmd->add_option("-s,--sweep", a->sweep, "sweep interval in seconds (0: no periodic sweeps)")->check(CLI::Range(0, 86400));
  cmd->add_flag("-o,--once", a->once, "one sweep, then exit");
  cmd->add_option("-f,--log_file", a->log_file, "log file");
  cmd->add_option("--cache-dir", a->cache_dir, "where guid2lid lives (default: the fabric's state directory)");
  cmd->callback([a, &ctx] { ctx.exit_code = run_sm(*a, ctx); });
}

}  // namespace softib::tools
