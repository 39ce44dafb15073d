// Subcommands of the `pebench` binary. Each command file registers itself
// (PEBENCH_REGISTER_COMMAND) so adding one needs no edit to main or app.cc.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace pebench {

class Command {
 public:
  virtual ~Command() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // Adds the command's options to its subcommand.
  virtual void configure(CLI::App& app) = 0;
  // Runs after a successful parse; returns the exit code. Throws UsageError
  // for bad input (exit 2) and anything else for failures (exit 1).
  virtual int run(CLI::App& app) = 0;
};

std::vector<std::unique_ptr<Command>>& command_registry();

template <typename T>
struct CommandRegistrar {
  CommandRegistrar() { command_registry().push_back(std::make_unique<T>()); }
};

// The arguments pebench was started with (argv[0] as "pebench"), for reports.
const std::vector<std::string>& command_line();

// The whole CLI; main() only calls this.
int pebench_main(int argc, char** argv);

}  // namespace pebench

#define PEBENCH_REGISTER_COMMAND(Type) \
  static const ::pebench::CommandRegistrar<Type> pebench_command_##Type
