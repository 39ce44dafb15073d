#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <new>

#include "analysis/printable.h"
#include "analysis/report_file.h"
#include "cli/command.h"
#include "cli/crash_report.h"
#include "cli/option_checks.h"
#include "harness/contract/errors.h"
#include "harness/output/build_info.h"
#include "io/checked_number.h"
#include "io/input_file.h"
#include "io/output_file.h"
#include "runtime/status.h"

namespace pebench {

std::vector<std::unique_ptr<Command>>& command_registry() {
  static std::vector<std::unique_ptr<Command>> commands;
  return commands;
}

namespace {
std::vector<std::string>& mutable_command_line() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

const std::vector<std::string>& command_line() { return mutable_command_line(); }

namespace {

// Everything a command printed must have reached stdout: a full disk or a
// closed pipe there is an error (exit 1), not a silent success.
int checked_stdout(const std::string& command, int code) {
  std::string error;
  if (stdout_ok(error)) return code;
  std::fprintf(stderr, "pebench %s: error: %s\n", command.c_str(), error.c_str());
  return code == 0 ? 1 : code;
}

}  // namespace

int pebench_main(int argc, char** argv) {
  install_crash_report();
  // A closed stdout pipe is a write error (EPIPE) that checked_stdout reports,
  // not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  mutable_command_line().assign({"pebench"});
  for (int i = 1; i < argc; ++i) mutable_command_line().push_back(argv[i]);
  CLI::App app{"pebench: Vulkan compute benchmarks for Transformer positional encodings and attention", "pebench"};
  app.set_version_flag("--version", fmt::format("pebench {} ({})", build_info().version, build_info().git_commit));
  app.require_subcommand(1);
  auto& commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a->name() < b->name(); });
  std::vector<std::pair<CLI::App*, Command*>> subs;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c->name(), c->description());
    c->configure(*sub);
    subs.emplace_back(sub, c.get());
  }
  // CLI11 would only say "A subcommand is required": name the bad word instead.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const auto& c) { return c->name() == argv[1]; })) {
    std::string names;
    for (const auto& c : commands) names += (names.empty() ? "" : ", ") + c->name();
    std::fprintf(stderr, "pebench: error: unknown command '%s' (commands: %s)\n", printable(argv[1]).c_str(),
                 names.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pebench: error: %s\n", printable(e.what()).c_str());
    return 2;
  }
  for (auto& [sub, cmd] : subs) {
    if (!sub->parsed()) continue;
    try {
      reject_empty_values(*sub);
      return checked_stdout(cmd->name(), cmd->run(*sub));
    } catch (const UsageError& e) {
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 2;
    } catch (const ReportError& e) {  // a report given on the command line is unreadable or malformed
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 2;
    } catch (const InputFileError& e) {  // a file named on the command line cannot be read as one
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 2;
    } catch (const OutputPathError& e) {  // a path this run may not write (io/output_file.h)
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 2;
    } catch (const BadValueError& e) {  // a number out of range (io/checked_number.h)
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 2;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "pebench %s: error: out of host memory\n", cmd->name().c_str());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pebench %s: error: %s\n", cmd->name().c_str(), printable(e.what()).c_str());
      return 1;
    }
  }
  return 2;
}

}  // namespace pebench
