// softib run [--fabric F] [--device D] -- CMD ARGS...: runs an unmodified rdma-core program
// on softib. It puts softib's drop-in libraries (libibverbs.so.1, ../lib beside this binary)
// first on LD_LIBRARY_PATH, says which fabric and CA the program stands for, and execs it.
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ipc/client.hpp"
#include "tools/command.hpp"

namespace softib::tools {
namespace {

// Where the drop-in libraries are: SOFTIB_LIB_DIR, else ../lib beside this executable (the
// build tree's layout: build/<preset>/bin/softib and build/<preset>/lib/libibverbs.so.1).
Result<std::string> library_dir() {
  if (const char* d = std::getenv("SOFTIB_LIB_DIR"); d != nullptr && *d != '\0') return std::string(d);
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto dir = self.parent_path().parent_path() / "lib";
    if (std::filesystem::exists(dir / "libibverbs.so.1", ec)) return dir.string();
  }
  return Status(Code::kNotFound,
                "softib's libibverbs.so.1 is not beside this softib (../lib); build it (make release) or set "
                "SOFTIB_LIB_DIR");
}

// A sanitizer build's libraries need the sanitizer runtime loaded first in the programs they
// go into (which were not built with it): this softib is such a build, so its own runtime
// libraries are the ones to preload.
std::string sanitizer_preload() {
#if defined(__SANITIZE_ADDRESS__)
  std::vector<std::string> libs;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        const std::string base = std::filesystem::path(name).filename().string();
        if (base.rfind("libasan.so", 0) == 0 || base.rfind("libubsan.so", 0) == 0)
          static_cast<std::vector<std::string>*>(data)->push_back(name);
        return 0;
      },
      &libs);
  std::string out;
  for (const auto& l : libs) out += (out.empty() ? "" : ":") + l;
  return out;
#else
  return {};
#endif
}

// --device: a CA by its verbs name among all of the fabric's CAs (softib0, softib1, ... in
// fabric order), its node id, description or GUID. Returns the node id SOFTIB_HOST names.
Result<std::string> resolve_device(const std::string& fabric, const std::string& device) {
  auto conn = ipc::Connection::open(fabric, "softib run");
  if (!conn) return Err{conn.error()};
  auto cas = conn->list_nodes(ipc::Connection::NodeFilter::kCas);
  if (!cas) return Err{cas.error()};
  for (size_t i = 0; i < cas->size(); ++i) {
    const auto& n = (*cas)[i];
    if (device == fmt::format("softib{}", i) || device == n.id || device == n.description ||
        device == fmt::format("{:#018x}", n.node_guid) || device == fmt::format("{:#x}", n.node_guid))
      return n.id;
  }
  return Status(Code::kNotFound, fmt::format("the fabric has no channel adapter \"{}\" (softib hosts lists them)", device));
}

void set_env(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

}  // namespace

void register_run(CLI::App& app, CommandContext& ctx) {
  auto device = std::make_shared<std::string>();
  auto fabric = std::make_shared<std::string>();
  auto command = std::make_shared<std::vector<std::string>>();
  CLI::App* run = app.add_subcommand("run", "Run an unmodified rdma-core program (ibv_*, perftest, qperf) on softib");
  run->add_option("--fabric", *fabric, "which fabric (default: SOFTIB_FABRIC or \"default\")");
  run->add_option("-d,--device", *device,
                  "the CA the program stands for: softibN, a node name, description or GUID (default: --host)");
  run->add_option("COMMAND", *command, "the program and its arguments (after --)")->required();
  run->callback([device, fabric, command, &ctx] {
    if (!fabric->empty()) ctx.fabric = *fabric;
    auto libdir = library_dir();
    if (!libdir) return (void)ctx.fail(libdir.error());
    // The fabric must be up: say so now rather than let the program fail to find a device.
    auto conn = ipc::Connection::open(ctx.fabric, "softib run");
    if (!conn) return (void)ctx.fail(conn.error());
    std::string host = ctx.host;
    if (!device->empty()) {
      auto h = resolve_device(ctx.fabric, *device);
      if (!h) return (void)ctx.fail(h.error());
      host = *h;
    }
    std::string path = *libdir;
    if (const char* old = std::getenv("LD_LIBRARY_PATH"); old != nullptr && *old != '\0') path += std::string(":") + old;
    set_env("LD_LIBRARY_PATH", path);
    if (!ctx.fabric.empty()) set_env("SOFTIB_FABRIC", ctx.fabric);
    if (!host.empty()) set_env("SOFTIB_HOST", host);
    if (const std::string pre = sanitizer_preload(); !pre.empty()) {
      const char* old = std::getenv("LD_PRELOAD");
      set_env("LD_PRELOAD", old != nullptr && *old != '\0' ? pre + ":" + old : pre);
    }
    std::vector<char*> argv;
    for (auto& a : *command) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    // As env(1): 127 when the program is not there, 126 when it cannot be run.
    const int err = errno;
    fmt::print(stderr, "softib run: {}: {}\n", (*command)[0], std::strerror(err));
    ctx.exit_code = err == ENOENT ? 127 : 126;
  });
}

}  // namespace softib::tools
